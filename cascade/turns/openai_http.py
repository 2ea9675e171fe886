"""OpenAI-compatible chat completions over plain HTTP (httpx), without litellm.

``import litellm`` takes 2-3 s here, on every hook run that asks anyone; httpx takes ~0.1 s.
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
``OPENAI_API_BASE``, else https://api.openai.com/v1. Usage comes from the reply's ``usage``.
Cost: a LiteLLM proxy's ``x-litellm-response-cost`` header; else the per-token price in the
price list litellm ships (read as JSON, only when the model's name appears in it: no import);
else None. Failures are raised as httpx's own exceptions, or as the classes below whose names
are the ones litellm gives the same failure, so ``cascade.turns.model`` describes them in the
same words.
"""
from __future__ import annotations

import contextlib
import importlib.util
import json
import math
import os
import re
import ssl
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

# httpx's package imports its command-line entry (httpx._main) when click, rich and pygments
# are installed -- 60-90 ms of a commit attempt for a CLI this process never runs. Marking
# the module absent makes httpx fall back to its stub (its own ImportError branch).
# Likewise httpcore imports its HTTP/2 connection classes, and with them h2 (20-30 ms),
# whenever h2 is installed; no client here asks for HTTP/2, and httpcore keeps a stub that
# says so should one ever try. h2 itself stays importable.
if "httpx" not in sys.modules:
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
if "httpcore" not in sys.modules:
    sys.modules.setdefault("httpcore._sync.http2", None)  # type: ignore[arg-type]
    sys.modules.setdefault("httpcore._async.http2", None)  # type: ignore[arg-type]
import httpx  # noqa: E402

from cascade import __version__  # noqa: E402
from cascade.atomic import atomic_write  # noqa: E402
from cascade.turns.sessions import SESSION  # noqa: E402

PREFIX = "openai/"
DEFAULT_BASE = "https://api.openai.com/v1"
COST_HEADER = "x-litellm-response-cost"

# What litellm calls an HTTP status from an OpenAI-compatible server (observed with 1.106.2).
_STATUS_NAMES = {400: "BadRequestError", 401: "AuthenticationError", 403: "PermissionDeniedError",
                 404: "NotFoundError", 408: "Timeout", 422: "UnprocessableEntityError",
                 429: "RateLimitError", 500: "InternalServerError", 502: "BadGatewayError",
                 503: "ServiceUnavailableError", 504: "Timeout"}
_REASONING = re.compile(r"^(o\d|gpt-5)")


class StatusError(httpx.HTTPStatusError):
    """A server answered with a status that is not 2xx (subclassed per status name)."""


class InternalServerError(Exception):
    """A 2xx answer that is not a chat completion (litellm's name for the same failure)."""


_status_classes: dict[str, type[StatusError]] = {}


def _status_error(response: httpx.Response) -> StatusError:
    name = _STATUS_NAMES.get(response.status_code, "APIError")
    cls = _status_classes.get(name)
    if cls is None:
        cls = _status_classes[name] = type(name, (StatusError,), {"__module__": __name__})
    # Worded as the openai SDK words it ("Error code: 500 - <body>"): the body is the message
    # when it is not an OpenAI-style error object.
    text = response.text.strip()
    message = f"Error code: {response.status_code}" + (f" - {text[:300]}" if text else "")
    return cls(message, request=response.request, response=response)


def direct_name(model: str) -> str | None:
    """The name to send for a model this module serves (``openai/<name>``), else None."""
    if model.startswith(PREFIX) and len(model) > len(PREFIX):
        return model[len(PREFIX):]
    return None


def base_url(api_base: str | None) -> str:
    for value in (api_base, os.environ.get("OPENAI_BASE_URL"), os.environ.get("OPENAI_API_BASE")):
        if value and value.strip():
            return value.strip().rstrip("/")
    return DEFAULT_BASE


@dataclass
class Answer:
    text: str
    prompt_tokens: int
    completion_tokens: int
    cost: float | None


_tls_lock = threading.Lock()
_tls: dict[str, Any] = {}


def _verify(url: str) -> Any:
    """The TLS context. Loading the CA bundle costs ~50 ms: paid only for an https endpoint
    (or a proxy, which may be one). A plain-http endpoint gets a context that verifies
    against no CA at all -- any TLS it meets fails closed."""
    proxied = any(os.environ.get(v) for v in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY",
                                               "http_proxy", "ALL_PROXY", "all_proxy"))
    kind = "full" if url.startswith("https:") or proxied else "none"
    with _tls_lock:
        if kind not in _tls:
            if kind == "full":
                _tls[kind] = httpx.create_ssl_context()
            else:
                _tls[kind] = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        return _tls[kind]


def _headers(key: str | None) -> dict[str, str]:
    headers = {"Accept": "application/json", "User-Agent": f"cascadingdev/{__version__}"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    organization = os.environ.get("OPENAI_ORGANIZATION", "").strip()
    if organization:
        headers["OpenAI-Organization"] = organization
    project = os.environ.get("OPENAI_PROJECT", "").strip()
    if project:
        headers["OpenAI-Project"] = project
    return headers


@dataclass(frozen=True)
class Endpoint:
    """Where a chat completion is asked: the base URL, the key sent (None: none), and the
    seconds to wait."""
    base: str
    key: str | None
    timeout: float

    @property
    def url(self) -> str:
        return self.base.rstrip("/") + "/chat/completions"


async def chat(name: str, messages: list[dict[str, Any]], endpoint: Endpoint, *,
               max_tokens: int, on_text: Callable[[str], None] | None = None) -> Answer:
    """One chat completion, no retry. Raises httpx's exceptions (transport, timeout),
    StatusError (the server said so) or InternalServerError (a 2xx that is not an answer).
    ``on_text``: the reply is streamed (``stream: true``), each piece of text passed to it as
    it arrives; the answer is the whole text all the same."""
    limit = "max_completion_tokens" if _REASONING.match(name.split("/")[-1]) else "max_tokens"
    body = {"model": name, "messages": messages, limit: max_tokens}
    if on_text is not None:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
        async with _client(endpoint) as client:
            return await _streamed(client, endpoint, name, body, on_text)
    async with _client(endpoint) as client:
        response = await client.post(endpoint.url, json=body, headers=_headers(endpoint.key))
    return _completion(response, name, endpoint.base)


@contextlib.asynccontextmanager
async def _client(endpoint: Endpoint):
    """The HTTP client to ask ``endpoint`` with: the session's, kept for every request of
    the same timeout and TLS context (cascade.turns.sessions), or one for this request."""
    verify = _verify(endpoint.url)
    clients = SESSION.get()
    if clients is None:
        async with httpx.AsyncClient(timeout=httpx.Timeout(endpoint.timeout),
                                     verify=verify) as client:
            yield client
        return
    held = (endpoint.timeout, id(verify))
    client = clients.get(held)
    if client is None:
        client = clients[held] = httpx.AsyncClient(timeout=httpx.Timeout(endpoint.timeout),
                                                   verify=verify)
    yield client


def _completion(response: httpx.Response, name: str, base: str) -> Answer:
    """The answer a (not streamed) response holds."""
    if not 200 <= response.status_code < 300:
        raise _status_error(response)
    try:
        data = json.loads(response.content)
    except (ValueError, UnicodeDecodeError) as exc:
        raise InternalServerError(str(exc)) from exc
    text = _content(data)
    if text is None:
        raise InternalServerError(f"the response from {base} is not a chat completion "
                                  f"(no choices[0].message): {response.text[:80]!r}")
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    return _answer(text, usage, name, data.get("model"),
                   _header_cost(response.headers.get(COST_HEADER)))


def _answer(text: str, usage: dict[str, Any], name: str, served: Any,
            cost: float | None) -> Answer:
    """The answer: its text, the tokens its usage counts, and its cost (the proxy's, else
    the price list's for the model asked or the one that answered)."""
    prompt_tokens = _count(usage.get("prompt_tokens"))
    completion_tokens = _count(usage.get("completion_tokens"))
    if cost is None:
        cost = listed_cost(name, prompt_tokens, completion_tokens, served)
    return Answer(text, prompt_tokens, completion_tokens, cost)


async def _streamed(client: httpx.AsyncClient, endpoint: Endpoint, name: str,
                    body: dict[str, Any], on_text: Callable[[str], None]) -> Answer:
    """A streamed completion: Server-Sent Events of chat.completion.chunk objects, each
    delta's text passed on; the usage from the last chunk that carries one."""
    stream = _Stream(endpoint.base, on_text)
    async with client.stream("POST", endpoint.url, json=body,
                             headers=_headers(endpoint.key)) as response:
        if not 200 <= response.status_code < 300:
            await response.aread()
            raise _status_error(response)
        async for line in response.aiter_lines():
            if line.startswith("data:") and not stream.take(line[5:].strip()):
                break
        if not stream.events:
            raise InternalServerError(f"the stream from {endpoint.base} held no chat "
                                      "completion chunk")
        cost = _header_cost(response.headers.get(COST_HEADER))
    return _answer("".join(stream.parts), stream.usage, name, stream.served, cost)


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


def _count(value: Any) -> int:
    try:
        return max(0, int(value or 0))
    except (TypeError, ValueError):
        return 0


def _header_cost(value: str | None) -> float | None:
    try:
        cost = float(value) if value is not None else None
    except ValueError:
        return None
    return cost if cost is not None and math.isfinite(cost) and cost >= 0 else None


_prices: dict[str, Any] | None = None
_names: frozenset[str] | None = None  # the models the price list names


def _price_file() -> Path | None:
    spec = importlib.util.find_spec("litellm")  # finds the package without importing it
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = Path(folder) / "model_prices_and_context_window_backup.json"
        if path.is_file():
            return path
    return None


def _listed_names(path: Path) -> frozenset[str]:
    """The model names the price list holds. Reading its 3 MB costs ~15 ms, on every run
    that asks a model; the names alone (~2,000, a small file in the user's cache folder,
    keyed by the list's size and time) cost ~1 ms to read."""
    stat = path.stat()
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    index = base / "cascade" / f"price-names-{stat.st_size}-{stat.st_mtime_ns}.json"
    try:
        names = json.loads(index.read_text("utf-8"))
        if isinstance(names, list):
            return frozenset(n for n in names if isinstance(n, str))
    except (OSError, ValueError):
        pass
    global _prices
    _prices = json.loads(path.read_bytes())
    names = sorted(k for k in _prices if isinstance(k, str))
    try:
        index.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(index, json.dumps(names).encode("utf-8"), durable=False)
    except OSError:
        pass  # a read-only cache folder: the next run reads the list again
    return frozenset(names)


def listed_cost(name: str, prompt_tokens: int, completion_tokens: int,
                answered_as: Any = None) -> float | None:
    """The price litellm's bundled price list gives ``name`` (or the model that answered):
    tokens times the per-token prices; None for a model it does not list."""
    global _prices, _names
    names = [n for n in (name, f"{PREFIX}{name}", answered_as) if isinstance(n, str) and n]
    try:
        if _names is None:
            path = _price_file()
            _names = _listed_names(path) if path else frozenset()
        if not any(n in _names for n in names):
            return None  # not listed: no need to parse 3 MB of JSON
        if _prices is None:
            path = _price_file()
            _prices = json.loads(path.read_bytes()) if path else {}
    except (OSError, ValueError):
        return None
    for candidate in names:
        entry = _prices.get(candidate)
        if not isinstance(entry, dict):
            continue
        try:
            return (prompt_tokens * float(entry.get("input_cost_per_token") or 0)
                    + completion_tokens * float(entry.get("output_cost_per_token") or 0))
        except (TypeError, ValueError):
            return None
    return None
