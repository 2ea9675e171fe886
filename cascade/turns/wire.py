"""HTTP/1.1 with the standard library (``http.client``), run off the event loop: how the
direct paths to a model (cascade.turns.transport) send a request and read its answer.

Why not an HTTP library: httpx (with httpcore, anyio, h11, certifi, idna) takes 0.2-0.3 s
to import here, on every commit attempt that asks a model; ``http.client`` ~0.02 s (ssl
comes with asyncio, which the hook imports anyway). http.client does the HTTP itself:
status line, headers, chunked bodies, TLS, the CONNECT tunnel to a proxy.

- **Concurrency, cancellation.** Each request runs in a daemon thread of its own and hands
  its result to the event loop, so concurrent calls stay concurrent. A caller that is
  cancelled (an interrupted hook, a ``wait_for`` that gave up) shuts the socket down from
  its side and returns at once: the blocked read ends, and a thread still connecting
  closes what it gets; no thread ever holds the process open.
- **Connections** are kept per ``Client`` (one timeout and TLS context; one list per origin
  and proxy) and reused while the server keeps them open; one the server closed while idle
  is dropped before use.
- **Timeouts**: the client's, for connecting and for each read and write (as httpx's single
  timeout). A connect timeout is ``ConnectTimeout``, a read's ``ReadTimeout``.
- **Redirects** are not followed (a 3xx is a status like any other, as httpx's default).
- **Proxies** from the environment as httpx read them: cascade.turns.proxies.
- **Compression** is not asked for (``Accept-Encoding: identity``, set by the caller).

Failures are cascade.turns.httperrors' (named as httpx names them), each chained to the
OSError or http.client error behind it.
"""
from __future__ import annotations

import asyncio
import http.client
import json
import select
import socket
import ssl
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from msgspec import Struct

from cascade.turns.httperrors import (
    ConnectError,
    ConnectTimeout,
    ProxyError,
    ReadError,
    ReadTimeout,
    RemoteProtocolError,
    TransportError,
    WriteError,
    WriteTimeout,
)
from cascade.turns.proxies import Origin, Request, connection, request_for


class Response(Struct):
    """A response: its status, its headers (case-insensitive ``get``) and, read whole, its
    body; a streamed one's body is read with ``lines()`` instead."""
    status_code: int
    headers: http.client.HTTPMessage
    content: bytes = b""
    _stream: _Stream | None = None

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", "replace")

    def json(self) -> Any:
        return json.loads(self.content)

    async def lines(self) -> AsyncIterator[str]:
        """The body's lines as they arrive (split at CR LF, LF or CR, decoded as UTF-8)."""
        if self._stream is not None:
            async for line in self._stream.lines():
                yield line

    def close(self) -> None:
        """Stop reading a streamed body. Its thread reads on to the end, then keeps the
        connection for the next request (a server that does not end the body holds it until
        the client is closed, or the timeout)."""
        if self._stream is not None:
            self._stream.done = True

    def abort(self) -> None:
        """Stop reading a streamed body now: its connection is shut, not reused."""
        if self._stream is not None:
            self._stream.abort()


class Client:
    """Connections to reuse, for requests with one timeout and TLS context."""

    def __init__(self, timeout: float, context: ssl.SSLContext) -> None:
        self.timeout, self.context = timeout, context
        self._lock = threading.Lock()
        self._idle: dict[Origin, list[http.client.HTTPConnection]] = {}
        self._sockets: set[socket.socket] = set()  # every socket opened and not yet closed
        self._closed = False

    def close(self) -> None:
        """Close every connection, idle or in use (a read in progress ends at once)."""
        with self._lock:
            self._closed = True
            idle = [conn for conns in self._idle.values() for conn in conns]
            sockets = list(self._sockets)
            self._idle.clear()
        for sock in sockets:
            _shut(sock)
        for conn in idle:
            conn.close()

    def _checkout(self, origin: Origin) -> http.client.HTTPConnection:
        """An idle connection to ``origin`` still open, else a new (unconnected) one."""
        with self._lock:
            if self._closed:
                raise TransportError("the HTTP client is closed")
            idle = self._idle.get(origin, [])
            while idle:
                conn = idle.pop()
                if _usable(conn):
                    return conn
                self._forget(conn)
        return connection(origin, self.timeout, self.context)

    def _checkin(self, origin: Origin, conn: http.client.HTTPConnection) -> None:
        """Keep ``conn`` for the next request to ``origin`` (if it is still open)."""
        with self._lock:
            if conn.sock is not None and not self._closed:
                self._idle.setdefault(origin, []).append(conn)
                return
        self._discard(conn)

    def _discard(self, conn: http.client.HTTPConnection) -> None:
        with self._lock:
            self._forget(conn)

    def _forget(self, conn: http.client.HTTPConnection) -> None:
        """Close ``conn`` (the lock held)."""
        if conn.sock is not None:
            self._sockets.discard(conn.sock)
        conn.close()

    def _opened(self, sock: socket.socket) -> bool:
        """Note a new socket; False when the client was closed meanwhile (then it is not
        to be used)."""
        with self._lock:
            if not self._closed:
                self._sockets.add(sock)
            return not self._closed

    def _closing(self, sock: socket.socket | None) -> None:
        with self._lock:
            self._sockets.discard(sock)  # type: ignore[arg-type]


def _usable(conn: http.client.HTTPConnection) -> bool:
    """Whether an idle connection is still open: one the server closed (or wrote to
    unasked) reads as ready."""
    sock = conn.sock
    if sock is None:
        return False
    try:
        return not select.select([sock], [], [], 0)[0]
    except (OSError, ValueError):
        return False


def _shut(sock: socket.socket) -> None:
    """End the connection under ``sock`` from any thread: a read blocked on it returns. The
    plain socket's shutdown, also for a TLS socket (whose own would drop its TLS state
    under the thread reading it); the thread using it closes it."""
    try:
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:
        pass


class _Exchange:
    """One request and its response, run in a thread of its own."""

    def __init__(self, client: Client, request: Request) -> None:
        self.client, self.request = client, request
        self.conn: http.client.HTTPConnection | None = None
        self.sock: socket.socket | None = None
        self.response: http.client.HTTPResponse | None = None
        self.aborted = False

    def abort(self) -> None:
        """From the waiting side: end the exchange now (its thread closes what it holds)."""
        self.aborted = True
        if self.sock is not None:
            _shut(self.sock)

    def send(self) -> http.client.HTTPResponse:
        """Connect (or reuse), send, and read the status and headers."""
        request = self.request
        conn = self.conn = self.client._checkout(request.origin)
        try:
            if conn.sock is None:
                self._connect(conn)
            self.sock = conn.sock
            if self.aborted:
                raise TransportError("cancelled")
            try:
                conn.request("POST", request.target, body=request.body,
                             headers=request.headers)
            except TimeoutError as exc:
                raise WriteTimeout(str(exc) or "timed out") from exc
            except OSError as exc:
                raise WriteError(str(exc)) from exc
            response = self.response = _read(conn.getresponse)
            return response
        except BaseException:
            self.finish(reuse=False)
            raise

    def _connect(self, conn: http.client.HTTPConnection) -> None:
        try:
            conn.connect()
        except TimeoutError as exc:
            raise ConnectTimeout(str(exc) or "timed out") from exc
        except OSError as exc:
            if str(exc).startswith("Tunnel connection failed"):
                raise ProxyError(str(exc)) from exc
            raise ConnectError(str(exc)) from exc
        except http.client.HTTPException as exc:  # the proxy's answer to CONNECT
            raise ProxyError(f"bad answer from the proxy ({exc!r})") from exc
        if conn.sock is not None and not self.client._opened(conn.sock):
            raise TransportError("the HTTP client is closed")

    def read(self) -> bytes:
        assert self.response is not None
        return _read(self.response.read)

    def finish(self, *, reuse: bool) -> None:
        """Give the connection back for the next request, or close it."""
        conn, self.conn = self.conn, None
        if conn is None:
            return
        if self.response is not None and not self.response.isclosed():
            reuse = False
            self.response.close()
        if reuse and not self.aborted and conn.sock is not None:
            self.client._checkin(self.request.origin, conn)
            return
        self.client._closing(self.sock)  # closed by the server's answer, or by us
        conn.close()
        if self.sock is not None:
            self.sock.close()


def _read(step: Callable[..., Any], *args: Any) -> Any:
    """``step(*args)`` (reading the response), its failures as httpx names them."""
    try:
        return step(*args)
    except TimeoutError as exc:
        raise ReadTimeout(str(exc) or "timed out") from exc
    except http.client.RemoteDisconnected as exc:
        raise RemoteProtocolError("Server disconnected without sending a response.") from exc
    except http.client.IncompleteRead as exc:
        raise RemoteProtocolError("peer closed connection without sending complete message "
                                  "body") from exc
    except http.client.HTTPException as exc:
        raise RemoteProtocolError(f"the server's answer is not HTTP/1.1 ({exc!r})") from exc
    except (OSError, ValueError) as exc:  # ValueError: read on a socket closed by an abort
        raise ReadError(str(exc) or type(exc).__name__) from exc


class _Stream:
    """A response body read line by line in its thread, each line handed to the loop."""

    def __init__(self, exchange: _Exchange, loop: asyncio.AbstractEventLoop) -> None:
        self.exchange, self.loop = exchange, loop
        self.queue: asyncio.Queue[Any] = asyncio.Queue()
        self.done = False

    def start(self) -> None:
        threading.Thread(target=self._run, daemon=True, name="cascade-http-stream").start()

    def _run(self) -> None:
        exchange, ended = self.exchange, False
        try:
            for line in _split(exchange):
                _hand(self.loop, self.queue.put_nowait, line)
            ended = True
            _hand(self.loop, self.queue.put_nowait, _END)
        except BaseException as exc:  # noqa: BLE001 - handed to the reader, which raises it
            _hand(self.loop, self.queue.put_nowait, exc)
        finally:
            exchange.finish(reuse=ended)

    async def lines(self) -> AsyncIterator[str]:
        while True:
            item = await self.queue.get()
            if item is _END:
                self.done = True
                return
            if isinstance(item, BaseException):
                self.done = True
                raise item
            yield item

    def abort(self) -> None:
        self.done = True
        self.exchange.abort()


_END = object()


def _split(exchange: _Exchange) -> Iterator[str]:
    """The lines of the body as they arrive (CR LF, LF or CR end a line, as in Server-Sent
    Events)."""
    response = exchange.response
    assert response is not None
    pending = b""
    while True:
        chunk = _read(response.read1, 65536)
        if not chunk:
            break
        pending += chunk
        # a CR at the very end may be the first half of a CR LF: wait for the next byte
        while True:
            cut = min((i for i in (pending.find(b"\r"), pending.find(b"\n")) if i >= 0),
                      default=-1)
            if cut < 0 or (pending[cut:cut + 1] == b"\r" and cut + 1 == len(pending)):
                break
            end = cut + 2 if pending[cut:cut + 2] == b"\r\n" else cut + 1
            yield pending[:cut].decode("utf-8", "replace")
            pending = pending[end:]
    if pending:
        yield pending.rstrip(b"\r").decode("utf-8", "replace")


def _hand(loop: asyncio.AbstractEventLoop, call: Callable[..., Any], *args: Any) -> None:
    """Run ``call(*args)`` on the loop, from a thread (nothing when the loop has closed:
    its caller is gone)."""
    try:
        loop.call_soon_threadsafe(call, *args)
    except RuntimeError:
        pass


def _settle(future: asyncio.Future, result: Any, error: BaseException | None) -> None:
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


async def _in_thread(exchange: _Exchange, work: Callable[[], Any]) -> Any:
    """``work()`` in a daemon thread; a cancelled wait aborts the exchange and returns."""
    loop = asyncio.get_running_loop()
    future = loop.create_future()

    def run() -> None:
        try:
            result = work()
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting side
            _hand(loop, _settle, future, None, exc)
        else:
            _hand(loop, _settle, future, result, None)

    threading.Thread(target=run, daemon=True, name="cascade-http").start()
    try:
        return await future
    except asyncio.CancelledError:
        exchange.abort()
        raise


async def post(client: Client, url: str, body: bytes, headers: dict[str, str], *,
               stream: bool = False) -> Response:
    """POST ``body`` to ``url``: the response, its body read whole -- or, with ``stream``
    and a 2xx status, to be read with ``lines()`` (then ``close()`` it)."""
    exchange = _Exchange(client, request_for(url, body, headers))

    def whole(response: http.client.HTTPResponse) -> Response:
        try:
            content = exchange.read()
        except BaseException:
            exchange.finish(reuse=False)
            raise
        exchange.finish(reuse=not response.will_close)
        return Response(response.status, response.msg, content)

    def work() -> Response:
        response = exchange.send()
        if stream and 200 <= response.status < 300:
            return Response(response.status, response.msg)
        return whole(response)

    response = await _in_thread(exchange, work)
    if stream and 200 <= response.status_code < 300:
        response._stream = _Stream(exchange, asyncio.get_running_loop())
        response._stream.start()
    return response
