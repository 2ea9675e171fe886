"""The ``openai`` provider: OpenAI-compatible chat completions through httpx, without
litellm.

``import litellm`` takes 2-3 s here, on every hook run that asks anyone; httpx ~0.15 s.
So an ``openai/<name>`` model -- an OpenAI-compatible endpoint (``CASCADE_API_BASE``: a
LiteLLM proxy, a llama.cpp or vLLM server, ...) or OpenAI itself -- is asked directly with one
``POST <base>/chat/completions``, the request litellm would send:
``{"model": "<name>", "messages": [...], "max_tokens": N}`` (``max_completion_tokens`` for
OpenAI's reasoning models, o1/o3/o4 and gpt-5, as litellm maps it), ``Authorization: Bearer
<key>``. Every other model (``anthropic/``, ``bedrock/``, ``gemini/``, a bare name, the embedded
``cascade-local/``) needs litellm's translation and keeps going through it; ``CASCADE_HTTP=
litellm`` sends every model through litellm (an escape hatch, and the "before" of
bench/hook_endpoint.py).

The base URL is what litellm would use: ``CASCADE_API_BASE``, else ``OPENAI_BASE_URL``, else
``OPENAI_API_BASE``, else https://api.openai.com/v1 (a declared provider's ``api_base``
first). Usage comes from the reply's ``usage``. The client, its bounds and the failures raised
are cascade.turns.providers.httpclient's; the price is cascade.turns.pricing's.
"""
from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from typing import Any

from cascade.base.text import endpoint_url
from cascade.turns.call import Ask, Completion, Route, Target
from cascade.turns.keys import key_hint, missing_credentials, openai_key
from cascade.turns.pricing import Answer, answer
from cascade.turns.providers import Provider, register
from cascade.turns.providers.httpclient import (
    COST_HEADER,
    Endpoint,
    InternalServerError,
    post_events,
    post_json,
)

PREFIX = "openai/"
DEFAULT_BASE = "https://api.openai.com/v1"
_REASONING = re.compile(r"^(o\d|gpt-5)")


def base_url(api_base: str | None) -> str:
    for value in (api_base, os.environ.get("OPENAI_BASE_URL"), os.environ.get("OPENAI_API_BASE")):
        if value and value.strip():
            return value.strip().rstrip("/")
    return DEFAULT_BASE


def _headers(key: str | None) -> dict[str, str]:
    headers = {"Accept": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    organization = os.environ.get("OPENAI_ORGANIZATION", "").strip()
    if organization:
        headers["OpenAI-Organization"] = organization
    project = os.environ.get("OPENAI_PROJECT", "").strip()
    if project:
        headers["OpenAI-Project"] = project
    return headers


def _url(endpoint: Endpoint) -> str:
    return endpoint_url(endpoint.base, "/chat/completions")


async def chat(name: str, messages: list[dict[str, Any]], endpoint: Endpoint, *,
               max_tokens: int, on_text: Callable[[str], None] | None = None) -> Answer:
    """One chat completion, no retry. Raises httpx's TransportError (transport, timeout),
    its HTTPStatusError (the server said so), InternalServerError (a 2xx that is not an
    answer) or ProviderFailure (an answer past the size limit).
    ``on_text``: the reply is streamed (``stream: true``), each piece of text passed to it as
    it arrives; the answer is the whole text all the same."""
    limit = "max_completion_tokens" if _REASONING.match(name.split("/")[-1]) else "max_tokens"
    body: dict[str, Any] = {"model": name, "messages": messages, limit: max_tokens}
    if on_text is not None:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
        stream = _Stream(endpoint.shown, on_text)
        headers = await post_events(endpoint, _url(endpoint), body, _headers(endpoint.key),
                                    stream.take)
        if not stream.events:
            raise InternalServerError(f"the stream from {endpoint.shown} held no chat "
                                      "completion chunk")
        return _answer("".join(stream.parts), stream.usage, name, stream.served,
                       headers.get(COST_HEADER))
    data, response = await post_json(endpoint, _url(endpoint), body, _headers(endpoint.key))
    text = _content(data)
    if text is None:
        raise InternalServerError(f"the response from {endpoint.shown} is not a chat completion "
                                  f"(no choices[0].message): {response.text[:80]!r}")
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    return _answer(text, usage, name, data.get("model"), response.headers.get(COST_HEADER))


def _answer(text: str, usage: dict[str, Any], name: str, served: Any,
            cost_header: str | None) -> Answer:
    """The answer: its text, the tokens its usage counts, and its cost (the proxy's, else
    the price list's for the model asked or the one that answered)."""
    return answer(text, usage.get("prompt_tokens"), usage.get("completion_tokens"),
                  (name, f"{PREFIX}{name}", served), cost_header)


class _Stream:
    """What the chunks of a streamed completion said so far."""

    def __init__(self, base: str, on_text: Callable[[str], None]) -> None:
        self.base, self.on_text = base, on_text
        self.parts: list[str] = []
        self.usage: dict[str, Any] = {}
        self.served: Any = None
        self.events = 0

    def take(self, data: str) -> bool:
        """Read one event's data; False at the end of the stream (``[DONE]``)."""
        if data == "[DONE]":
            return False
        try:
            chunk = json.loads(data)
        except ValueError as exc:
            raise InternalServerError(f"a streamed chunk from {self.base} is not JSON: "
                                      f"{data[:80]!r}") from exc
        self.events += 1
        if not isinstance(chunk, dict):
            return True
        self.served = chunk.get("model") or self.served
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        choices = chunk.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], dict):
            delta = choices[0].get("delta")
            text = delta.get("content") if isinstance(delta, dict) else None
            if isinstance(text, str) and text:
                self.parts.append(text)
                self.on_text(text)
        return True


def _content(data: Any) -> str | None:
    """The reply's text ("" for a null content), or None when ``data`` has no message."""
    if not isinstance(data, dict):
        return None
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None
    message = choices[0].get("message")
    if not isinstance(message, dict):
        return None
    content = message.get("content")
    if isinstance(content, list):  # content parts
        return "".join(p.get("text", "") for p in content
                       if isinstance(p, dict) and isinstance(p.get("text"), str))
    return content if isinstance(content, str) else ""


def route(target: Target, ask: Ask) -> Route | str:
    """How ``target`` is asked; a refusal: why not (no key where one is needed)."""
    settings = ask.settings
    name = target.model.partition("/")[2]  # ``openai/<name>``: the name to send
    given = target.option("api_base") or settings.api_base
    endpoint = base_url(given)
    key = openai_key(settings, given)
    refused = missing_credentials(target.model, key, given)
    if refused:
        return refused

    def request() -> Any:
        return chat(name, ask.messages,
                    Endpoint(endpoint, key, settings.timeout, settings.max_reply_bytes),
                    max_tokens=ask.max_tokens, on_text=ask.on_text)

    return Route(request, finish(target.name), endpoint, key_hint(settings, key))


def finish(name: str) -> Callable[[Answer, int], Completion]:
    """How an answer becomes the Completion of the chain's ``name``."""
    def done(got: Answer, attempts: int) -> Completion:
        return Completion(got.text, name, got.prompt_tokens, got.completion_tokens, got.cost,
                          attempts)

    return done


register(Provider("openai", route))
