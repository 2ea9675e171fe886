"""What the fallback chain (cascade.turns.chain) and a provider (cascade.turns.providers) say
to each other: what is asked, how one provider asks it, what comes back, and how a call fails.
No import of any client: a run served from the reply cache loads none.
"""
from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from msgspec import Struct

from cascade.turns.settings import Settings

LOCAL_PREFIX = "cascade-local/"
LOCAL_MODEL = LOCAL_PREFIX + "smollm2"


def holds_fields(model: str) -> bool:
    """Whether ``model``'s replies can hold fields beyond a comment and a vote: the embedded
    model's cannot (its grammar, cascade.turns.local.review_grammar, holds those two only)."""
    return not model.startswith(LOCAL_PREFIX)


class ModelError(Exception):
    """A call failed for good; ``str()`` is one line naming the cause."""


class ProviderFailure(Exception):
    """A provider's own failure, already said in one line (a command that exited 2, a reply
    past the size cap): described as it is, retried when ``retryable``."""

    def __init__(self, message: str, *, retryable: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable


def past_limit(said: str, limit: int) -> ProviderFailure:
    """An answer past ``limit`` bytes (CASCADE_MAX_REPLY_BYTES), not read: ``said`` names
    what went past it ("... wrote more than")."""
    mib = limit / (1024 * 1024)
    size = f"{mib:g} MiB" if mib >= 1 else f"{limit} bytes"
    return ProviderFailure(f"{said} {size}: not read (CASCADE_MAX_REPLY_BYTES sets the limit)")


class Completion(Struct):
    text: str
    model: str  # the model that answered (after fallbacks)
    prompt_tokens: int
    completion_tokens: int
    cost: float | None
    attempts: int
    tokens_known: bool = True  # False: the provider cannot say (a command's reply)


class Target(Struct, frozen=True):
    """One link of the chain, resolved: the ``name`` it was given (a model string or a
    declared provider's name), the registered ``provider`` that asks it, the ``model`` string
    passed on (a declared entry's, or ``name``), and the declared entry's options (a
    command's argv, how it takes the system prompt, ...; empty for a bare model string)."""

    name: str
    provider: str
    model: str
    options: tuple[tuple[str, Any], ...] = ()

    def option(self, key: str, default: Any = None) -> Any:
        return dict(self.options).get(key, default)


class Ask(Struct, frozen=True):
    """What every model of the chain is asked."""

    messages: list[dict[str, str]]
    settings: Settings
    max_tokens: int
    on_text: Any = None  # the reply streams: each piece of text passed to it
    secrets: tuple[str, ...] = ()  # the configured credentials: never in what is shown


class Route(Struct, frozen=True):
    """How one model of the chain is asked: ``request()`` makes the call, ``finish(response,
    attempts)`` reads it; ``endpoint`` and ``key_hint`` go into a failure's message."""

    request: Callable[[], Awaitable[Any]]
    finish: Callable[[Any, int], Completion]
    endpoint: str | None = None
    key_hint: str | None = None
