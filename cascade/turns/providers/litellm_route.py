"""The ``litellm`` provider: every model string no other provider serves (``bedrock/``,
``gemini/``, ``vertex_ai/``, a bare name, ...), and every model under ``CASCADE_HTTP=litellm``,
through ``litellm.acompletion`` -- its translation to each provider's API, its price list.
"""
from __future__ import annotations

import asyncio
import os
from types import ModuleType
from typing import Any

from cascade.turns.call import Ask, Completion, Route, Target
from cascade.turns.keys import key_hint, missing_credentials
from cascade.turns.litellm_loader import litellm_module, loaded
from cascade.turns.local import register as register_local
from cascade.turns.providers import LITELLM, Provider, register


async def route(target: Target, ask: Ask, local: bool = False) -> Route | str:
    """``target`` (any model string litellm knows) through litellm; a refusal: why not (no
    key where one is needed). ``local``: the embedded model, registered with litellm as its
    provider first."""
    candidate = target.model
    settings = ask.settings
    litellm = loaded() or await asyncio.to_thread(litellm_module)
    kwargs: dict[str, Any] = {"model": candidate, "messages": ask.messages,
                              "timeout": settings.timeout, "num_retries": 0,
                              "max_tokens": ask.max_tokens}
    hint = None
    if local:
        register_local(litellm)
    else:
        api_base = target.option("api_base") or settings.api_base
        if api_base:
            kwargs["api_base"] = api_base
        key = settings.api_key or (
            "no-key" if settings.api_base and candidate.startswith("openai/")
            and not os.environ.get("OPENAI_API_KEY") else None)
        if key:
            kwargs["api_key"] = key
        hint = key_hint(settings, key)
        refused = missing_credentials(candidate, kwargs.get("api_key"), settings.api_base)
        if refused:
            return refused

    def request() -> Any:
        if ask.on_text is None:
            return litellm.acompletion(**kwargs)
        return _streamed(litellm, kwargs, ask.on_text)

    def finish(response: Any, attempts: int) -> Completion:
        return _completion(litellm, response, target.name, attempts)

    return Route(request, finish, kwargs.get("api_base"), hint)


async def _streamed(litellm: ModuleType, kwargs: dict[str, Any], on_text: Any) -> Any:
    """litellm's streamed completion (``stream=True``): each delta's text passed on, the
    chunks built back into one response (litellm.stream_chunk_builder) for the rest."""
    chunks = []
    stream = await litellm.acompletion(**kwargs, stream=True,
                                       stream_options={"include_usage": True})
    async for chunk in stream:
        chunks.append(chunk)
        try:
            text = chunk.choices[0].delta.content
        except (AttributeError, IndexError):
            text = None
        if isinstance(text, str) and text:
            on_text(text)
    return litellm.stream_chunk_builder(chunks, messages=kwargs["messages"])


def _completion(litellm: ModuleType, response: Any, model: str, attempts: int) -> Completion:
    try:
        text = response.choices[0].message.content
    except (AttributeError, IndexError, KeyError):
        text = None
    usage = getattr(response, "usage", None)
    prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
    completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
    hidden = getattr(response, "_hidden_params", None) or {}
    if isinstance(hidden, dict) and hidden.get("response_cost") is not None:
        cost = float(hidden["response_cost"])
    else:
        try:
            cost = float(litellm.completion_cost(completion_response=response))
        except Exception:  # noqa: BLE001 - unknown models have no price
            cost = None
    return Completion(text or "", model, prompt_tokens, completion_tokens, cost, attempts)


register(Provider(LITELLM, route, serves_prefix=False, uses_litellm=True))
