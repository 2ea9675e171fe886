"""Turn settings from the environment, validated: a bad value names its variable."""
from __future__ import annotations

import os
from pathlib import Path

from msgspec import Struct, field
from msgspec.structs import replace

from cascade.config.providers import ProviderTable, load_providers
from cascade.base.env import number
from cascade.base.errors import CascadeError

MAX_REPLY_BYTES = 4 * 1024 * 1024


class Settings(Struct):
    model: str | None = None  # CASCADE_MODEL
    api_base: str | None = None  # CASCADE_API_BASE
    api_key: str | None = None  # CASCADE_API_KEY
    fallbacks: list[str] = field(default_factory=list)  # CASCADE_FALLBACK_MODELS, comma-separated
    timeout: float = 120.0  # CASCADE_TIMEOUT: seconds per call
    retries: int = 2  # CASCADE_RETRIES: on 429, 5xx, timeouts, connection errors
    backoff: float = 1.0  # CASCADE_BACKOFF: first retry delay, doubling
    concurrency: int = 8  # CASCADE_CONCURRENCY: calls in flight at once
    context_tokens: int = 6000  # CASCADE_CONTEXT_TOKENS: ledger budget in the prompt
    source_tokens: int = 8000  # CASCADE_SOURCE_TOKENS: document budget in the prompt
    reply_tokens: int = 1024  # CASCADE_REPLY_TOKENS: max_tokens per reply
    max_calls: int | None = None  # CASCADE_MAX_CALLS per run
    max_tokens: int | None = None  # CASCADE_MAX_TOKENS per run (prompt + completion)
    max_cost: float | None = None  # CASCADE_MAX_COST per run, in dollars
    http: str = "auto"  # CASCADE_HTTP: "litellm" sends every model through litellm
    max_reply_bytes: int = MAX_REPLY_BYTES  # CASCADE_MAX_REPLY_BYTES: the most of an answer read
    # the providers declared by name (.cascade/providers.yml, the user's providers.yml)
    providers: ProviderTable = field(default_factory=ProviderTable)

    def chain(self, *models: str) -> list[str]:
        """The models a call tries, in order, each once: ``models`` (the role's own), then
        CASCADE_FALLBACK_MODELS, then the declared providers' ``fallback:``."""
        return list(dict.fromkeys([*models, *self.fallbacks, *self.providers.fallback]))

    def declared_bases(self) -> tuple[str, ...]:
        """The base URLs the declared providers give (a password in one is a credential)."""
        return tuple(str(dict(e.options)["api_base"]) for e in self.providers.entries
                     if "api_base" in dict(e.options))

    def model_string(self, name: str) -> str:
        """What ``name`` asks: a declared provider's model string or command line (what its
        replies are cached by and what decides their form), else ``name`` itself."""
        entry = self.providers.entry(name)
        if entry is None:
            return name
        return entry.command if entry.command is not None else entry.model or name

    def for_model(self, model: str) -> Settings:
        """The embedded model reads slowly on a laptop CPU: give it a small prompt unless the
        budgets were set explicitly."""
        if not self.model_string(model).startswith("cascade-local/"):
            return self
        env = os.environ
        return replace(
            self,
            context_tokens=self.context_tokens if env.get("CASCADE_CONTEXT_TOKENS") else 900,
            source_tokens=self.source_tokens if env.get("CASCADE_SOURCE_TOKENS") else 900,
            concurrency=1)

    @classmethod
    def from_env(cls, root: Path | None = None) -> Settings:
        """The settings the environment gives, with the providers declared in the
        repository at ``root`` (None: the user's own only)."""
        env = os.environ
        return cls(
            model=env.get("CASCADE_MODEL", "").strip() or None,
            api_base=env.get("CASCADE_API_BASE", "").strip() or None,
            api_key=env.get("CASCADE_API_KEY", "").strip() or None,
            fallbacks=[m.strip() for m in env.get("CASCADE_FALLBACK_MODELS", "").split(",")
                       if m.strip()],
            timeout=number("CASCADE_TIMEOUT", 120.0, float, 0.1),
            retries=int(number("CASCADE_RETRIES", 2, int, 0)),
            backoff=number("CASCADE_BACKOFF", 1.0, float, 0),
            concurrency=int(number("CASCADE_CONCURRENCY", 8, int, 1)),
            context_tokens=int(number("CASCADE_CONTEXT_TOKENS", 6000, int, 200)),
            source_tokens=int(number("CASCADE_SOURCE_TOKENS", 8000, int, 200)),
            reply_tokens=int(number("CASCADE_REPLY_TOKENS", 1024, int, 16)),
            max_calls=number("CASCADE_MAX_CALLS", None, int, 0),  # an int, or None
            max_tokens=number("CASCADE_MAX_TOKENS", None, int, 0),
            max_cost=number("CASCADE_MAX_COST", None, float, 0),
            http=_choice("CASCADE_HTTP", ("auto", "litellm")),
            max_reply_bytes=int(number("CASCADE_MAX_REPLY_BYTES", MAX_REPLY_BYTES, int, 1024)),
            providers=load_providers(root),
        )


def _choice(name: str, choices: tuple[str, ...]) -> str:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return choices[0]
    if raw.lower() not in choices:
        raise CascadeError(f"{name}={raw!r} must be one of: {', '.join(choices)}")
    return raw.lower()
