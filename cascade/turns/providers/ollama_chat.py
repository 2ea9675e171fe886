"""The ``ollama`` provider: Ollama's own chat API, ``POST <base>/api/chat``, for
``ollama/<name>`` and ``ollama_chat/<name>`` -- no litellm, and no key (a server behind a
proxy that wants one gets ``CASCADE_API_KEY`` as a bearer).

The request: ``{"model": "<name>", "messages": [...], "stream": false, "options":
{"num_predict": N}}``. The answer: ``{"message": {"content": ...}, "prompt_eval_count",
"eval_count", "done": true}``; streamed, one such object per line, each with a piece of the
text, the last (``"done": true``) with the counts. A failure: a status with ``{"error":
"..."}``. The base URL: ``base_url`` (OLLAMA_API_BASE as litellm reads it, then OLLAMA_HOST).
"""
from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from cascade.turns.call import Ask, Route, Target
from cascade.turns.pricing import Answer
from cascade.turns.providers import Provider, register
from cascade.turns.providers.httpclient import (
    Endpoint,
    InternalServerError,
    Streamed,
    post_json,
    post_lines,
    streamed_json,
)
from cascade.turns.providers.openai_chat import finish

DEFAULT_BASE = "http://localhost:11434"
PREFIXES = ("ollama/", "ollama_chat/")


def base_url(api_base: str | None) -> str:
    for value in (api_base, os.environ.get("OLLAMA_API_BASE"), os.environ.get("OLLAMA_HOST")):
        if value and value.strip():
            value = value.strip().rstrip("/")
            return value if "://" in value else f"http://{value}"
    return DEFAULT_BASE


async def chat(name: str, messages: list[dict[str, Any]], endpoint: Endpoint, *,
               max_tokens: int, on_text: Callable[[str], None] | None = None) -> Answer:
    """One chat, no retry; ``on_text``: streamed, each piece passed to it as it arrives."""
    url = f"{endpoint.base}/api/chat"
    headers = {"Authorization": f"Bearer {endpoint.key}"} if endpoint.key else {}
    body: dict[str, Any] = {"model": name, "messages": messages, "stream": on_text is not None,
                            "options": {"num_predict": max_tokens}}
    if on_text is None:
        data, response = await post_json(endpoint, url, body, headers)
        text = _content(data)
        if text is None:
            raise InternalServerError(f"the response from {endpoint.shown} is not a chat "
                                      f"answer (no message): {response.text[:80]!r}")
        return _answer(text, data)
    stream = Streamed(endpoint.shown, on_text)
    last: dict[str, Any] = {}

    def take(line: str) -> bool:
        chunk = streamed_json(line, "line", endpoint.shown)
        stream.add(_content(chunk))
        if isinstance(chunk, dict) and chunk.get("error"):
            raise InternalServerError(f"the stream from {endpoint.shown} reported: "
                                      f"{chunk['error']}")
        last.update(chunk if isinstance(chunk, dict) else {})
        return not last.get("done")

    await post_lines(endpoint, url, body, headers, take)
    return _answer("".join(stream.parts), last)


def _content(data: Any) -> str | None:
    message = data.get("message") if isinstance(data, dict) else None
    if not isinstance(message, dict):
        return None
    content = message.get("content")
    return content if isinstance(content, str) else ""


def _answer(text: str, data: dict[str, Any]) -> Answer:
    def count(key: str) -> int:
        value = data.get(key)
        return value if isinstance(value, int) and value > 0 else 0

    return Answer(text, count("prompt_eval_count"), count("eval_count"), None)


def route(target: Target, ask: Ask) -> Route:
    """Ollama asks no key: always a route."""
    settings = ask.settings
    endpoint = Endpoint(base_url(target.option("api_base") or settings.api_base),
                        settings.api_key, settings.timeout, settings.max_reply_bytes)
    name = target.model.partition("/")[2]

    def request() -> Any:
        return chat(name, ask.messages, endpoint, max_tokens=ask.max_tokens, on_text=ask.on_text)

    return Route(request, finish(target.name), endpoint.base, None)


for prefix in PREFIXES:
    register(Provider(prefix.rstrip("/"), route))
