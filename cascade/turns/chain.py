"""The one seam between CascadingDev and a model: ``complete()`` asks a model, retrying what
may pass and falling back along the chain (a name of it may be a model string or a declared
provider's name); which provider asks each model, and how, is cascade.turns.providers' (a
registry: one module per provider).

Calls retry on 429, 5xx, timeouts, dropped connections and a provider's own retryable
failure, with exponential backoff (honouring Retry-After), then fall back. A provider model
whose key is missing from the environment is not called at all ("no credentials for <model>:
set <VAR>"), and a 401/403 is never retried. Failures are said in one line by what happened
(cascade.turns.failures), and a configured credential is scrubbed from every one of them and
from the reply (cascade.turns.credentials).
"""
from __future__ import annotations

import asyncio
import inspect
import random
from collections.abc import Sequence
from typing import Any

from cascade.turns import credentials, providers
from cascade.turns.call import Ask, Completion, ModelError, Route
from cascade.turns.failures import classify, retry_after
from cascade.turns.settings import Settings

__all__ = ["Completion", "ModelError", "complete"]


async def complete(model: str, messages: list[dict[str, str]], settings: Settings, *,
                   max_tokens: int | None = None, on_retry: Any = None,  # long: options by name
                   on_text: Any = None, fallbacks: Sequence[str] | None = None) -> Completion:
    """One reply, with retries and the fallback chain: ``model``, then ``fallbacks`` (a
    role's own), then CASCADE_FALLBACK_MODELS, then the declared providers' ``fallback:``,
    each once. Raises ModelError (one line).
    ``on_text``: the reply streams, each piece of text passed to it as it arrives (a retry
    starts the text again: ``on_retry`` is called first)."""
    chain = settings.chain(model, *(fallbacks or ()))
    # a reply never carries a configured credential on (a model or a proxy echoing the key)
    secrets = credentials.configured(settings.api_key, settings.api_base,
                                     bases=settings.declared_bases())
    stream = credentials.Stream(on_text, secrets) if on_text is not None and secrets else None
    if stream is not None:
        on_retry = _restarting(stream, on_retry)
    ask = Ask(messages, settings, max_tokens or settings.reply_tokens, stream or on_text,
              tuple(secrets))
    errors: list[tuple[str, str]] = []
    attempts = 0
    for candidate in chain:
        target = providers.target(candidate, settings)
        route = providers.provider(target.provider).route(target, ask)
        if inspect.isawaitable(route):
            route = await route
        if isinstance(route, str):  # no call, no retry: waiting would not make a key appear
            errors.append((candidate, route))
            continue
        answer, attempts = await _attempts(candidate, route, ask, on_retry, attempts,
                                           errors)
        if answer is not None:
            if isinstance(answer.text, str):
                answer.text = credentials.scrub(answer.text, secrets)
            if stream is not None:
                stream.flush()
            return answer
    raise ModelError(_summary(model, errors))


def _restarting(stream: credentials.Stream, on_retry: Any) -> Any:
    """``on_retry``, dropping what the credential filter of a streamed reply held back."""
    def retry(*args: Any) -> None:
        stream.restart()
        if on_retry is not None:
            on_retry(*args)
    return retry


async def _attempts(candidate: str, route: Route, ask: Ask, on_retry: Any,
                    attempts: int, errors: list[tuple[str, str]]) -> tuple[Completion | None, int]:
    """Ask one model, retrying what may pass (a timeout, a rate limit, a server error) with
    backoff; (the reply or None, the attempts counted so far). A failure goes into
    ``errors``."""
    settings = ask.settings
    delay = settings.backoff
    for attempt in range(settings.retries + 1):
        attempts += 1
        limit = settings.timeout
        try:
            response = await asyncio.wait_for(route.request(), timeout=settings.timeout + 5)
            return route.finish(response, attempts), attempts
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - every provider error ends up here
            if type(exc) is asyncio.TimeoutError:
                limit = settings.timeout + 5  # our own guard fired, not the client's timeout
            failure = classify(exc, model=candidate, endpoint=route.endpoint, timeout=limit,
                                key_hint=route.key_hint)
            # a server may echo the key it refused: its text never carries a credential on
            message = credentials.scrub(failure.message, ask.secrets)
            if not failure.retryable or attempt == settings.retries:
                errors.append((candidate, message))
                return None, attempts
            wait = retry_after(exc)
            wait = wait if wait is not None else delay * (1 + random.random() * 0.25)
            if on_retry is not None:
                on_retry(candidate, message, wait)
            await asyncio.sleep(wait)
            delay *= 2
    return None, attempts


def _summary(model: str, errors: list[tuple[str, str]]) -> str:
    """The caller names the model it asked for; other models of the chain are named here."""
    if not errors:
        return "no model answered"
    parts = []
    for candidate, message in errors:
        named = candidate == model and len(errors) == 1 or any(
            form in message for form in (f"for {candidate}:", f"command {candidate} (",
                                         f"(provider {candidate})"))  # a command names it
        parts.append(message if named else f"{candidate}: {message}")
    return "; then ".join(parts)
