"""What the direct HTTP paths to a model share (the standard library's HTTP, without
litellm): the client and its TLS context, one POST answered with JSON or with Server-Sent
Events, the failures, the answer, and its price.

``cascade.turns.openai_http`` (OpenAI's chat completions) and ``cascade.turns.anthropic_http``
(Anthropic's Messages API) each build their request and read their reply; how a request is
sent, how long it may take, and how a failure is raised are the same for both, so that
``cascade.turns.model`` retries and describes them alike. Requests go through
``cascade.turns.wire`` (http.client, off the event loop). Failures are raised as its
transport errors (named as httpx names them: ConnectError, ReadTimeout, ...), as
``StatusError`` subclasses named as litellm names the same status, or as
``InternalServerError`` (a 2xx that is not an answer).

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
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from msgspec import Struct

from cascade import __version__
from cascade.atomic import atomic_write
from cascade.text import shown_url
from cascade.turns.sessions import SESSION
from cascade.turns.wire import Client, Response, post

COST_HEADER = "x-litellm-response-cost"
USER_AGENT = f"cascadingdev/{__version__}"

# What litellm calls an HTTP status (observed with 1.106.2; 529 is Anthropic's "overloaded").
_STATUS_NAMES = {400: "BadRequestError", 401: "AuthenticationError", 403: "PermissionDeniedError",
                 404: "NotFoundError", 408: "Timeout", 422: "UnprocessableEntityError",
                 429: "RateLimitError", 500: "InternalServerError", 502: "BadGatewayError",
                 503: "ServiceUnavailableError", 504: "Timeout", 529: "InternalServerError"}


class StatusError(Exception):
    """A server answered with a status that is not 2xx (subclassed per status name); its
    ``response`` is the one the server sent."""

    def __init__(self, message: str, response: Response) -> None:
        super().__init__(message)
        self.response = response


class InternalServerError(Exception):
    """A 2xx answer that is not a reply (litellm's name for the same failure)."""


_status_classes: dict[str, type[StatusError]] = {}


def status_error(response: Response) -> StatusError:
    """The exception for a response whose status is not 2xx (its body already read)."""
    name = _STATUS_NAMES.get(response.status_code, "APIError")
    cls = _status_classes.get(name)
    if cls is None:
        cls = _status_classes[name] = type(name, (StatusError,), {"__module__": __name__})
    # Worded as the openai SDK words it ("Error code: 500 - <body>"): the body is the message
    # when it is not an error object.
    text = response.text.strip()
    message = f"Error code: {response.status_code}" + (f" - {text[:300]}" if text else "")
    return cls(message, response)


class Answer(Struct):
    text: str
    prompt_tokens: int
    completion_tokens: int
    cost: float | None


class Endpoint(Struct, frozen=True):
    """Where a model is asked: the base URL, the key sent (None: none), and the seconds to
    wait."""
    base: str
    key: str | None
    timeout: float

    @property
    def shown(self) -> str:
        """The base URL as a message names it (no password, no query string)."""
        return shown_url(self.base)


_tls_lock = threading.Lock()
_tls: dict[str, Any] = {}


def _verify(url: str) -> ssl.SSLContext:
    """The TLS context. Loading the CA bundle costs ~50 ms: paid only for an https endpoint
    (or a proxy, which may be one). A plain-http endpoint gets a context that verifies
    against no CA at all -- any TLS it meets fails closed."""
    proxied = any(os.environ.get(v) for v in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY",
                                               "http_proxy", "ALL_PROXY", "all_proxy"))
    kind = "full" if url.startswith("https:") or proxied else "none"
    with _tls_lock:
        if kind not in _tls:
            context = _trusted() if kind == "full" else ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            context.set_alpn_protocols(["http/1.1"])
            _tls[kind] = context
        return _tls[kind]


def _trusted() -> ssl.SSLContext:
    """The CAs httpx trusted: SSL_CERT_FILE's, else SSL_CERT_DIR's, else certifi's bundle
    (found without importing certifi); the system's store only without certifi."""
    if os.environ.get("SSL_CERT_FILE"):
        return ssl.create_default_context(cafile=os.environ["SSL_CERT_FILE"])
    if os.environ.get("SSL_CERT_DIR"):
        return ssl.create_default_context(capath=os.environ["SSL_CERT_DIR"])
    bundle = _package_file("certifi", "cacert.pem")
    return ssl.create_default_context(cafile=str(bundle) if bundle else None)


def _package_file(package: str, name: str) -> Path | None:
    """The file ``name`` in an installed ``package``, found without importing it."""
    spec = importlib.util.find_spec(package)
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = Path(folder) / name
        if path.is_file():
            return path
    return None


@contextlib.contextmanager
def _client(endpoint: Endpoint):
    """The HTTP client to ask ``endpoint`` with: the session's, kept for every request of
    the same timeout and TLS context (cascade.turns.sessions), or one for this request."""
    verify = _verify(endpoint.base)
    clients = SESSION.get()
    if clients is None:
        client = Client(endpoint.timeout, verify)
        try:
            yield client
        finally:
            client.close()
        return
    held = (endpoint.timeout, id(verify))
    client = clients.get(held)
    if client is None:
        client = clients[held] = Client(endpoint.timeout, verify)
    yield client


def _body(body: dict[str, Any]) -> bytes:
    """The request's JSON, as httpx's ``json=`` wrote it."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"),
                      allow_nan=False).encode("utf-8")


def _sent(headers: dict[str, str]) -> dict[str, str]:
    """The headers sent: the caller's, with the body's type and no compression asked."""
    return {"Content-Type": "application/json", "Accept-Encoding": "identity", **headers}


async def post_json(endpoint: Endpoint, url: str, body: dict[str, Any],
                    headers: dict[str, str]) -> tuple[Any, Response]:
    """POST ``body`` to ``url``: (the JSON the 2xx answer holds, the response). Raises
    StatusError for any other status, InternalServerError for a body that is not JSON."""
    with _client(endpoint) as client:
        response = await post(client, url, _body(body), _sent(headers))
    if not 200 <= response.status_code < 300:
        raise status_error(response)
    try:
        return json.loads(response.content), response
    except (ValueError, UnicodeDecodeError) as exc:
        raise InternalServerError(str(exc)) from exc


async def post_events(endpoint: Endpoint, url: str, body: dict[str, Any],
                      headers: dict[str, str], take: Callable[[str], bool]) -> Any:
    """POST ``body`` to ``url`` and read the Server-Sent Events answering it: each ``data:``
    line passed to ``take`` as it arrives (an event's name is in its data for both APIs),
    until ``take`` says the stream ended (False) or it ends. Returns the response's headers
    (case-insensitive ``get``). Raises StatusError for a status that is not 2xx."""
    with _client(endpoint) as client:
        response = await post(client, url, _body(body), _sent(headers), stream=True)
        if not 200 <= response.status_code < 300:
            raise status_error(response)
        try:
            async for line in response.lines():
                if line.startswith("data:") and not take(line[5:].strip()):
                    break
        except BaseException:
            response.abort()  # cancelled, or a bad event: the connection is not reused
            raise
        response.close()
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
    return _package_file("litellm", "model_prices_and_context_window_backup.json")


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
