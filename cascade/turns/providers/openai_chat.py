"""The ``openai`` provider: OpenAI-compatible chat completions (``openai/<name>``) through
httpx, without litellm: ``import litellm`` takes 2-3 s here, on every hook run that asks
anyone; httpx ~0.15 s.

One ``POST <base>/chat/completions``, the request litellm would send: ``{"model": "<name>",
"messages": [...], "max_tokens": N}`` (``max_completion_tokens`` for OpenAI's reasoning
models, o1/o3/o4 and gpt-5, as litellm maps it), ``Authorization: Bearer <key>``. The base
URL is what litellm would use: a declared provider's ``api_base``, else ``CASCADE_API_BASE``,
else ``OPENAI_BASE_URL``, else ``OPENAI_API_BASE``, else https://api.openai.com/v1. Usage
comes from the reply's ``usage``; the price is cascade.turns.pricing's.
"""
from __future__ import annotations

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
    Streamed,
    post_events,
    post_json,
    streamed_json,
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
    for header, var in (("OpenAI-Organization", "OPENAI_ORGANIZATION"),
                        ("OpenAI-Project", "OPENAI_PROJECT")):
        value = os.environ.get(var, "").strip()
        if value:
            headers[header] = value
    return headers


async def chat(name: str, messages: list[dict[str, Any]], endpoint: Endpoint, *,
               max_tokens: int, on_text: Callable[[str], None] | None = None) -> Answer:
    """One chat completion, no retry. Raises httpx's TransportError (transport, timeout),
    its HTTPStatusError (the server said so), InternalServerError (a 2xx that is not an
    answer) or ProviderFailure (an answer past the size limit).
    ``on_text``: the reply is streamed (``stream: true``), each piece of text passed to it as
    it arrives; the answer is the whole text all the same."""
    limit = "max_completion_tokens" if _REASONING.match(name.split("/")[-1]) else "max_tokens"
    body: dict[str, Any] = {"model": name, "messages": messages, limit: max_tokens}
    url = endpoint_url(endpoint.base, "/chat/completions")
    if on_text is not None:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
        stream = _Stream(endpoint.shown, on_text)
        headers = await post_events(endpoint, url, body, _headers(endpoint.key), stream.take)
        if not stream.events:
            raise InternalServerError(f"the stream from {endpoint.shown} held no chat "
                                      "completion chunk")
        return _answer("".join(stream.parts), stream.usage, name, stream.served,
                       headers.get(COST_HEADER))
    data, response = await post_json(endpoint, url, body, _headers(endpoint.key))
    message = _choice(data, "message")
    if message is None:
        raise InternalServerError(f"the response from {endpoint.shown} is not a chat completion "
                                  f"(no choices[0].message): {response.text[:80]!r}")
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    return _answer(_content(message), usage, name, data.get("model"),
                   response.headers.get(COST_HEADER))


def _answer(text: str, usage: dict[str, Any], name: str, served: Any,
            cost_header: str | None) -> Answer:
    """The answer: its text, the tokens its usage counts, and its cost (the proxy's, else
    the price list's for the model asked or the one that answered)."""
    return answer(text, usage.get("prompt_tokens"), usage.get("completion_tokens"),
                  (name, f"{PREFIX}{name}", served), cost_header)


class _Stream(Streamed):
    """What the chunks of a streamed completion said so far."""

    events = 0

    def take(self, data: str) -> bool:
        """Read one event's data; False at the end of the stream (``[DONE]``)."""
        if data == "[DONE]":
            return False
        chunk = streamed_json(data, "chunk", self.base)
        self.events += 1
        if not isinstance(chunk, dict):
            return True
        self.served = chunk.get("model") or self.served
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        delta = _choice(chunk, "delta")
        self.add(delta.get("content") if delta is not None else None)
        return True


def _choice(data: Any, key: str) -> dict[str, Any] | None:
    """``data["choices"][0][key]`` (a reply's ``message``, a chunk's ``delta``) when it is
    an object, else None."""
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None
    found = choices[0].get(key)
    return found if isinstance(found, dict) else None


def _content(message: dict[str, Any]) -> str:
    """A message's text ("" for a null content)."""
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
    key = openai_key(settings, given)
    refused = missing_credentials(target.model, key, given)
    if refused:
        return refused
    endpoint = Endpoint(base_url(given), key, settings.timeout, settings.max_reply_bytes)

    def request() -> Any:
        return chat(name, ask.messages, endpoint, max_tokens=ask.max_tokens, on_text=ask.on_text)

    return Route(request, finish(target.name), endpoint.base, key_hint(settings, key))


def finish(name: str) -> Callable[[Answer, int], Completion]:
    """How an answer becomes the Completion of the chain's ``name``."""
    def done(got: Answer, attempts: int) -> Completion:
        return Completion(got.text, name, got.prompt_tokens, got.completion_tokens, got.cost,
                          attempts)

    return done


register(Provider("openai", route))
