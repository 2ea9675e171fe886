"""What the direct HTTP paths to a model share (httpx, without litellm): the client and its
TLS context, one POST answered with JSON or with Server-Sent Events, the failures, the
answer, and its price.

``cascade.turns.openai_http`` (OpenAI's chat completions) and ``cascade.turns.anthropic_http``
(Anthropic's Messages API) each build their request and read their reply; how a request is
sent, how long it may take, and how a failure is raised are the same for both, so that
``cascade.turns.model`` retries and describes them alike. Failures are raised as httpx's own
exceptions (transport, timeout), as ``StatusError`` subclasses named as litellm names the same
status, or as ``InternalServerError`` (a 2xx that is not an answer).

Cost: a LiteLLM proxy's ``x-litellm-response-cost`` header; else the per-token price in the
price list litellm ships (through an index of its prices kept in the user's cache folder:
no import); else None.
"""
from __future__ import annotations

import contextlib
import importlib.util
import json
import math
import os
import ssl
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
import httpx

from cascade import __version__
from cascade.atomic import atomic_write
from cascade.turns.sessions import SESSION

COST_HEADER = "x-litellm-response-cost"
USER_AGENT = f"cascadingdev/{__version__}"

# What litellm calls an HTTP status (observed with 1.106.2; 529 is Anthropic's "overloaded").
_STATUS_NAMES = {400: "BadRequestError", 401: "AuthenticationError", 403: "PermissionDeniedError",
                 404: "NotFoundError", 408: "Timeout", 422: "UnprocessableEntityError",
                 429: "RateLimitError", 500: "InternalServerError", 502: "BadGatewayError",
                 503: "ServiceUnavailableError", 504: "Timeout", 529: "InternalServerError"}


class StatusError(httpx.HTTPStatusError):
    """A server answered with a status that is not 2xx (subclassed per status name)."""


class InternalServerError(Exception):
    """A 2xx answer that is not a reply (litellm's name for the same failure)."""


_status_classes: dict[str, type[StatusError]] = {}


def status_error(response: httpx.Response) -> StatusError:
    """The exception for a response whose status is not 2xx (its body already read)."""
    name = _STATUS_NAMES.get(response.status_code, "APIError")
    cls = _status_classes.get(name)
    if cls is None:
        cls = _status_classes[name] = type(name, (StatusError,), {"__module__": __name__})
    # Worded as the openai SDK words it ("Error code: 500 - <body>"): the body is the message
    # when it is not an error object.
    text = response.text.strip()
    message = f"Error code: {response.status_code}" + (f" - {text[:300]}" if text else "")
    return cls(message, request=response.request, response=response)


@dataclass
class Answer:
    text: str
    prompt_tokens: int
    completion_tokens: int
    cost: float | None


@dataclass(frozen=True)
class Endpoint:
    """Where a model is asked: the base URL, the key sent (None: none), and the seconds to
    wait."""
    base: str
    key: str | None
    timeout: float


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


@contextlib.asynccontextmanager
async def _client(endpoint: Endpoint):
    """The HTTP client to ask ``endpoint`` with: the session's, kept for every request of
    the same timeout and TLS context (cascade.turns.sessions), or one for this request."""
    verify = _verify(endpoint.base)
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


async def post_json(endpoint: Endpoint, url: str, body: dict[str, Any],
                    headers: dict[str, str]) -> tuple[Any, httpx.Response]:
    """POST ``body`` to ``url``: (the JSON the 2xx answer holds, the response). Raises
    StatusError for any other status, InternalServerError for a body that is not JSON."""
    async with _client(endpoint) as client:
        response = await client.post(url, json=body, headers=headers)
    if not 200 <= response.status_code < 300:
        raise status_error(response)
    try:
        return json.loads(response.content), response
    except (ValueError, UnicodeDecodeError) as exc:
        raise InternalServerError(str(exc)) from exc


async def post_events(endpoint: Endpoint, url: str, body: dict[str, Any],
                      headers: dict[str, str],
                      take: Callable[[str], bool]) -> httpx.Headers:
    """POST ``body`` to ``url`` and read the Server-Sent Events answering it: each ``data:``
    line passed to ``take`` as it arrives (an event's name is in its data for both APIs),
    until ``take`` says the stream ended (False) or it ends. Returns the response's headers. Raises StatusError for a status that is not 2xx."""
    async with _client(endpoint) as client, \
            client.stream("POST", url, json=body, headers=headers) as response:
        if not 200 <= response.status_code < 300:
            await response.aread()
            raise status_error(response)
        async for line in response.aiter_lines():
            if line.startswith("data:") and not take(line[5:].strip()):
                break
        return response.headers


def answer(text: str, prompt_tokens: Any, completion_tokens: Any, priced: tuple[str, ...],
           cost_header: str | None) -> Answer:
    """The answer: its text, its token counts, and its cost (the proxy's header, else the
    price list's for the first of the names ``priced`` it lists)."""
    prompt, completion = _count(prompt_tokens), _count(completion_tokens)
    cost = _header_cost(cost_header)
    if cost is None:
        cost = listed_cost(priced, prompt, completion)
    return Answer(text, prompt, completion, cost)


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


_index: str | None = None  # the price index's text (see _price_index)
INDEX_HEAD = '["cascade price index", 1]\n'


def _price_file() -> Path | None:
    spec = importlib.util.find_spec("litellm")  # finds the package without importing it
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = Path(folder) / "model_prices_and_context_window_backup.json"
        if path.is_file():
            return path
    return None


def _price_index(path: Path) -> str:
    """The per-token prices of the price list at ``path``, one model a line after a header
    line: ``[name, input cost, output cost]`` as JSON, for each model it gives a price entry.
    Kept in the user's cache folder, keyed by the list's size and time: parsing the 3 MB list
    costs 20-90 ms, on every run that prices a model it names; the index (~220 KB) is read,
    and the line for a model found, in about 1 ms."""
    stat = path.stat()
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    index = base / "cascade" / f"price-index-{stat.st_size}-{stat.st_mtime_ns}.jsonl"
    try:
        text = index.read_text("utf-8")
        if text.startswith(INDEX_HEAD):
            return text
    except (OSError, ValueError):
        pass
    prices = json.loads(path.read_bytes())
    text = INDEX_HEAD + "".join(
        json.dumps([name, entry.get("input_cost_per_token"),
                    entry.get("output_cost_per_token")]) + "\n"
        for name, entry in (prices.items() if isinstance(prices, dict) else ())
        if isinstance(name, str) and isinstance(entry, dict))
    try:
        index.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(index, text.encode("utf-8"), durable=False)
    except OSError:
        pass  # a read-only cache folder: the next run reads the list again
    return text


def _listed_prices(index: str, name: str) -> tuple[Any, Any] | None:
    """(input cost, output cost) per token of ``name`` as the index lists them; None for a
    model it does not list. Names are written as JSON escapes them (ASCII only), so a line
    starts with exactly this prefix for this name and no other."""
    at = index.find("\n" + json.dumps([name])[:-1] + ",")
    if at < 0:
        return None
    end = index.find("\n", at + 1)
    _name, input_cost, output_cost = json.loads(index[at + 1:end if end >= 0 else None])
    return input_cost, output_cost


def listed_cost(names: tuple[Any, ...], prompt_tokens: int,
                completion_tokens: int) -> float | None:
    """The price litellm's bundled price list gives the first of ``names`` it lists (the
    model asked, under its names, or the one that answered): tokens times the per-token
    prices; None for a model it does not list."""
    global _index
    try:
        if _index is None:
            path = _price_file()
            _index = _price_index(path) if path else INDEX_HEAD
        for candidate in (n for n in names if isinstance(n, str) and n):
            listed = _listed_prices(_index, candidate)
            if listed is None:
                continue
            try:
                return (prompt_tokens * float(listed[0] or 0)
                        + completion_tokens * float(listed[1] or 0))
            except (TypeError, ValueError):
                return None
    except (OSError, ValueError):
        return None
    return None
