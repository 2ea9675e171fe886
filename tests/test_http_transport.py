"""The direct path's HTTP (cascade.turns.providers.httpclient, through httpx), for openai/
and anthropic/ models alike: connections reused within a session, streams read as they
arrive, timeouts (connect, and a total deadline), cancellation that never hangs, TLS verified
against certifi's bundle or SSL_CERT_FILE, proxies and NO_PROXY from the environment,
redirects not followed, and an answer read only up to its bound. Real HTTP against the fake endpoint (HTTP/1.1 with keep-alive, or
https with a certificate made here), a real proxy on 127.0.0.1, a real hook interrupted."""
from __future__ import annotations

import asyncio
import contextlib
import http.client
import os
import select
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

import pytest
from conftest import REPO, stage_adr
from fakellm import FakeLLM, Fault, hang, streamed
from test_hook import DOC, RULES

from cascade.turns.chain import ModelError, complete
from cascade.turns.providers import anthropic_messages, openai_chat
from cascade.turns.providers.httpclient import Endpoint
from cascade.turns.sessions import session
from cascade.turns.settings import Settings

MESSAGES = [{"role": "user", "content": "Reply as AI-Test please"}]
ENV_VARS = ("OPENAI_API_KEY", "CASCADE_API_KEY", "CASCADE_API_BASE", "OPENAI_BASE_URL",
            "OPENAI_API_BASE", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN",
            "ANTHROPIC_API_BASE", "ANTHROPIC_BASE_URL", "CASCADE_FALLBACK_MODELS",
            "CASCADE_HTTP", "SSL_CERT_FILE", "SSL_CERT_DIR") + tuple(
    f"{name}_proxy" for name in ("http", "https", "all", "no")) + tuple(
    f"{name}_PROXY" for name in ("HTTP", "HTTPS", "ALL", "NO"))
PROVIDERS = ("openai", "anthropic")


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for var in ENV_VARS:
        monkeypatch.delenv(var, raising=False)


def endpoint(provider: str, fake: FakeLLM, timeout: float = 5.0, limit: int = 1 << 20):
    module = openai_chat if provider == "openai" else anthropic_messages
    base = fake.url if provider == "openai" else fake.root
    return module, Endpoint(base, "sk-test", timeout, limit)


async def chat(provider: str, fake: FakeLLM, on_text=None, timeout: float = 5.0):
    module, where = endpoint(provider, fake, timeout)
    return await module.chat("fake", MESSAGES, where, max_tokens=64, on_text=on_text)


def ask(model: str, base: str, on_text=None, **settings):
    options = {"backoff": 0.01, "retries": 0, "timeout": 5.0, **settings}
    try:
        return None, asyncio.run(complete(model, MESSAGES, Settings(
            model=model, api_base=base, api_key="sk-test", **options), on_text=on_text))
    except ModelError as exc:
        return str(exc), None


# ------------------------------------------------------------------ connections


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_session_reuses_its_connections(provider):
    """Two waves of three concurrent calls, then streamed ones, in one session: the calls
    run at the same time, and later ones go over the connections the first opened."""
    with FakeLLM(keep_alive=True) as fake:
        fake.default(streamed("a reply in several pieces of text", 0.0))

        async def waves():
            async with session():
                for _ in range(2):
                    await asyncio.gather(*(chat(provider, fake) for _ in range(3)))
                for _ in range(2):
                    await chat(provider, fake, on_text=lambda text: None)

        asyncio.run(waves())
        peers = [r.peer for r in fake.requests]
        assert len(peers) == 8 and len(set(peers)) <= 3
        assert peers[-1] in peers[:6]  # the streams came over a connection already open

        async def alone():  # outside a session each call opens its own and closes it
            for _ in range(2):
                await chat(provider, fake)

        asyncio.run(alone())
        assert len({r.peer for r in fake.requests[-2:]} - set(peers)) == 2


def test_a_connection_the_server_closed_while_idle_is_not_used():
    """The server closes a connection idle 0.3 s: the next call opens another, and neither
    fails nor is retried."""
    with FakeLLM(keep_alive=0.3) as fake:
        fake.default("fine")

        async def twice():
            async with session():
                await chat("openai", fake)
                await asyncio.sleep(0.8)
                return await chat("openai", fake)

        answer = asyncio.run(twice())
        assert answer.text == "fine" and fake.calls() == 2
        assert fake.requests[0].peer != fake.requests[1].peer


# ------------------------------------------------------------------ streams


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_stream_is_read_as_it_arrives(provider):
    """Chunked (HTTP/1.1) and close-delimited (HTTP/1.0) streams: each piece is passed on
    when its event arrives, not when the body ends."""
    for keep_alive in (True, False):
        with FakeLLM(keep_alive=keep_alive) as fake:
            fake.default(streamed("x" * 16 * 6, 0.15))  # an event every 0.15 s
            seen: list[float] = []
            answer = asyncio.run(chat(provider, fake, on_text=lambda t, seen=seen: seen.append(
                time.monotonic())))
            assert answer.text == "x" * 96 and len(seen) == 6
            assert seen[-1] - seen[0] > 0.5, keep_alive


def test_event_lines_may_end_in_cr_lf_lf_or_cr():
    """Server-Sent Events allow any of the three line endings; each ends a line."""
    chunk = '{"model": "fake", "choices": [{"index": 0, "delta": {"content": "%s"}}]}'
    for ending in ("\r\n", "\n", "\r"):
        body = "".join(f"data: {chunk % piece}{ending}{ending}" for piece in ("one ", "two"))
        with FakeLLM() as fake:
            fake.default(Fault(raw_body=body + f"data: [DONE]{ending}{ending}"))
            pieces: list[str] = []
            answer = asyncio.run(chat("openai", fake, on_text=pieces.append))
        assert pieces == ["one ", "two"] and answer.text == "one two", repr(ending)


# ------------------------------------------------------------------ timeouts, cancellation


@pytest.mark.parametrize("provider", PROVIDERS)
def test_connect_timeout_is_said_as_a_connect_timeout(provider):
    """A listener whose backlog is full: the connection is never accepted."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        port = listener.getsockname()[1]
        with socket.create_connection(("127.0.0.1", port)):  # fills the backlog
            base = f"http://127.0.0.1:{port}" + ("/v1" if provider == "openai" else "")
            start = time.monotonic()
            error, _ = ask(f"{provider}/fake", base, timeout=0.4)
            assert time.monotonic() - start < 3
    assert error == f"cannot connect to {base}: timed out after 0.4s"


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("shared", [False, True], ids=["alone", "in-a-session"])
def test_a_cancelled_call_returns_at_once(provider, shared):
    """wait_for gives up on a server that never answers (and on a stream that stalls): the
    call returns then -- in a session too, whose connections stay open for the next call."""
    with FakeLLM() as fake:
        for reply, on_text in ((hang(30), None),
                               (streamed("y" * 64, 30.0), lambda text: None)):
            fake.default(reply)

            async def give_up(on_text=on_text):
                async with (session() if shared else contextlib.nullcontext()):
                    start = time.monotonic()
                    with pytest.raises(asyncio.TimeoutError):
                        await asyncio.wait_for(chat(provider, fake, on_text, timeout=60), 0.5)
                    assert time.monotonic() - start < 2

            asyncio.run(give_up())


def test_an_interrupted_hook_stops_at_once(repo, monkeypatch):
    """Ctrl-C during the model calls: the hook exits within seconds, not at the timeout."""
    with FakeLLM() as fake:
        fake.default(hang(60))
        stage_adr(repo, RULES, DOC)
        env = {**os.environ, "PYTHONPATH": str(REPO), "CASCADE_MODEL": "openai/fake",
               "CASCADE_API_BASE": fake.url, "CASCADE_TIMEOUT": "120"}
        # As from a terminal: a suite started in the background inherits SIGINT ignored, and
        # the hook would inherit that too (tests/test_turns.py does the same).
        proc = subprocess.Popen([sys.executable, "-m", "cascade", "hook", DOC], cwd=repo,
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        try:
            end = time.monotonic() + 60
            while fake.calls() < 3 and time.monotonic() < end:
                time.sleep(0.05)
            assert fake.calls() == 3
            start = time.monotonic()
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=15)
            assert time.monotonic() - start < 5
            assert proc.returncode != 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


# ------------------------------------------------------------------ bounded answers

GIB = 1 << 30


def _peak_rss_mib() -> float:
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("flood", [GIB, "chunked", "events"], ids=["1GB", "endless-chunked",
                                                                  "endless-events"])
def test_an_answer_past_the_bound_fails_in_one_line_and_memory_stays_flat(provider, flood):
    """A 1 GB body, and chunked bodies that never end (bytes without a line end, or event
    lines): read up to the bound (1 MiB here) and no further, the call failing with one line
    that names the limit; the process's peak memory does not grow by the body."""
    before = _peak_rss_mib()
    with FakeLLM(keep_alive=True) as fake:
        fake.default(Fault(flood=flood))
        on_text = (lambda text: None) if flood == "events" else None
        start = time.monotonic()
        error, _ = ask(f"{provider}/fake", fake.url if provider == "openai" else fake.root,
                       max_reply_bytes=1 << 20, timeout=60.0,
                       **({"on_text": on_text} if on_text else {}))
        took = time.monotonic() - start
    assert error is not None and "larger than 1 MiB: not read (CASCADE_MAX_REPLY_BYTES" in error
    assert "\n" not in error and took < 10
    assert fake.flooded < 64 << 20  # the server was cut off, not read to the end
    assert _peak_rss_mib() - before < 64


def test_the_deadline_is_total(fake_llm):
    """A server that keeps sending a little, each piece well within the timeout, is cut at
    the timeout all the same."""
    fake_llm.default(streamed("z" * 16 * 40, 0.1))  # 4 s of pieces, one every 0.1 s
    start = time.monotonic()
    error, _ = ask("openai/fake", fake_llm.url, timeout=1.0, on_text=lambda text: None)
    assert time.monotonic() - start < 2.5
    assert error == f"Timeout: timed out after 1s waiting for {fake_llm.url}"


# ------------------------------------------------------------------ redirects


def test_a_redirect_is_not_followed():
    with FakeLLM() as fake:
        fake.default(Fault(status=307, headers={"Location": f"{fake.url}/elsewhere"}))
        error, _ = ask("openai/fake", fake.url)
    assert error.startswith("APIError (HTTP 307)") and fake.calls() == 1


def test_an_endpoint_url_that_cannot_be_asked_is_said():
    error, _ = ask("openai/fake", "ftp://127.0.0.1/v1")
    assert error == ("cannot reach ftp://127.0.0.1/v1: Request URL has an unsupported "
                     "protocol 'ftp://'.")
    error, _ = ask("openai/fake", "http://127.0.0.1:port/v1")
    assert error == "cannot reach http://127.0.0.1:port/v1: Invalid port: 'port'"


# ------------------------------------------------------------------ TLS


@pytest.fixture(scope="module")
def certificate(tmp_path_factory) -> tuple[str, str]:
    """A self-signed certificate for 127.0.0.1: (certificate file, key file)."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make a certificate")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = str(folder / "cert.pem"), str(folder / "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
                    "-out", cert, "-days", "2", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True)
    return cert, key


@pytest.fixture
def https_fake(certificate):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*certificate)
    with FakeLLM(tls=context) as fake:
        fake.default("over TLS")
        yield fake


@pytest.mark.parametrize("provider", PROVIDERS)
def test_tls_is_verified_against_the_bundle_httpx_trusted(https_fake, certificate,
                                                         monkeypatch, provider):
    """certifi's bundle does not know the fake's certificate: refused, named as a TLS
    error. SSL_CERT_FILE names a bundle that does (httpx read it too): answered."""
    base = https_fake.url if provider == "openai" else https_fake.root
    error, _ = ask(f"{provider}/fake", base)
    assert error.startswith(f"cannot connect to {base}: TLS error (CERTIFICATE_VERIFY_FAILED")
    assert https_fake.calls() == 0
    monkeypatch.setenv("SSL_CERT_FILE", certificate[0])
    error, answer = ask(f"{provider}/fake", base)
    assert error is None and answer.text == "over TLS"


# ------------------------------------------------------------------ proxies


class _Proxy(ThreadingHTTPServer):
    daemon_threads = True
    seen: list[tuple[str, str, str | None]]


class _ProxyHandler(BaseHTTPRequestHandler):
    """A forward proxy: CONNECT tunnels, and plain-http requests sent whole."""
    protocol_version = "HTTP/1.0"

    def log_message(self, *args) -> None:
        pass

    def do_CONNECT(self) -> None:
        self.server.seen.append(("CONNECT", self.path, self.headers.get("Proxy-Authorization")))
        host, port = self.path.rsplit(":", 1)
        upstream = socket.create_connection((host, int(port)), timeout=10)
        self.send_response(200, "Connection established")
        self.end_headers()
        self.wfile.flush()
        sockets = [self.connection, upstream]
        while True:
            ready, _, _ = select.select(sockets, [], [], 10)
            data = ready and ready[0].recv(65536)
            if not data:
                break
            (upstream if ready[0] is self.connection else self.connection).sendall(data)
        upstream.close()
        self.close_connection = True

    def do_POST(self) -> None:
        self.server.seen.append(("POST", self.path, self.headers.get("Proxy-Authorization")))
        url = urlsplit(self.path)
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        headers = {k: v for k, v in self.headers.items()
                   if k.lower() not in ("proxy-authorization", "connection", "content-length")}
        upstream = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
        upstream.request("POST", url.path, body, headers)
        answer = upstream.getresponse()
        data = answer.read()
        self.send_response(answer.status)
        for key, value in answer.getheaders():
            if key.lower() not in ("connection", "content-length", "transfer-encoding"):
                self.send_header(key, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def proxy():
    server = _Proxy(("127.0.0.1", 0), _ProxyHandler)
    server.seen = []
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_http_endpoint_through_http_proxy(fake_llm, proxy, monkeypatch, provider):
    """HTTP_PROXY: the request goes to the proxy whole, with the proxy's credentials;
    NO_PROXY naming the host sends it straight."""
    fake_llm.default("proxied")
    port = proxy.server_address[1]
    monkeypatch.setenv("HTTP_PROXY", f"http://user:p%40ss@127.0.0.1:{port}")
    base = fake_llm.url if provider == "openai" else fake_llm.root
    error, answer = ask(f"{provider}/fake", base)
    assert error is None and answer.text == "proxied"
    [(method, target, auth)] = proxy.seen
    assert method == "POST" and target.startswith(f"{fake_llm.root}/")
    assert auth == "Basic dXNlcjpwQHNz"  # user:p@ss
    assert "proxy-authorization" not in fake_llm.requests[-1].headers
    for no_proxy in ("127.0.0.1", "*", f"127.0.0.1:{fake_llm.port}"):
        monkeypatch.setenv("NO_PROXY", no_proxy)
        assert ask(f"{provider}/fake", base)[0] is None
    monkeypatch.setenv("NO_PROXY", "example.com,127.0.0.2")
    assert ask(f"{provider}/fake", base)[0] is None
    assert len(proxy.seen) == 2 and fake_llm.calls() == 5


@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_https_endpoint_through_a_connect_tunnel(https_fake, certificate, proxy,
                                                   monkeypatch, provider):
    """HTTPS_PROXY: a CONNECT tunnel to the endpoint, TLS verified against the endpoint's
    name (the proxy sees no request), the proxy's credentials on the CONNECT."""
    monkeypatch.setenv("SSL_CERT_FILE", certificate[0])
    monkeypatch.setenv("https_proxy", f"http://tunnel:secret@127.0.0.1:{proxy.server_address[1]}")
    base = https_fake.url if provider == "openai" else https_fake.root
    error, answer = ask(f"{provider}/fake", base)
    assert error is None and answer.text == "over TLS"
    [(method, target, auth)] = proxy.seen
    assert (method, target) == ("CONNECT", f"127.0.0.1:{https_fake.port}")
    assert auth == "Basic dHVubmVsOnNlY3JldA=="  # tunnel:secret


def test_a_proxy_that_cannot_be_used_is_said(fake_llm, proxy, monkeypatch):
    monkeypatch.setenv("ALL_PROXY", "socks5://127.0.0.1:1080")
    error, _ = ask("openai/fake", fake_llm.url)
    assert error == (f"cannot connect to {fake_llm.url}: proxy error (a SOCKS proxy needs the "
                     "socksio package: pip install 'httpx[socks]'; or give the proxy as "
                     "http://host:port)")
    monkeypatch.setenv("ALL_PROXY", f"http://127.0.0.1:{proxy.server_address[1]}")
    monkeypatch.setenv("HTTPS_PROXY", "")  # as httpx: an empty variable names no proxy
    error, _ = ask("openai/fake", fake_llm.url.replace("http:", "https:"))
    assert error.startswith("cannot connect to https://127.0.0.1:")
    assert proxy.seen[0][0] == "CONNECT"  # ALL_PROXY served the https URL
    assert fake_llm.calls() == 0
