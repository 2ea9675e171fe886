"""Model errors say what happened: real HTTP against the fake endpoint (or a closed port),
no mocks, each case both ways: over plain HTTP (openai/ models, the default) and through real
litellm (CASCADE_HTTP=litellm). "HTTP <n>" appears only when a server answered with <n>; a
missing key fails at once, before any request and without a retry; a refused connection names
the endpoint."""
from __future__ import annotations

import asyncio
import os
import re
import socket
import time

import pytest
from fakellm import hang, http_error, malformed

from cascade.turns.litellm_loader import litellm_module
from cascade.turns.chain import ModelError, complete
from cascade.turns.settings import Settings

KEY_VARS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "GEMINI_API_KEY",
            "GOOGLE_API_KEY", "CASCADE_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE",
            "ANTHROPIC_API_BASE", "ANTHROPIC_BASE_URL")
MESSAGES = [{"role": "user", "content": "Reply as AI-Test please"}]
LEDGER = "docs/adr/discussions/0001.discussion.md"
DOC = "docs/adr/0001-use-sqlite.md"


@pytest.fixture(scope="module", autouse=True)
def _litellm_imported():
    """Import litellm once, before any test's clock starts (the import alone takes ~3 s)."""
    litellm_module()


@pytest.fixture(autouse=True, params=["auto", "litellm"])
def transport(request, monkeypatch) -> str:
    """Every case both ways: openai/ models over plain HTTP (the default) and through litellm
    (CASCADE_HTTP=litellm); the words must be the same."""
    monkeypatch.setenv("CASCADE_HTTP", request.param)
    return request.param


@pytest.fixture(autouse=True)
def no_keys(monkeypatch):
    for var in KEY_VARS + ("CASCADE_FALLBACK_MODELS", "CASCADE_RETRIES", "CASCADE_BACKOFF",
                           "CASCADE_TIMEOUT"):
        monkeypatch.delenv(var, raising=False)


def closed_port_url() -> str:
    """A URL on 127.0.0.1 where nothing listens: bind a free port, then close it."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def ask(model: str, **settings) -> tuple[str | None, list[tuple], float, object]:
    """Run complete(); returns (ModelError text or None, retry callbacks, seconds, result)."""
    retries: list[tuple] = []
    options = {"backoff": 0.01, "retries": 2, "timeout": 5.0, **settings}
    start = time.monotonic()
    try:
        chosen = Settings(model=model, http=os.environ.get("CASCADE_HTTP", "auto"), **options)
        result = asyncio.run(complete(model, MESSAGES, chosen,
                                      on_retry=lambda *args: retries.append(args)))
        error = None
    except ModelError as exc:
        result, error = None, str(exc)
    return error, retries, time.monotonic() - start, result


def statuses(text: str) -> list[str]:
    return re.findall(r"HTTP \d+", text)


def one_line(text: str) -> bool:
    return "\n" not in text and "Traceback" not in text and "litellm." not in text


# ------------------------------------------------------------------ transport failures


def test_refused_connection_names_the_endpoint_not_http_500():
    url = closed_port_url()
    error, retries, _, _ = ask("openai/fake", api_base=url, retries=1)
    assert error == f"cannot connect to {url}: connection refused"
    assert statuses(error) == [] and one_line(error)
    # a server restarting is worth one more try; the retry line says the same thing
    assert [reason for _, reason, _ in retries] == [error]


@pytest.mark.parametrize("model", ["anthropic/claude-3-5-haiku-latest",  # Messages API, direct
                                   "gemini/gemini-1.5-flash"])  # litellm's own HTTP client
def test_refused_connection_through_another_provider_path(model):
    url = closed_port_url().removesuffix("/v1")
    error, _, _, _ = ask(model, api_base=url, api_key="sk-test", retries=0)
    assert error == f"cannot connect to {url}: connection refused"


def test_dns_failure_names_the_host():
    try:
        socket.getaddrinfo("no-such-host.invalid", 80)
    except socket.gaierror:
        pass
    else:  # pragma: no cover - a resolver that answers for .invalid
        pytest.skip("this resolver answers for .invalid")
    error, _, _, _ = ask("openai/fake", api_base="http://no-such-host.invalid/v1", retries=0)
    assert error.startswith("cannot connect to http://no-such-host.invalid/v1: DNS lookup failed")
    assert statuses(error) == []


def test_timeout_says_after_how_long(fake_llm):
    fake_llm.default(hang(5))
    error, _, seconds, _ = ask("openai/fake", api_base=fake_llm.url, timeout=0.3, retries=0)
    assert "timed out after 0.3s" in error and fake_llm.url in error
    assert statuses(error) == [] and one_line(error)
    assert seconds < 3


def test_connection_dropped_without_an_answer(fake_llm):
    fake_llm.default(hang(0.2))  # accepts the request, then closes without a response
    error, _, _, _ = ask("openai/fake", api_base=fake_llm.url, retries=0)
    assert error.startswith(f"no response from {fake_llm.url}: ")
    assert statuses(error) == []


def test_body_that_is_not_json_is_not_called_http_500(fake_llm):
    fake_llm.default(malformed())  # HTTP 200 with a broken body
    error, _, _, _ = ask("openai/fake", api_base=fake_llm.url, retries=0)
    assert "not valid JSON" in error and statuses(error) == [] and one_line(error)


# ------------------------------------------------------------------ missing credentials


@pytest.mark.parametrize("model, phrase", [
    ("openai/gpt-4o-mini", "set OPENAI_API_KEY"),
    ("gpt-4o-mini", "set OPENAI_API_KEY"),
    ("anthropic/claude-3-5-haiku-latest", "set ANTHROPIC_API_KEY"),
    ("gemini/gemini-1.5-flash", "set GEMINI_API_KEY or GOOGLE_API_KEY"),
])
def test_missing_key_fails_at_once_without_a_request(fake_llm, monkeypatch, model, phrase):
    # Were a request made, it would land on the fake server (and be counted there).
    for var in ("OPENAI_BASE_URL", "OPENAI_API_BASE"):
        monkeypatch.setenv(var, fake_llm.url)
    for var in ("ANTHROPIC_API_BASE", "ANTHROPIC_BASE_URL"):
        monkeypatch.setenv(var, fake_llm.url.removesuffix("/v1"))
    error, retries, seconds, _ = ask(model, retries=3, backoff=5.0)
    assert error == f"no credentials for {model}: {phrase}"
    assert retries == []  # never retried: waiting does not make a key appear
    assert seconds < 0.5
    assert fake_llm.requests == []


def test_empty_key_counts_as_missing(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "")
    error, retries, _, _ = ask("openai/gpt-4o-mini")
    assert error == "no credentials for openai/gpt-4o-mini: set OPENAI_API_KEY"
    assert retries == []


def test_a_configured_endpoint_needs_no_openai_key(fake_llm):
    """With CASCADE_API_BASE an openai/ model is sent "no-key": no credentials check."""
    fake_llm.default("hello")
    error, _, _, result = ask("openai/fake", api_base=fake_llm.url)
    assert error is None and result.text == "hello"


def test_missing_key_falls_back_to_the_next_model_without_retrying(fake_llm):
    fake_llm.default("from the fallback")
    error, retries, _, result = ask("anthropic/claude-3-5-haiku-latest", api_base=fake_llm.url,
                                    fallbacks=["openai/fake"])
    assert error is None and result.model == "openai/fake" and result.text == "from the fallback"
    assert retries == [] and result.attempts == 1
    assert [r.body["model"] for r in fake_llm.chat_requests] == ["fake"]


def test_unknown_provider_is_said_once_and_not_retried():
    error, retries, _, _ = ask("nosuchprovider/model")
    assert error.startswith("unknown provider in model nosuchprovider/model")
    assert retries == [] and statuses(error) == []


# ------------------------------------------------------------------ real HTTP statuses


@pytest.mark.parametrize("status, retried", [
    (500, True), (503, True), (429, True), (400, False), (401, False)])
def test_http_status_is_named_only_as_the_server_sent_it(fake_llm, status, retried):
    fake_llm.default(http_error(status, "the server says no"))
    error, retries, _, _ = ask("openai/fake", api_base=fake_llm.url, retries=2)
    assert statuses(error) == [f"HTTP {status}"] and one_line(error)
    assert error.endswith("the server says no") or "the server says no;" in error
    assert fake_llm.calls() == (3 if retried else 1)
    assert len(retries) == (2 if retried else 0)


def test_server_500_says_http_500(fake_llm):
    fake_llm.default(http_error(500))
    error, _, _, _ = ask("openai/fake", api_base=fake_llm.url, retries=0)
    assert error == "InternalServerError (HTTP 500): fakellm: scripted HTTP 500"


def test_401_is_not_retried_and_says_which_key(fake_llm):
    fake_llm.default(http_error(401, "Incorrect API key provided"))
    error, retries, _, _ = ask("openai/fake", api_base=fake_llm.url, api_key="sk-wrong",
                               retries=3, backoff=5.0)
    assert fake_llm.calls() == 1 and retries == []
    assert error == (f"credentials rejected by {fake_llm.url} (HTTP 401): "
                     "Incorrect API key provided; check CASCADE_API_KEY")


def test_401_when_no_key_was_sent(fake_llm):
    fake_llm.default(http_error(401))
    error, _, _, _ = ask("openai/fake", api_base=fake_llm.url)
    assert fake_llm.calls() == 1
    assert error.endswith("no key was sent: set CASCADE_API_KEY")


def test_403_is_not_retried(fake_llm):
    fake_llm.default(http_error(403, "model not allowed"))
    error, retries, _, _ = ask("openai/fake", api_base=fake_llm.url, api_key="sk-test")
    assert fake_llm.calls() == 1 and retries == []
    assert error.startswith(f"access denied by {fake_llm.url} (HTTP 403): model not allowed")


def test_503_then_success_is_retried(fake_llm):
    fake_llm.script("AI-Test", http_error(503), "recovered")
    error, retries, _, result = ask("openai/fake", api_base=fake_llm.url)
    assert error is None and result.text == "recovered" and result.attempts == 2
    assert fake_llm.calls() == 2
    [(model, reason, _)] = retries
    assert model == "openai/fake" and reason.startswith("ServiceUnavailableError (HTTP 503)")


def test_retry_after_is_still_honoured(fake_llm):
    fake_llm.script("AI-Test", http_error(429, retry_after=0.3), "ok")
    error, retries, seconds, _ = ask("openai/fake", api_base=fake_llm.url, backoff=0.0)
    assert error is None
    [(_, _, wait)] = retries
    assert wait == pytest.approx(0.3) and seconds >= 0.3


def test_fallback_chain_names_each_model(fake_llm):
    fake_llm.default(http_error(503))
    error, _, _, _ = ask("openai/fake", api_base=fake_llm.url, retries=0,
                         fallbacks=["openai/backup"])
    assert error == ("openai/fake: ServiceUnavailableError (HTTP 503): fakellm: scripted HTTP 503"
                     "; then openai/backup: ServiceUnavailableError (HTTP 503): "
                     "fakellm: scripted HTTP 503")


# ------------------------------------------------------------------ through the CLI


@pytest.fixture
def ledger(repo, cli, monkeypatch):
    (repo / "docs/adr").mkdir(parents=True)
    (repo / DOC).write_text("# Use SQLite\n\nWe will store events in SQLite.\n")
    code, _, err = cli("new", "Use SQLite", "--template", "adr", "--protocol", "review",
                       "--source", DOC, "-o", LEDGER, "--participants", "security")
    assert code == 0, err
    monkeypatch.setenv("CASCADE_BACKOFF", "0.01")
    monkeypatch.setenv("CASCADE_RETRIES", "1")
    return LEDGER


def test_cli_refused_connection_line(ledger, cli, monkeypatch):
    url = closed_port_url()
    monkeypatch.setenv("CASCADE_MODEL", "openai/fake")
    monkeypatch.setenv("CASCADE_API_BASE", url)
    code, out, err = cli("turn", ledger)
    assert code == 1
    expected = (f"cascade: {ledger}: AI-Security (openai/fake): cannot connect to {url}: "
                "connection refused (after 1 retry)")  # one line, the retry folded in
    assert [line for line in err.splitlines() if line.strip()] == [expected]
    assert "retrying" not in out + err
    assert "HTTP 500" not in out + err and "InternalServerError" not in out + err
    assert "Traceback" not in out + err


def test_one_dead_endpoint_is_one_line_for_the_whole_panel(repo, cli, monkeypatch):
    (repo / "docs/adr").mkdir(parents=True)
    (repo / DOC).write_text("# Use SQLite\n\nWe will store events in SQLite.\n")
    assert cli("new", "Use SQLite", "--template", "adr", "--protocol", "review", "--source",
               DOC, "-o", LEDGER, "--participants", "architect,security,pragmatist")[0] == 0
    monkeypatch.setenv("CASCADE_BACKOFF", "0.01")
    monkeypatch.setenv("CASCADE_RETRIES", "1")
    url = closed_port_url()
    monkeypatch.setenv("CASCADE_MODEL", "openai/fake")
    monkeypatch.setenv("CASCADE_API_BASE", url)
    code, out, err = cli("turn", LEDGER)
    assert code == 1
    assert [line for line in err.splitlines() if line.strip()] == [
        f"cascade: {LEDGER}: AI-Architect, AI-Security, AI-Pragmatist (openai/fake): cannot "
        f"connect to {url}: connection refused (after 1 retry)"]
    assert "retrying" not in out + err


def test_cli_missing_key_line(ledger, cli, monkeypatch):
    monkeypatch.setenv("CASCADE_MODEL", "openai/gpt-4o-mini")
    start = time.monotonic()
    code, out, err = cli("turn", ledger)
    assert code == 1
    assert time.monotonic() - start < 3
    expected = (f"cascade: {ledger}: AI-Security (openai/gpt-4o-mini): "
                "no credentials for openai/gpt-4o-mini: set OPENAI_API_KEY")
    assert [line for line in err.splitlines() if line.strip()] == [expected]
    assert "retrying" not in out and "HTTP" not in out + err
