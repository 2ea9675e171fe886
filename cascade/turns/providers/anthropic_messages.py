"""The ``anthropic`` provider: Anthropic's Messages API through httpx, without litellm.

An ``anthropic/<name>`` model is asked with one ``POST <base>/v1/messages``, the request
litellm's Anthropic translation sends for a review: ``{"model": "<name>", "max_tokens": N,
"system": [text blocks], "messages": [...]}`` -- the system prompt is a top-level field, not
a message; ``max_tokens`` is required; a message's content is a list of text blocks, two
messages of the same role in a row are merged into one, an empty text is replaced by a
placeholder and a closing assistant text loses its trailing whitespace (the API refuses
either). Headers: ``anthropic-version: 2023-06-01`` and the key as ``x-api-key``; an OAuth
token (``sk-ant-oat...``) or ``ANTHROPIC_AUTH_TOKEN`` goes as ``Authorization: Bearer``.

Where and with what, as litellm reads them: the base URL is ``CASCADE_API_BASE``, else
``ANTHROPIC_API_BASE``, else ``ANTHROPIC_BASE_URL``, else https://api.anthropic.com, with
``/v1/messages`` appended unless it ends so already; the key: ``credentials``.

The reply is a ``message`` whose ``content`` holds text blocks; usage counts
``input_tokens`` (plus the cache's) and ``output_tokens``. Streamed (``stream: true``), the
answer comes as named events (``_Stream.take``): unknown ones are skipped, and an ``error``
event (e.g. ``overloaded_error``) fails the call as a server error does. An error status
carries ``{"type": "error", "error": {"type", "message"}}``.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

from cascade.base.text import endpoint_url
from cascade.turns.call import Ask, Route, Target
from cascade.turns.keys import key_hint, missing_credentials
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
from cascade.turns.providers.openai_chat import finish

PREFIX = "anthropic/"
DEFAULT_BASE = "https://api.anthropic.com"
VERSION = "2023-06-01"
SUFFIX = "/v1/messages"
OAUTH_PREFIX = "sk-ant-oat"
OAUTH_BETA = "oauth-2025-04-20"
# What litellm puts in place of an empty text (the API refuses an empty text block).
EMPTY_TEXT = "[System: Empty message content sanitised to satisfy protocol]"


def base_url(api_base: str | None) -> str:
    for value in (api_base, os.environ.get("ANTHROPIC_API_BASE"),
                  os.environ.get("ANTHROPIC_BASE_URL")):
        if value and value.strip():
            return value.strip().rstrip("/")
    return DEFAULT_BASE


def credentials(api_key: str | None) -> tuple[str | None, str | None]:
    """(the key, the bearer token) to send: ``api_key`` (CASCADE_API_KEY), else a key set in
    code on litellm, else ANTHROPIC_API_KEY; the token ANTHROPIC_AUTH_TOKEN only without a
    key."""
    if api_key:
        return api_key, None
    library = sys.modules.get("litellm")  # None: getattr gives None
    for value in (getattr(library, "anthropic_key", None), getattr(library, "api_key", None)):
        if isinstance(value, str) and value.strip():
            return value.strip(), None
    key = os.environ.get("ANTHROPIC_API_KEY", "").strip() or None
    token = os.environ.get("ANTHROPIC_AUTH_TOKEN", "").strip() or None
    return (key, None) if key else (None, token)


def _headers(key: str | None, token: str | None) -> dict[str, str]:
    headers = {"accept": "application/json", "anthropic-version": VERSION}
    if key and key.startswith(OAUTH_PREFIX):
        headers["authorization"] = f"Bearer {key}"
        headers["anthropic-beta"] = OAUTH_BETA
        headers["anthropic-dangerous-direct-browser-access"] = "true"
    elif key:
        headers["x-api-key"] = key
    elif token:
        headers["authorization"] = f"Bearer {token}"
    return headers


def request_body(name: str, messages: list[dict[str, Any]], max_tokens: int) -> dict[str, Any]:
    """The Messages API request for chat ``messages``: system messages become the top-level
    ``system`` blocks, the rest alternate user and assistant."""
    system: list[dict[str, str]] = []
    turns: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        blocks = _blocks(message.get("content"))
        if role == "system":
            system.extend(b for b in blocks if b["text"].strip())
            continue
        role = "assistant" if role == "assistant" else "user"
        blocks = [b if b["text"].strip() else {"type": "text", "text": EMPTY_TEXT}
                  for b in blocks] or [{"type": "text", "text": EMPTY_TEXT}]
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    if turns and turns[-1]["role"] == "assistant":
        last = turns[-1]["content"][-1]
        last["text"] = last["text"].rstrip() or EMPTY_TEXT
    body: dict[str, Any] = {"model": name, "messages": turns, "max_tokens": max_tokens}
    if system:
        body["system"] = system
    return body


def _blocks(content: Any) -> list[dict[str, str]]:
    """A message's content as text blocks (a string, or a list of text parts)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [{"type": "text", "text": part["text"]} for part in content
                if isinstance(part, dict) and isinstance(part.get("text"), str)]
    return []


async def chat(name: str, messages: list[dict[str, Any]], endpoint: Endpoint, *,
               max_tokens: int, token: str | None = None,
               on_text: Callable[[str], None] | None = None) -> Answer:
    """One message, no retry. ``endpoint.key`` goes as ``x-api-key`` (an OAuth token as a
    bearer), ``token`` as a bearer. Raises httpx's TransportError (transport, timeout),
    HTTPStatusError (the server said so) or InternalServerError (a 2xx that is not a message,
    or a stream that reports an error). ``on_text``: the reply is streamed, each piece of
    text passed to it as it arrives; the answer is the whole text all the same."""
    body = request_body(name, messages, max_tokens)
    headers = _headers(endpoint.key, token)
    url = endpoint_url(endpoint.base, SUFFIX)
    if on_text is not None:
        body["stream"] = True
        stream = _Stream(endpoint.shown, on_text)
        got = await post_events(endpoint, url, body, headers, stream.take)
        if not stream.started:
            raise InternalServerError(f"the stream from {endpoint.shown} held no message_start "
                                      "event")
        return _answer("".join(stream.parts), stream.usage, name, stream.served,
                       got.get(COST_HEADER))
    data, response = await post_json(endpoint, url, body, headers)
    text = _content(data)
    if text is None:
        raise InternalServerError(f"the response from {endpoint.shown} is not a message "
                                  f"(no content list): {response.text[:80]!r}")
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    return _answer(text, usage, name, data.get("model"), response.headers.get(COST_HEADER))


def _answer(text: str, usage: dict[str, Any], name: str, served: Any,
            cost_header: str | None) -> Answer:
    prompt = sum(_number(usage.get(k)) for k in ("input_tokens", "cache_creation_input_tokens",
                                                 "cache_read_input_tokens"))
    return answer(text, prompt, usage.get("output_tokens"), (name, f"{PREFIX}{name}", served),
                  cost_header)


def _number(value: Any) -> int:
    return value if isinstance(value, int) and value > 0 else 0


def _content(data: Any) -> str | None:
    """The text blocks of a message, joined; None when ``data`` is not a message."""
    if not isinstance(data, dict) or not isinstance(data.get("content"), list):
        return None
    return "".join(block["text"] for block in data["content"]
                   if isinstance(block, dict) and block.get("type") == "text"
                   and isinstance(block.get("text"), str))


class _Stream(Streamed):
    """What the events of a streamed message said so far."""

    started = False

    def take(self, data: str) -> bool:
        """Read one event's data; False at ``message_stop``."""
        event = streamed_json(data, "event", self.base)
        kind = event.get("type") if isinstance(event, dict) else None
        if kind == "message_start" and isinstance(event.get("message"), dict):
            self.started = True
            self.served = event["message"].get("model") or self.served
            self._count(event["message"].get("usage"))
        elif kind == "content_block_delta" and isinstance(event.get("delta"), dict):
            if event["delta"].get("type") == "text_delta":
                self.add(event["delta"].get("text"))
        elif kind == "message_delta":
            self._count(event.get("usage"))
        elif kind == "error":
            error = event.get("error") if isinstance(event.get("error"), dict) else {}
            raise InternalServerError(f"the stream from {self.base} reported "
                                      f"{error.get('type') or 'an error'}: "
                                      f"{error.get('message') or data[:80]}")
        return kind != "message_stop"

    def _count(self, usage: Any) -> None:
        """Usage, merged: a message_delta's counts are running totals and may leave out
        what message_start reported."""
        if isinstance(usage, dict):
            self.usage.update({k: v for k, v in usage.items() if v is not None})


def route(target: Target, ask: Ask) -> Route | str:
    """How ``target`` is asked; a refusal: why not (no key)."""
    settings = ask.settings
    name = target.model.partition("/")[2]  # ``anthropic/<name>``: the name to send
    key, token = credentials(settings.api_key)
    refused = missing_credentials(target.model, key or token, settings.api_base)
    if refused:
        return refused
    endpoint = Endpoint(base_url(target.option("api_base") or settings.api_base), key,
                        settings.timeout, settings.max_reply_bytes)

    def request() -> Any:
        return chat(name, ask.messages, endpoint, max_tokens=ask.max_tokens, token=token,
                    on_text=ask.on_text)

    return Route(request, finish(target.name), endpoint.base, key_hint(settings, key))


register(Provider("anthropic", route))
