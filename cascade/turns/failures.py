"""A failed call, said in one line by what happened: ``no credentials for <model>: set
<VAR>``, ``cannot connect to <endpoint>: connection refused``, ``Timeout: timed out after
<n>s``, ``<Error> (HTTP <n>): <server message>`` -- "HTTP <n>" only when a server really
answered with that status -- and whether it may pass when tried again (a timeout, a rate
limit, a server error, a dropped connection). Reads httpx's, the openai SDK's and litellm's
exceptions by name, without importing any of them.
"""
from __future__ import annotations

import ast
import asyncio
import errno
import json
import re
import socket
from typing import Any

from msgspec import Struct

from cascade.base.text import shown_url
from cascade.turns.call import ProviderFailure
from cascade.turns.keys import key_phrase

_RETRY_AFTER_CAP = 60.0
_RETRYABLE = ("RateLimitError", "InternalServerError", "ServiceUnavailableError", "Timeout",
              "APIConnectionError", "BadGatewayError", "APIError")

_CREDENTIAL_WORDS = re.compile(
    r"missing (\w+ )*(api[ _-]?key|credentials)|no api[ _-]?key|unable to locate credentials|"
    r"api_key client option must be set|could not automatically determine credentials|"
    r"partial credentials", re.IGNORECASE)
_ENDPOINT_SUFFIX = re.compile(r"/(chat/completions|completions|messages|responses|embeddings)\Z")


def _chain(exc: BaseException) -> list[BaseException]:
    out: list[BaseException] = []
    while exc is not None and len(out) < 20 and all(exc is not seen for seen in out):
        out.append(exc)
        exc = exc.__cause__ or exc.__context__
    return out


def _module(exc: BaseException) -> str:
    return type(exc).__module__.split(".")[0]


def _names(exc: BaseException) -> set[str]:
    return {cls.__name__ for cls in type(exc).__mro__}


def _http_response(exc: BaseException) -> Any:
    """The HTTP response a server really sent, if one is behind ``exc``. litellm attaches a
    made-up response with status 500 to failures that never reached a server (a refused
    connection, a missing key, a body that is not JSON); only the transport's own exceptions
    (httpx's HTTPStatusError, raised by the direct paths and by litellm's own client, and
    the openai SDK's APIStatusError) carry a real one."""
    for link in _chain(exc):
        response = getattr(link, "response", None)
        if response is None or not isinstance(getattr(response, "status_code", None), int):
            continue
        if any(cls.__name__ == "HTTPStatusError" and cls.__module__.startswith("httpx")
               for cls in type(link).__mro__):
            return response
        if _module(link) == "openai" and "APIStatusError" in _names(link):
            return response
    return None


def _status(exc: BaseException) -> int | None:
    """The HTTP status a server answered with, or None when no server answered."""
    response = _http_response(exc)
    if response is not None:
        return int(response.status_code)
    status = getattr(exc, "status_code", None)
    if (isinstance(status, int) and getattr(exc, "litellm_response_headers", None)
            and not any(isinstance(link, ValueError) or _transport(link) for link in _chain(exc))):
        return status  # a provider that checks the status itself, with the real headers
    return None


def _transport(link: BaseException) -> bool:
    """An exception of the transport itself (litellm's own APIConnectionError, which also
    wraps local errors such as a missing key, does not count)."""
    names, module = _names(link), _module(link)
    return ((module == "httpx" and names & {"TransportError", "InvalidURL"})
            or (module == "openai" and "APIConnectionError" in names)
            or (module == "aiohttp" and "ClientConnectionError" in names)
            or isinstance(link, OSError))


def _url_of(exc: BaseException) -> Any:
    for link in _chain(exc):
        if _module(link) not in ("httpx", "openai"):
            continue
        try:
            request = getattr(link, "request", None)
        except RuntimeError:  # httpx raises when an error has no request attached
            request = None
        url = getattr(request, "url", None)
        if url is not None and getattr(url, "host", None):
            return url
    return None


def _endpoint(exc: BaseException, endpoint: str | None) -> str | None:
    """The configured base URL, else the base of the URL that was requested (no query string,
    no user info: a key in a URL is never printed)."""
    if endpoint:
        return shown_url(endpoint)
    url = _url_of(exc)
    if url is None:
        return None
    path, cut = _ENDPOINT_SUFFIX.subn("", url.path or "")
    if not cut and "/models/" in path:
        path = path[: path.index("/models/")]
    port = f":{url.port}" if url.port else ""
    return f"{url.scheme}://{url.host}{port}{path}".rstrip("/")


def _clean(text: str) -> str:
    """The first line of a provider message without litellm's wrapping."""
    line = text.strip().splitlines()[0].strip() if text.strip() else ""
    line = re.sub(r"\blitellm\.", "", line)
    line = re.sub(r"ssl:<[^>]*> ", "", line)
    previous = None
    while previous != line:
        previous = line
        line = re.sub(r"^\w*(Error|Exception|Timeout)(: | - )", "", line)
        line = re.sub(r"^Error code: \d+( - )?", "", line)
        line = re.sub(r"^\w+Exception (- )?", "", line)
    structured = _error_text(line)
    if structured is not None:
        line = _clean(structured) if "\n" in structured.strip() else structured
    line = line.strip()
    line = line[:157] + "..." if len(line) > 160 else line
    # A LiteLLM proxy names its model group on a line of its own ("LiteLLM: model group 'x'
    # failed ...", older: "Received Model Group=x"): keep it -- the failure is the provider
    # behind the proxy, not the proxy.
    group = re.search(r"model group '([^']+)' failed|Received Model Group=([^\s\\\"']+)", text)
    if group and "model group" not in line:
        name = group.group(1) or group.group(2)
        line += f" (from the provider behind the proxy, model group {name})"
    return line


def _error_text(text: str) -> str | None:
    """The message of an OpenAI-style error body, given as JSON or as a Python dict repr."""
    if not text.startswith("{"):
        return None
    try:
        body = json.loads(text)
    except ValueError:
        try:
            body = ast.literal_eval(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return None
    return _body_message(body)


def _body_message(body: Any) -> str | None:
    if not isinstance(body, dict):
        return None
    error = body.get("error", body)
    if isinstance(error, str):
        return error
    if isinstance(error, dict):
        for key in ("message", "detail", "error"):
            if isinstance(error.get(key), str) and error[key].strip():
                return error[key].strip()
    return None


def _server_message(exc: BaseException) -> str:
    response = _http_response(exc)
    if response is not None:
        try:
            message = _body_message(response.json())
        except Exception:  # noqa: BLE001 - not JSON, not read, ...
            message = None
        if message:
            return _clean(message)
    message = _clean(str(exc))
    return "" if re.fullmatch(r"(Error code: )?\d{3}", message) else message


def _connect_reason(chain: list[BaseException], timeout: float | None) -> str | None:
    """Why a connection could not be made, or None when it was made (then dropped)."""
    import ssl  # OpenSSL: loaded only once a connection failed (the client loaded it by then)

    for link in chain:
        if isinstance(link, ConnectionRefusedError):
            return "connection refused"
        if isinstance(link, socket.gaierror):
            return f"DNS lookup failed ({link.strerror or link})"
        if isinstance(link, ssl.SSLError):
            return f"TLS error ({getattr(link, 'reason', None) or link})"
        if isinstance(link, OSError) and link.errno in (errno.ENETUNREACH, errno.EHOSTUNREACH):
            return "network unreachable" if link.errno == errno.ENETUNREACH else "host unreachable"
        names = _names(link)
        if "ConnectTimeout" in names:
            return f"timed out after {timeout:g}s" if timeout else "connect timed out"
        if "ProxyError" in names:
            return f"proxy error ({_clean(str(link))})"
    for link in chain:
        names = _names(link)
        if "ConnectError" in names or "ClientConnectorError" in names:
            inner = [x for x in chain if isinstance(x, OSError) and x.strerror]
            return inner[-1].strerror if inner else (_clean(str(link)) or "connection failed")
    return None


class Failure(Struct):
    message: str
    retryable: bool


def classify(exc: BaseException, *, model: str | None = None, endpoint: str | None = None,
              timeout: float | None = None, key_hint: str | None = None) -> Failure:
    if isinstance(exc, ProviderFailure):
        return Failure(str(exc), exc.retryable)
    chain = _chain(exc)
    names = set().union(*(_names(link) for link in chain))
    model = model or getattr(exc, "model", None) or None
    where = _endpoint(exc, endpoint)
    status = _status(exc)
    name = type(exc).__name__

    if status is not None:  # a server answered
        return _refused(exc, status, model, where, key_hint)
    texts = " | ".join(str(link) for link in chain)
    if ("AuthenticationError" in names or "NoCredentialsError" in names
            or "DefaultCredentialsError" in names or _CREDENTIAL_WORDS.search(texts)):
        phrase = key_phrase(model) if model else None
        detail = phrase or _clean(str(chain[-1]))
        return Failure(f"no credentials for {model or 'the model'}: {detail}", False)
    unreached = _unreached(chain, names, texts, where, timeout)
    if unreached is not None:
        return unreached
    decode = next((link for link in chain if isinstance(link, json.JSONDecodeError)), None)
    if decode is not None:
        return Failure(f"{name}: the response from {where or 'the server'} is not valid JSON "
                       f"({_clean(str(decode))})", True)
    if "LLM Provider NOT provided" in texts:
        return Failure(f"unknown provider in model {model or '?'}: give a litellm provider "
                       "prefix, e.g. openai/<name> for an OpenAI-compatible endpoint", False)
    message = _clean(str(exc))
    local = getattr(exc, "status_code", None)
    client_error = isinstance(local, int) and 400 <= local < 500 and local not in (408, 429)
    retry = bool(names & set(_RETRYABLE)) and not client_error
    return Failure(f"{name}: {message}" if message else name, retry)


def _refused(exc: BaseException, status: int, model: str | None, where: str | None,
             key_hint: str | None) -> Failure:
    """A server answered with ``status`` (not 2xx): the credentials were refused, or the
    request (retried on 408, 429 and 5xx)."""
    message = _server_message(exc)
    if status in (401, 403):
        phrase = key_phrase(model) if model and not key_hint else None
        hint = key_hint or (f"check {phrase[len('set '):]}" if phrase else None)
        what = "credentials rejected" if status == 401 else "access denied"
        text = f"{what} by {where or 'the server'} (HTTP {status})"
        text += f": {message}" if message else ""
        text += f"; {hint}" if hint else ""
        return Failure(text, False)
    head = f"{type(exc).__name__} (HTTP {status})"
    return Failure(f"{head}: {message}" if message else head, status in (408, 429) or status >= 500)


def _unreached(chain: list[BaseException], names: set[str], texts: str, where: str | None,
               timeout: float | None) -> Failure | None:
    """The endpoint was not reached, or did not answer in time, or dropped the connection
    (all retried); None when ``chain`` says none of these."""
    timed_out = any(isinstance(link, (asyncio.TimeoutError, TimeoutError)) for link in chain) or \
        names & {"Timeout", "APITimeoutError", "TimeoutException", "ServerTimeoutError"}
    reason = _connect_reason(chain, timeout)
    place = where or "the endpoint"
    if reason is not None:
        return Failure(f"cannot connect to {place}: {reason}", True)
    if timed_out:
        if timeout is None:
            found = re.search(r"timeout value=([\d.]+)", texts)
            timeout = float(found.group(1)) if found else None
        text = f"Timeout: timed out after {timeout:g}s" if timeout else "Timeout: timed out"
        return Failure(text + (f" waiting for {where}" if where else ""), True)
    if any(_transport(link) for link in chain):
        if names & {"ServerDisconnectedError", "RemoteProtocolError", "ReadError"} or any(
                isinstance(link, ConnectionResetError) for link in chain):
            return Failure(f"no response from {place}: the connection was closed before an "
                           "answer", True)
        bad_url = next((link for link in chain if "InvalidURL" in _names(link)), None)
        if bad_url is not None:  # said by httpx, not by the int() behind it; never passes
            return Failure(f"cannot reach {place}: {_clean(str(bad_url))}", False)
        return Failure(f"cannot reach {place}: {_clean(str(chain[-1])) or 'connection error'}",
                       True)
    return None


def retry_after(exc: BaseException) -> float | None:
    headers = getattr(exc, "litellm_response_headers", None)
    if not headers:
        response = _http_response(exc)
        headers = getattr(response, "headers", None) or {}
    try:
        return max(0.0, min(float(headers.get("retry-after")), _RETRY_AFTER_CAP))
    except (AttributeError, TypeError, ValueError):  # no headers, no such header, not a number
        return None
