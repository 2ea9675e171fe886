"""What the HTTP providers share: one POST through httpx, answered with JSON or streamed, its
failures, and a bound on what is read. What httpx does (connections, TLS, proxies, no
redirects), the bound (``CASCADE_MAX_REPLY_BYTES``) and the deadline (``CASCADE_TIMEOUT``,
for the whole call, not each read): docs/configuration.md. A status that is not 2xx raises
an ``httpx.HTTPStatusError`` subclass named as litellm names it (RateLimitError for 429,
...), worded as the openai SDK words it; a 2xx that is not an answer, InternalServerError.
"""
from __future__ import annotations

import asyncio
import codecs
import contextlib
import json
import os
import re
import ssl
import sys
from collections.abc import AsyncIterator, Callable
from typing import Any

# httpx's command line client (httpx._main) imports rich when it is installed (litellm
# installs it): ~0.09 s of every commit attempt that asks a model, for a command cascade
# never runs. Marked absent, httpx defines its stand-in instead; the library is the same.
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
import httpx  # noqa: E402

from cascade.base.version import __version__
from cascade.base.text import shown_url
from cascade.turns.call import ProviderFailure, past_limit
from cascade.turns.sessions import SESSION

USER_AGENT = f"cascadingdev/{__version__}"
COST_HEADER = "x-litellm-response-cost"
ERROR_BODY_LIMIT = 64 * 1024
DEADLINE_MARGIN = 0.1

# What litellm calls an HTTP status (observed with 1.106.2; 529 is Anthropic's "overloaded").
_STATUS_NAMES = {400: "BadRequestError", 401: "AuthenticationError", 403: "PermissionDeniedError",
                 404: "NotFoundError", 408: "Timeout", 422: "UnprocessableEntityError",
                 429: "RateLimitError", 500: "InternalServerError", 502: "BadGatewayError",
                 503: "ServiceUnavailableError", 504: "Timeout", 529: "InternalServerError"}
_LINE_END = re.compile(r"\r\n|\r|\n")
_status_classes: dict[str, type[httpx.HTTPStatusError]] = {}


class InternalServerError(Exception):
    """A 2xx answer that is not a reply (litellm's name for the same failure)."""


class Endpoint:
    """Where a model is asked: the base URL, the key sent (None: none), the seconds the
    whole call may take, and the most bytes of an answer read. Not a record: its repr must
    never show the key."""

    __slots__ = ("base", "key", "limit", "timeout")

    def __init__(self, base: str, key: str | None, timeout: float, limit: int) -> None:
        self.base, self.key, self.timeout, self.limit = base, key, timeout, limit

    @property
    def shown(self) -> str:
        """The base URL as a message names it (no password, no query string)."""
        return shown_url(self.base)


@contextlib.asynccontextmanager
async def _client(endpoint: Endpoint) -> AsyncIterator[httpx.AsyncClient]:
    """The client to ask ``endpoint`` with: the session's, kept for every request of the
    same timeout and TLS trust, or one for this request."""
    clients = SESSION.get()
    if clients is None:
        async with _new_client(endpoint) as client:
            yield client
        return
    kept = (endpoint.timeout, _verify(endpoint) is True)
    client = clients.get(kept)
    if client is None:
        client = clients[kept] = _new_client(endpoint)
    yield client


_PROXY_VARS = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY",
               "all_proxy")


def _verify(endpoint: Endpoint) -> ssl.SSLContext | bool:
    """True (httpx's: certifi's bundle, or SSL_CERT_FILE / SSL_CERT_DIR) for an https
    endpoint or when a proxy is set; for a plain-http one without, a context that trusts no
    CA at all (loading the bundle costs ~50 ms, and any TLS it met would fail closed)."""
    if endpoint.base.startswith("https:") or any(os.environ.get(v) for v in _PROXY_VARS):
        return True
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


def _new_client(endpoint: Endpoint) -> httpx.AsyncClient:
    try:
        return httpx.AsyncClient(timeout=httpx.Timeout(endpoint.timeout), follow_redirects=False,
                                 trust_env=True, verify=_verify(endpoint),
                                 headers={"User-Agent": USER_AGENT})
    except ImportError as exc:  # a SOCKS proxy in the environment, without socksio
        if "socks" not in str(exc).lower():
            raise
        raise ProviderFailure(f"cannot connect to {endpoint.shown}: proxy error (a SOCKS proxy "
                              "needs the socksio package: pip install 'httpx[socks]'; or give "
                              "the proxy as http://host:port)") from None


@contextlib.asynccontextmanager
async def _answered(endpoint: Endpoint, url: str, body: dict[str, Any],
                    headers: dict[str, str]) -> AsyncIterator[httpx.Response]:
    """POST ``body`` to ``url``: the 2xx response, its body not read yet; a status error
    for any other status. No compression is asked: a compressed body could inflate past the
    bound between two reads."""
    sent = {"Content-Type": "application/json", "Accept-Encoding": "identity", **headers}
    async with _client(endpoint) as client, client.stream(
            "POST", url, json=body, headers=sent) as response:
        if not 200 <= response.status_code < 300:
            raise await _refused(response)
        yield response


async def _chunks(response: httpx.Response, limit: int, where: str) -> AsyncIterator[bytes]:
    """The body of ``response`` as it arrives, up to ``limit`` bytes; past it,
    ProviderFailure."""
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > limit:
            raise past_limit(f"the response from {where} is larger than", limit)
        yield chunk


def _read(response: httpx.Response, content: bytes) -> httpx.Response:
    """``response`` with its body ``content`` read (what ``.text`` and ``.json()`` give)."""
    return httpx.Response(response.status_code, headers=response.headers, content=content,
                          request=response.request)


async def _refused(response: httpx.Response) -> httpx.HTTPStatusError:
    """The exception for a status that is not 2xx, its body read up to 64 KiB."""
    body = b""
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) >= ERROR_BODY_LIMIT:
            break
    read = _read(response, body[:ERROR_BODY_LIMIT])
    name = _STATUS_NAMES.get(read.status_code, "APIError")
    cls = _status_classes.get(name)
    if cls is None:
        cls = _status_classes[name] = type(name, (httpx.HTTPStatusError,),
                                           {"__module__": __name__})
    text = read.text.strip()
    message = f"Error code: {read.status_code}" + (f" - {text[:300]}" if text else "")
    return cls(message, request=read.request, response=read)


async def _lines(response: httpx.Response, limit: int, where: str) -> AsyncIterator[str]:
    """The lines of a streamed body (ended by LF, CR LF or CR), its bytes counted against
    ``limit`` as they arrive (a body without a line end is bounded too)."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    pending = ""
    async for chunk in _chunks(response, limit, where):
        *done, pending = _LINE_END.split(pending + decoder.decode(chunk))
        for line in done:
            yield line
    for line in _LINE_END.split(pending + decoder.decode(b"", final=True)):
        if line:
            yield line


async def _deadline(endpoint: Endpoint, call: Any) -> Any:
    """``call`` (a coroutine) within the endpoint's total time (and a tenth of a second, so
    that a connect timeout, which starts with it, is said as one)."""
    try:
        return await asyncio.wait_for(call, endpoint.timeout + DEADLINE_MARGIN)
    except asyncio.TimeoutError:
        raise httpx.ReadTimeout(f"no whole answer within {endpoint.timeout:g}s") from None


async def post_json(endpoint: Endpoint, url: str, body: dict[str, Any],
                    headers: dict[str, str]) -> tuple[Any, httpx.Response]:
    """POST ``body`` to ``url``: (the JSON the 2xx answer holds, the response). Raises a
    status error for any other status, InternalServerError for a body that is not JSON,
    ProviderFailure for one past the limit."""
    async def call() -> tuple[Any, httpx.Response]:
        async with _answered(endpoint, url, body, headers) as response:
            content = b"".join([c async for c in _chunks(response, endpoint.limit,
                                                         endpoint.shown)])
        try:
            return json.loads(content), _read(response, content)
        except (ValueError, UnicodeDecodeError) as exc:
            raise InternalServerError(str(exc)) from exc

    return await _deadline(endpoint, call())


async def post_events(endpoint: Endpoint, url: str, body: dict[str, Any],
                      headers: dict[str, str], take: Callable[[str], bool]) -> httpx.Headers:
    """POST ``body`` to ``url`` and read the Server-Sent Events answering it: each ``data:``
    line passed to ``take`` as it arrives, until ``take`` says the stream ended (False) or
    it ends. Returns the response's headers. Raises a status error for a status that is not
    2xx, ProviderFailure once the stream passes the limit."""
    return await _streamed(endpoint, url, body, headers,
                           lambda line: line[5:].strip() if line.startswith("data:") else None,
                           take)


async def post_lines(endpoint: Endpoint, url: str, body: dict[str, Any],
                     headers: dict[str, str], take: Callable[[str], bool]) -> httpx.Headers:
    """As ``post_events``, for a stream of one JSON object per line (NDJSON): each
    non-empty line passed to ``take``."""
    return await _streamed(endpoint, url, body, headers, lambda line: line.strip() or None,
                           take)


async def _streamed(endpoint: Endpoint, url: str, body: dict[str, Any],  # long: a POST's parts
                    headers: dict[str, str], pick: Callable[[str], str | None],
                    take: Callable[[str], bool]) -> httpx.Headers:
    """A streamed POST: each line ``pick`` keeps (None: skipped) passed to ``take`` until it
    says the stream ended; within the endpoint's deadline and its bound."""
    async def call() -> httpx.Headers:
        async with _answered(endpoint, url, body, headers) as response:
            async for line in _lines(response, endpoint.limit, endpoint.shown):
                picked = pick(line)
                if picked is not None and not take(picked):
                    break
            return response.headers

    return await _deadline(endpoint, call())


def streamed_json(data: str, what: str, where: str) -> Any:
    """One piece of a streamed answer (a ``what`` from ``where``) read as JSON;
    InternalServerError when it is not JSON."""
    try:
        return json.loads(data)
    except ValueError as exc:
        raise InternalServerError(f"a streamed {what} from {where} is not JSON: "
                                  f"{data[:80]!r}") from exc


class Streamed:
    """What a streamed answer said so far: its text, in pieces (each passed to ``on_text`` as
    it arrives), its usage and the model that served it; ``base``: the endpoint, as shown."""

    def __init__(self, base: str, on_text: Callable[[str], None]) -> None:
        self.base, self.on_text = base, on_text
        self.parts: list[str] = []
        self.usage: dict[str, Any] = {}
        self.served: Any = None

    def add(self, text: Any) -> None:
        """One piece of the reply's text (none: an empty one, or one that is not text)."""
        if isinstance(text, str) and text:
            self.parts.append(text)
            self.on_text(text)
