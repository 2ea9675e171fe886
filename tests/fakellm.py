"""A scriptable fake OpenAI-compatible chat-completions server for integration tests.

Stdlib only (``http.server.ThreadingHTTPServer`` on 127.0.0.1, a random free port,
served from a daemon thread). No dependency on the ``cascade`` package; ``pytest`` is
imported only to define the optional ``fake_llm`` fixture.

Typical use (through litellm)::

    with FakeLLM() as fake:
        fake.script("AI-Architect", "first reply", "second reply")
        fake.script("AI-Security", http_error(503), "recovered")
        fake.default("OK")
        litellm.completion(model="openai/fake", api_base=fake.url,
                           api_key="sk-test", messages=[...], num_retries=0)

Endpoints
    POST /v1/chat/completions and /chat/completions   -> chat.completion JSON
        (``"stream": true`` is answered with Server-Sent Events: chat.completion.chunk
        objects followed by ``data: [DONE]``)
    POST /v1/messages and /messages                   -> an Anthropic Messages API message
        (``{"type": "message", "content": [{"type": "text", ...}], "usage": {"input_tokens",
        "output_tokens"}}``; ``"stream": true`` is answered with its named events:
        message_start, content_block_start, ping, content_block_delta (text_delta) ...,
        content_block_stop, message_delta, message_stop). The request is checked as the API
        checks it: ``max_tokens`` required, no ``system`` role among the messages (400).
        Errors carry ``{"type": "error", "error": {"type", "message"}}``; the text of the
        top-level ``system`` counts as message text for scripts. ``FakeLLM.root`` is the
        base URL to give an Anthropic client (it appends ``/v1/messages``).
    GET  /v1/models and /models                       -> a one-entry model list
    anything else                                     -> 404 with an OpenAI-style error

Scripting rules
    * ``script(match, *replies)`` queues replies for chat requests whose message text
      (the ``content`` of every message, text parts of list contents included, joined
      with newlines) contains ``match`` (plain, case-sensitive substring test).
    * Scripts are consulted in the order they were first registered; the first one
      whose ``match`` occurs and that still has a reply wins. Re-scripting the same
      ``match`` replaces its queue (keeping its original priority).
    * Replies are consumed in order. **Sticky last** (the default, ``sticky=True``):
      when one reply remains it is reused forever. With ``sticky=False`` the queue
      empties, and an exhausted script no longer matches (the request falls through to
      later scripts, then to the default).
    * ``default(reply)`` answers everything unmatched (initially the string
      ``DEFAULT_REPLY``). The default is never consumed.

A reply is one of
    * ``str`` - the assistant content (served verbatim: prose, fenced JSON, raw
      newlines, forged markers ... anything);
    * ``None`` - assistant content JSON ``null``;
    * a ``Fault`` - see its docstring and the helper constructors ``delayed``,
      ``http_error``, ``rate_limited``, ``hang``, ``malformed``, ``empty``,
      ``null_content``;
    * a callable ``f(request: RecordedRequest) -> reply`` evaluated per request
      (it may return any of the above).
"""

from __future__ import annotations

import json
import socket
import ssl
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Mapping, Union

__all__ = [
    "DEFAULT_REPLY",
    "HANG_MAX_SECONDS",
    "FakeLLM",
    "Fault",
    "Headers",
    "RecordedRequest",
    "delayed",
    "empty",
    "fake_llm",
    "hang",
    "http_error",
    "malformed",
    "message_text",
    "null_content",
    "rate_limited",
]

DEFAULT_REPLY = "[fakellm: no scripted reply]"
HANG_MAX_SECONDS = 60.0
"""``hang()`` without a duration waits until ``stop()`` or this many seconds."""

_UNSET: Any = object()


# --------------------------------------------------------------------------- replies


@dataclass(frozen=True)
class Fault:
    """A reply specification beyond plain content.

    Fields (all combinable where it makes sense):

    content        assistant content; ``str`` or ``None`` (JSON null). Default ``""``.
    delay          seconds to wait before answering (aborted early by ``stop()``).
    status         HTTP status. Non-2xx statuses get an OpenAI-style error body
                   ``{"error": {"message", "type", "code"}}`` instead of a completion.
    retry_after    value for a ``Retry-After`` response header (any status).
    headers        extra response headers.
    error_message  message of the error body for non-2xx statuses.
    hang           ``True``: never answer - wait until ``stop()`` (or
                   ``HANG_MAX_SECONDS``) then drop the connection without a response.
                   A number: the same, for at most that many seconds.
    raw_body       bytes/str served verbatim with the given status and
                   ``Content-Type: application/json`` (use for malformed bodies).
    finish_reason  ``finish_reason`` of the choice (default ``"stop"``).
    chunk_delay    a streamed reply (``stream: true``): seconds between its chunks, so a
                   client can be seen showing the text as it arrives.
    stream_error   a streamed Messages API reply: after the text, an ``error`` event of this
                   type (e.g. ``"overloaded_error"``) instead of the message's end.
    flood          a body that does not stop: a number of bytes (sent with that
                   Content-Length, in 64 KiB writes, as the start of a completion whose
                   content never closes), or ``"chunked"``/``"events"``: chunked transfer
                   that never ends (bytes without a line end, or completion chunk events) until
                   the client goes away or ``stop()``. Served bytes: ``flooded``.
    """

    content: str | None = ""
    delay: float = 0.0
    status: int = 200
    retry_after: str | int | float | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    error_message: str | None = None
    hang: bool | float = False
    raw_body: bytes | str | None = None
    finish_reason: str = "stop"
    chunk_delay: float = 0.0  # a streamed reply: seconds between its chunks
    stream_error: str | None = None  # a streamed Messages API reply: an error event at the end
    flood: int | str | None = None  # a body that does not stop (see above)


Reply = Union[str, None, Fault, Callable[["RecordedRequest"], Any]]


def delayed(content: str | None, seconds: float) -> Fault:
    """``content`` served after ``seconds``."""
    return Fault(content=content, delay=seconds)


def streamed(content: str, chunk_delay: float) -> Fault:
    """``content``, streamed (to a ``stream: true`` request) with ``chunk_delay`` seconds
    between chunks of 16 characters; served whole otherwise."""
    return Fault(content=content, chunk_delay=chunk_delay)


def http_error(status: int, message: str | None = None, *,
               retry_after: str | int | float | None = None, delay: float = 0.0) -> Fault:
    """An HTTP error status (500, 503, 429 ...) with an OpenAI-style error body."""
    return Fault(status=status, error_message=message, retry_after=retry_after, delay=delay)


def rate_limited(retry_after: str | int | float | None = 1, message: str | None = None) -> Fault:
    """HTTP 429 with a ``Retry-After`` header (``None`` omits the header)."""
    return http_error(429, message or "Rate limit reached (fakellm)", retry_after=retry_after)


def hang(seconds: float | None = None) -> Fault:
    """Never answer: hold the connection until ``stop()`` (or ``seconds``), then drop it."""
    return Fault(hang=True if seconds is None else float(seconds))


def malformed(body: bytes | str = b'{"id": "chatcmpl-broken", "choices": [ this is not json',
              status: int = 200) -> Fault:
    """A response whose body is not valid JSON (served as ``application/json``)."""
    return Fault(raw_body=body, status=status)


def empty() -> Fault:
    """A well-formed completion whose content is ``""``."""
    return Fault(content="")


def null_content() -> Fault:
    """A well-formed completion whose content is JSON ``null``."""
    return Fault(content=None)


# --------------------------------------------------------------------------- records


class Headers(dict):
    """Request headers: a dict with lower-cased keys and case-insensitive lookup."""

    def __init__(self, items: Any = ()) -> None:
        super().__init__((str(k).lower(), v) for k, v in dict(items).items())

    def __getitem__(self, key: str) -> str:
        return super().__getitem__(key.lower())

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and super().__contains__(key.lower())

    def get(self, key: str, default: Any = None) -> Any:
        return super().get(key.lower(), default)


@dataclass
class RecordedRequest:
    """One HTTP request the fake received (any path, any method)."""

    method: str
    path: str
    headers: Headers           # case-insensitive (keys stored lower-cased)
    raw: bytes                 # request body bytes exactly as received
    body: Any                  # parsed JSON body, or None (no body / not JSON)
    text: str                  # concatenated message text ("" for non-chat requests)
    timestamp: float           # time.time() when the request line was read
    matched: str | None = None  # the script ``match`` that answered, None = default
    wire: bytes = b""          # request line + headers + body as received
    peer: tuple = ()           # the client's (address, port): one per connection

    @property
    def is_chat(self) -> bool:
        """A model request: a chat completion or a Messages API message."""
        return self.method == "POST" and _route(self.path) in ("chat", "messages")

    @property
    def messages(self) -> list:
        return list(self.body.get("messages") or []) if isinstance(self.body, dict) else []


def message_text(body: Any) -> str:
    """The concatenated ``content`` of all messages of a chat request body (a Messages API
    request's top-level ``system`` first)."""
    if not isinstance(body, dict):
        return ""
    parts: list[str] = []
    system = body.get("system")
    if isinstance(system, str):
        parts.append(system)
    elif isinstance(system, list):
        parts.extend(b["text"] for b in system
                     if isinstance(b, dict) and isinstance(b.get("text"), str))
    for msg in body.get("messages") or []:
        if not isinstance(msg, dict):
            continue
        content = msg.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            for part in content:
                if isinstance(part, dict) and isinstance(part.get("text"), str):
                    parts.append(part["text"])
                elif isinstance(part, str):
                    parts.append(part)
    return "\n".join(parts)


def _string_leaves(obj: Any, out: list[str]) -> None:
    if isinstance(obj, str):
        out.append(obj)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            out.append(str(k))
            _string_leaves(v, out)
    elif isinstance(obj, list):
        for v in obj:
            _string_leaves(v, out)


def _route(path: str) -> str | None:
    p = path.split("?", 1)[0].rstrip("/")
    if p in ("/v1/chat/completions", "/chat/completions"):
        return "chat"
    if p in ("/v1/messages", "/messages"):
        return "messages"
    if p in ("/v1/models", "/models"):
        return "models"
    return None


def _tokens(text: str) -> int:
    return len(text) // 4


_ANTHROPIC_ERRORS = {400: "invalid_request_error", 401: "authentication_error",
                     403: "permission_error", 404: "not_found_error", 413: "request_too_large",
                     429: "rate_limit_error", 500: "api_error", 529: "overloaded_error"}


def _refused(body: Any, route: str | None) -> str | None:
    """Why a model request is refused with 400 (as the API it imitates refuses it), or None."""
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return "fakellm: request body must be a JSON object with 'messages'"
    if route != "messages":
        return None
    if not isinstance(body.get("max_tokens"), int):
        return "max_tokens: Field required"
    if any(isinstance(m, dict) and m.get("role") not in ("user", "assistant")
           for m in body["messages"]):
        return ('messages: Unexpected role "system". The Messages API accepts a top-level '
                '`system` parameter, not "system" as an input message role.')
    return None


# --------------------------------------------------------------------------- server


class _Script:
    __slots__ = ("match", "replies", "sticky")

    def __init__(self, match: str, replies: list, sticky: bool):
        self.match = match
        self.replies = replies
        self.sticky = sticky


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    fake: "FakeLLM"
    tls: ssl.SSLContext | None = None

    def get_request(self):  # type: ignore[no-untyped-def]
        sock, address = super().get_request()
        if self.tls is not None:  # the handshake happens on the first read, in its thread
            sock = self.tls.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return sock, address


class _Handler(BaseHTTPRequestHandler):
    # HTTP/1.0: one request per connection, closed after the response. Keeps shutdown
    # simple (no idle keep-alive threads) and lets SSE bodies end at connection close.
    protocol_version = "HTTP/1.0"
    server: _Server
    timeout = 30  # socket read timeout: a client that never sends its body can't pin a thread

    def log_message(self, format: str, *args: Any) -> None:  # silence stderr logging
        pass

    def do_GET(self) -> None:
        self.server.fake._handle(self)

    def do_POST(self) -> None:
        self.server.fake._handle(self)

    def do_PUT(self) -> None:
        self.server.fake._handle(self)

    def do_DELETE(self) -> None:
        self.server.fake._handle(self)


class _KeepAliveHandler(_Handler):
    """HTTP/1.1: connections kept open between requests (as a real server keeps them),
    bodies sized by Content-Length, streams sent chunked."""
    protocol_version = "HTTP/1.1"


class FakeLLM:
    """A fake OpenAI-compatible chat-completions server. See the module docstring."""

    def __init__(self, default: Reply = DEFAULT_REPLY, *, model_ids: tuple[str, ...] = ("fake",),
                 keep_alive: bool | float = False, tls: ssl.SSLContext | None = None):
        """``keep_alive``: speak HTTP/1.1 and keep each connection open for the client's next
        request (``RecordedRequest.peer`` tells the connections apart) -- a number: close one
        idle that many seconds; else HTTP/1.0, one request per connection. ``tls``: serve
        https with this (server) context."""
        self._keep_alive = keep_alive
        self._tls = tls
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._scripts: list[_Script] = []
        self._default: Reply = default
        self._requests: list[RecordedRequest] = []
        self._model_ids = tuple(model_ids)
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self.flooded = 0  # bytes of Fault.flood bodies served

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> "FakeLLM":
        if self._server is not None:
            return self
        self._stop.clear()
        handler: type[_Handler] = _Handler
        if self._keep_alive is not False:
            handler = _KeepAliveHandler
            if self._keep_alive is not True:
                handler = type("_IdleHandler", (handler,), {"timeout": float(self._keep_alive)})
        server = _Server(("127.0.0.1", 0), handler)
        server.fake = self
        server.tls = self._tls
        self._server = server
        # serve_forever looks for shutdown() between polls: stop() waits up to one poll, at
        # every test's end (876 tests use this server); 5 ms costs no measurable CPU
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.005},
            name=f"fakellm:{server.server_address[1]}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving. Aborts pending delays/hangs (their connections are dropped)."""
        server, self._server = self._server, None
        self._stop.set()
        if server is None:
            return
        server.shutdown()
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> "FakeLLM":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("FakeLLM is not running (call start() or use it as a context manager)")
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        """The ``api_base`` to give litellm/OpenAI clients: ``http://127.0.0.1:PORT/v1``."""
        return f"{self.root}/v1"

    @property
    def root(self) -> str:
        """The base URL to give an Anthropic client: ``http://127.0.0.1:PORT``."""
        return f"{'https' if self._tls else 'http'}://127.0.0.1:{self.port}"

    @property
    def running(self) -> bool:
        return self._server is not None

    # ------------------------------------------------------------------ scripting

    def script(self, match: str, *replies: Reply, sticky: bool = True) -> "FakeLLM":
        """Queue ``replies`` for chat requests whose message text contains ``match``."""
        if not replies:
            raise ValueError("script() needs at least one reply")
        with self._lock:
            for s in self._scripts:
                if s.match == match:
                    s.replies, s.sticky = list(replies), sticky
                    break
            else:
                self._scripts.append(_Script(match, list(replies), sticky))
        return self

    def default(self, reply: Reply) -> "FakeLLM":
        """Set the reply for requests no script matches (never consumed)."""
        with self._lock:
            self._default = reply
        return self

    def pending(self, match: str) -> int:
        """How many replies are still queued for ``match`` (0 if never scripted)."""
        with self._lock:
            return next((len(s.replies) for s in self._scripts if s.match == match), 0)

    def reset(self) -> None:
        """Forget scripts, the default (back to ``DEFAULT_REPLY``) and recorded requests."""
        with self._lock:
            self._scripts.clear()
            self._default = DEFAULT_REPLY
            self._requests.clear()

    # ------------------------------------------------------------------ recording

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot (copy) of every request received, in arrival order."""
        with self._lock:
            return list(self._requests)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.is_chat]

    def calls(self, match: str | None = None) -> int:
        """Number of chat-completion requests (whose message text contains ``match``)."""
        return sum(1 for r in self.requests if r.is_chat and (match is None or match in r.text))

    def all_bytes(self) -> bytes:
        """Every byte received: request lines, headers and bodies, concatenated."""
        return b"\n".join(r.wire for r in self.requests)

    def all_text(self) -> str:
        """Every byte received, decoded (UTF-8, undecodable bytes replaced), followed by
        every string (keys and values) of every JSON body *after* JSON decoding - so a
        secret is found even when the client JSON-escaped it (``\\uXXXX``, ``\\n``, ``\\"``).
        Meant for ``assert secret not in fake.all_text()``."""
        reqs = self.requests
        parts = [r.wire.decode("utf-8", "replace") for r in reqs]
        for r in reqs:
            _string_leaves(r.body, parts)
        return "\n".join(parts)

    # ------------------------------------------------------------------ serving

    def _pick(self, text: str) -> tuple[Reply, str | None]:
        with self._lock:
            for s in self._scripts:
                if s.replies and s.match in text:
                    if len(s.replies) > 1 or not s.sticky:
                        return s.replies.pop(0), s.match
                    return s.replies[0], s.match
            return self._default, None

    def _handle(self, h: _Handler) -> None:
        received = time.time()
        raw = self._read_body(h)
        head = "".join([h.requestline, "\r\n"] + [f"{k}: {v}\r\n" for k, v in h.headers.items()])
        head_bytes = head.encode("latin-1", "replace") + b"\r\n"
        try:
            body = json.loads(raw) if raw else None
        except (ValueError, UnicodeDecodeError):
            body = None
        route = _route(h.path)
        is_chat = h.command == "POST" and route in ("chat", "messages")
        rec = RecordedRequest(
            method=h.command, path=h.path, headers=Headers(h.headers.items()), raw=raw,
            body=body, text=message_text(body) if is_chat else "", timestamp=received,
            wire=head_bytes + raw, peer=tuple(h.client_address))

        if not is_chat:
            with self._lock:
                self._requests.append(rec)
            if h.command == "GET" and route == "models":
                data = [{"id": m, "object": "model", "created": 0, "owned_by": "fakellm"}
                        for m in self._model_ids]
                self._send_json(h, 200, {"object": "list", "data": data})
            else:
                self._send_error(h, 404, f"fakellm: no route for {h.command} {h.path}",
                                 "invalid_request_error")
            return

        refused = _refused(body, route)
        if refused:
            with self._lock:
                self._requests.append(rec)
            self._send_error(h, 400, refused, "invalid_request_error", anthropic=route == "messages")
            return

        reply, matched = self._pick(rec.text)
        rec.matched = matched
        with self._lock:
            self._requests.append(rec)

        if callable(reply) and not isinstance(reply, Fault):
            reply = reply(rec)
        fault = reply if isinstance(reply, Fault) else Fault(content=reply)

        if fault.delay > 0 and self._stop.wait(fault.delay):
            self._drop(h)
            return
        if fault.hang:
            limit = HANG_MAX_SECONDS if fault.hang is True else float(fault.hang)
            self._stop.wait(limit)
            self._drop(h)
            return

        extra = dict(fault.headers)
        if fault.retry_after is not None:
            extra["Retry-After"] = str(fault.retry_after)

        if fault.flood is not None:
            self._flood(h, fault.flood)
            return
        if fault.raw_body is not None:
            raw_out = fault.raw_body.encode() if isinstance(fault.raw_body, str) else fault.raw_body
            self._send_bytes(h, fault.status, raw_out, "application/json", extra)
            return
        if not 200 <= fault.status < 300:
            err_type = {429: "rate_limit_error", 401: "authentication_error",
                        400: "invalid_request_error", 404: "not_found_error"}.get(
                            fault.status, "server_error")
            msg = fault.error_message or f"fakellm: scripted HTTP {fault.status}"
            self._send_error(h, fault.status, msg, err_type, extra, anthropic=route == "messages")
            return
        if route == "messages":
            self._send_message(h, body, rec.text, fault, extra)
            return

        model = body.get("model") or "fake"
        content = fault.content
        prompt_tokens = _tokens(rec.text)
        completion_tokens = _tokens(content or "")
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                 "total_tokens": prompt_tokens + completion_tokens}
        cid = "chatcmpl-fake" + uuid.uuid4().hex[:24]
        created = int(time.time())

        if body.get("stream") is True:
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            self._send_sse(h, fault.status, cid, created, model, content, fault.finish_reason,
                           usage if include_usage else None, extra, fault.chunk_delay)
            return

        self._send_json(h, fault.status, {
            "id": cid,
            "object": "chat.completion",
            "created": created,
            "model": model,
            "system_fingerprint": "fp_fakellm",
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": content, "refusal": None},
                "logprobs": None,
                "finish_reason": fault.finish_reason,
            }],
            "usage": usage,
        }, extra)

    # ------------------------------------------------------------------ low-level I/O

    @staticmethod
    def _read_body(h: _Handler) -> bytes:
        if "chunked" in (h.headers.get("Transfer-Encoding") or "").lower():
            out = bytearray()
            while True:
                size_line = h.rfile.readline(65537)
                try:
                    size = int(size_line.split(b";", 1)[0].strip() or b"0", 16)
                except ValueError:
                    break
                if size == 0:
                    while h.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    break
                out += h.rfile.read(size)
                h.rfile.readline(65537)  # CRLF after each chunk
            return bytes(out)
        try:
            length = int(h.headers.get("Content-Length") or 0)
        except ValueError:
            length = 0
        return h.rfile.read(length) if length > 0 else b""

    @staticmethod
    def _drop(h: _Handler) -> None:
        """Close the connection without sending a response."""
        h.close_connection = True
        try:
            h.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _send_error(self, h: _Handler, status: int, message: str, err_type: str,
                    headers: Mapping[str, str] | None = None, *, anthropic: bool = False) -> None:
        if anthropic:  # the Messages API's error shape and type names
            err_type = _ANTHROPIC_ERRORS.get(status, "api_error")
            self._send_json(h, status, {"type": "error", "error": {"type": err_type,
                                                                   "message": message}}, headers)
            return
        self._send_json(h, status, {"error": {"message": message, "type": err_type,
                                              "param": None, "code": str(status)}}, headers)

    def _send_message(self, h: _Handler, body: dict, text: str, fault: Fault,
                      headers: Mapping[str, str]) -> None:
        """A Messages API answer: a message, or its events when the request streams."""
        content = fault.content or ""
        usage = {"input_tokens": _tokens(text), "output_tokens": _tokens(content)}
        stop = {"stop": "end_turn", "length": "max_tokens"}.get(fault.finish_reason,
                                                                fault.finish_reason)
        message = {"id": "msg_fake" + uuid.uuid4().hex[:20], "type": "message",
                   "role": "assistant", "model": body.get("model") or "fake",
                   "content": [{"type": "text", "text": content}] if fault.content is not None
                   else [], "stop_reason": stop, "stop_sequence": None, "usage": usage}
        if body.get("stream") is not True:
            self._send_json(h, fault.status, message, headers)
            return
        start = {**message, "content": [], "stop_reason": None,
                 "usage": {**usage, "output_tokens": 1}}
        events = [("message_start", {"message": start}),
                  ("content_block_start", {"index": 0,
                                           "content_block": {"type": "text", "text": ""}}),
                  ("ping", {})]
        for i in range(0, len(content), 16):
            events.append(("content_block_delta", {"index": 0, "delta": {
                "type": "text_delta", "text": content[i:i + 16]}}))
        if fault.stream_error:
            events.append(("error", {"error": {"type": fault.stream_error,
                                               "message": "fakellm: scripted stream error"}}))
        else:
            events += [("content_block_stop", {"index": 0}),
                       ("message_delta", {"delta": {"stop_reason": stop, "stop_sequence": None},
                                          "usage": {"output_tokens": usage["output_tokens"]}}),
                       ("message_stop", {})]
        self._send_events(h, fault.status, [
            f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n".encode()
            for name, data in events], headers, fault.chunk_delay)

    def _send_json(self, h: _Handler, status: int, obj: Any,
                   headers: Mapping[str, str] | None = None) -> None:
        self._send_bytes(h, status, json.dumps(obj).encode("utf-8"), "application/json", headers)

    def _flood(self, h: _Handler, flood: int | str) -> None:
        """A body that does not stop (Fault.flood); the bytes served are counted."""
        block = b"x" * 65536
        try:
            h.send_response(200)
            h.send_header("Content-Type", "text/event-stream" if flood == "events"
                          else "application/json")
            if isinstance(flood, int):
                h.send_header("Content-Length", str(flood))
            else:
                h.send_header("Transfer-Encoding", "chunked")
            h.end_headers()
            if isinstance(flood, int):
                head = b'{"choices": [{"message": {"role": "assistant", "content": "'
                h.wfile.write(head)
                left = flood - len(head)
                while left > 0 and not self._stop.is_set():
                    piece = block[:left]
                    h.wfile.write(piece)
                    left -= len(piece)
                    self.flooded += len(piece)
            else:
                line = (b'data: {"choices": [{"index": 0, "delta": {"content": "' + b"y" * 960
                        + b'"}}]}\n\n') if flood == "events" else block
                piece = b"%x\r\n" % len(line) + line + b"\r\n"
                while not self._stop.is_set():
                    h.wfile.write(piece)
                    self.flooded += len(line)
        except OSError:  # the client went away: what a bounded reader does
            pass
        h.close_connection = True

    @staticmethod
    def _send_bytes(h: _Handler, status: int, data: bytes, ctype: str,
                    headers: Mapping[str, str] | None = None) -> None:
        kept = h.protocol_version == "HTTP/1.1"
        try:
            h.send_response(status)
            h.send_header("Content-Type", ctype)
            h.send_header("Content-Length", str(len(data)))
            if not kept:
                h.send_header("Connection", "close")
            for k, v in (headers or {}).items():
                h.send_header(k, v)
            h.end_headers()
            h.wfile.write(data)
            h.wfile.flush()
        except OSError:  # client went away (e.g. it timed out)
            h.close_connection = True
        if not kept:
            h.close_connection = True

    @staticmethod
    def _send_sse(h: _Handler, status: int, cid: str, created: int, model: str,
                  content: str | None, finish_reason: str, usage: dict | None,
                  headers: Mapping[str, str], chunk_delay: float = 0.0) -> None:
        def chunk(delta: dict, finish: str | None, usage_: dict | None = None,
                  choices: bool = True) -> bytes:
            obj: dict[str, Any] = {
                "id": cid, "object": "chat.completion.chunk", "created": created,
                "model": model, "system_fingerprint": "fp_fakellm",
                "choices": [{"index": 0, "delta": delta, "logprobs": None,
                             "finish_reason": finish}] if choices else [],
            }
            if usage_ is not None:
                obj["usage"] = usage_
            return b"data: " + json.dumps(obj).encode("utf-8") + b"\n\n"

        events = [chunk({"role": "assistant", "content": ""}, None)]
        text = content or ""
        for i in range(0, len(text), 16):  # several small deltas, like a real server
            events.append(chunk({"content": text[i:i + 16]}, None))
        events.append(chunk({}, finish_reason))
        if usage is not None:
            events.append(chunk({}, None, usage, choices=False))
        events.append(b"data: [DONE]\n\n")
        FakeLLM._send_events(h, status, events, headers, chunk_delay)

    @staticmethod
    def _send_events(h: _Handler, status: int, events: list[bytes],
                     headers: Mapping[str, str], chunk_delay: float) -> None:
        kept = h.protocol_version == "HTTP/1.1"  # then each event is one chunk
        try:
            h.send_response(status)
            h.send_header("Content-Type", "text/event-stream")
            h.send_header("Cache-Control", "no-cache")
            h.send_header("Transfer-Encoding" if kept else "Connection",
                          "chunked" if kept else "close")
            for k, v in headers.items():
                h.send_header(k, v)
            h.end_headers()
            for ev in events:
                h.wfile.write(b"%x\r\n%s\r\n" % (len(ev), ev) if kept else ev)
                if chunk_delay:
                    h.wfile.flush()
                    time.sleep(chunk_delay)
            if kept:
                h.wfile.write(b"0\r\n\r\n")
            h.wfile.flush()
        except OSError:
            h.close_connection = True
        if not kept:
            h.close_connection = True


# --------------------------------------------------------------------------- fixture

try:  # the fixture is optional: the module stays importable without pytest
    import pytest
except ImportError:  # pragma: no cover
    pytest = None  # type: ignore[assignment]

if pytest is not None:
    @pytest.fixture
    def fake_llm():
        """A running FakeLLM for one test (function scope); stopped afterwards."""
        with FakeLLM() as fake:
            yield fake
else:  # pragma: no cover
    fake_llm = None  # type: ignore[assignment]
