"""anthropic/ models are asked over plain HTTP with Anthropic's Messages API
(cascade.turns.providers.anthropic_messages), without importing litellm: the request litellm's translation
sends, its replies, failures, timeouts and streams. Real HTTP against the fake endpoint's
/v1/messages; hook runs in subprocesses (where sys.modules tells what was imported)."""
from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import pytest
from conftest import REPO, stage_adr
from fakellm import Fault, hang, http_error, rate_limited, streamed
from test_hook import DOC, LEDGER, PANEL, RULES  # the loop tests' repository

from cascade import Discussion
from cascade.turns.chain import ModelError, complete
from cascade.turns.providers import uses_litellm
from cascade.turns.settings import Settings

MODEL = "anthropic/claude-haiku-4-5"  # a model litellm's price list names
MESSAGES = [{"role": "system", "content": "You are AI-Test, a reviewer."},
            {"role": "user", "content": "Reply as AI-Test please"}]
KEY_VARS = ("OPENAI_API_KEY", "CASCADE_API_KEY", "CASCADE_API_BASE", "ANTHROPIC_API_KEY",
            "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_API_BASE", "ANTHROPIC_BASE_URL",
            "CASCADE_FALLBACK_MODELS", "CASCADE_HTTP")
PROBE = ("import sys; from cascade.main import main; rc = main(['hook', %r]); "
         "print('PROBE', rc, 'litellm' in sys.modules)")


def reply(comment: str, vote: str | None) -> str:
    return json.dumps({"comment": comment, "vote": vote})


@pytest.fixture(autouse=True)
def no_keys(monkeypatch):
    for var in KEY_VARS:
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def anthropic(fake_llm, monkeypatch):
    """The fake endpoint as Anthropic's API: its base URL and a key."""
    monkeypatch.setenv("ANTHROPIC_API_BASE", fake_llm.root)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    return fake_llm


def ask(model: str = MODEL, messages=MESSAGES, on_text=None, **settings):
    retries: list[tuple] = []
    options = {"backoff": 0.01, "retries": 2, "timeout": 5.0, **settings}
    try:
        result = asyncio.run(complete(model, messages, Settings(model=model, **options),
                                      on_retry=lambda *args: retries.append(args),
                                      on_text=on_text))
        return None, retries, result
    except ModelError as exc:
        return str(exc), retries, None


def test_anthropic_models_go_direct():
    assert uses_litellm(MODEL, Settings()) is False
    assert uses_litellm(MODEL, Settings(http="litellm")) is True
    assert uses_litellm("anthropic/", Settings()) is True


# ------------------------------------------------------------------ the request and the reply


def test_a_query_string_in_the_base_url_stays_after_the_path(anthropic, monkeypatch):
    anthropic.default("hi there")
    for base in (f"{anthropic.root}?beta=1", f"{anthropic.root}/v1/messages/?beta=1"):
        monkeypatch.setenv("ANTHROPIC_API_BASE", base)
        error, _, _ = ask()
        assert error is None, error
        assert anthropic.chat_requests[-1].path == "/v1/messages?beta=1"


def test_the_request_is_a_messages_api_request(anthropic):
    anthropic.default("hi there")
    error, _, result = ask(reply_tokens=77)
    assert error is None and result.text == "hi there" and result.model == MODEL
    [request] = anthropic.chat_requests
    assert request.path == "/v1/messages"
    assert request.headers["x-api-key"] == "sk-ant-test"
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in request.headers
    assert request.body == {
        "model": "claude-haiku-4-5", "max_tokens": 77,
        "system": [{"type": "text", "text": "You are AI-Test, a reviewer."}],
        "messages": [{"role": "user",
                      "content": [{"type": "text", "text": "Reply as AI-Test please"}]}]}
    # usage from input_tokens / output_tokens; priced from litellm's bundled price list
    assert result.prompt_tokens > 0 and result.completion_tokens == len("hi there") // 4
    assert result.cost is not None and result.cost > 0


def test_the_request_is_the_one_litellm_sends(anthropic, monkeypatch):
    """The same conversation (a repair turn: assistant, then user), through litellm's Anthropic
    translation and directly: the same system, messages and max_tokens reach the server, and
    the same answer comes back."""
    anthropic.default("the answer")
    messages = MESSAGES + [{"role": "assistant", "content": "not json  "},
                           {"role": "user", "content": "Again, as JSON."}]
    bodies, results = [], []
    for http in ("litellm", "auto"):
        error, _, result = ask(messages=messages, http=http)
        assert error is None, error
        bodies.append({k: anthropic.chat_requests[-1].body.get(k)
                       for k in ("model", "system", "messages", "max_tokens")})
        results.append((result.text, result.prompt_tokens, result.completion_tokens))
    assert bodies[0] == bodies[1]
    assert results[0] == results[1]


def test_keys_token_and_base_url_as_litellm_reads_them(fake_llm, monkeypatch):
    fake_llm.default("ok")
    # CASCADE_API_BASE and CASCADE_API_KEY come first; /v1/messages is not appended twice
    error, _, _ = ask(api_base=fake_llm.root + "/v1/messages", api_key="sk-cascade")
    assert error is None and fake_llm.chat_requests[-1].path == "/v1/messages"
    assert fake_llm.chat_requests[-1].headers["x-api-key"] == "sk-cascade"
    # ANTHROPIC_BASE_URL, and ANTHROPIC_AUTH_TOKEN as a bearer when there is no key
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_llm.root)
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "tok-123")
    assert ask()[0] is None
    headers = fake_llm.chat_requests[-1].headers
    assert headers["authorization"] == "Bearer tok-123" and "x-api-key" not in headers


def test_a_missing_key_is_said_without_a_request(fake_llm, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_BASE", fake_llm.root)
    error, retries, _ = ask(retries=3, backoff=5.0)
    assert error == f"no credentials for {MODEL}: set ANTHROPIC_API_KEY"
    assert retries == [] and fake_llm.requests == []


# ------------------------------------------------------------------ failures


def test_401_is_not_retried_and_names_the_key(anthropic):
    anthropic.default(http_error(401, "invalid x-api-key"))
    error, retries, _ = ask(retries=3, backoff=5.0)
    assert anthropic.calls() == 1 and retries == []
    assert error == (f"credentials rejected by {anthropic.root} (HTTP 401): invalid x-api-key; "
                     "check ANTHROPIC_API_KEY")


def test_429_waits_as_told_then_answers(anthropic):
    anthropic.script("AI-Test", rate_limited(0.3, "Number of requests has exceeded your rate "
                                                  "limit"), "after the wait")
    error, retries, result = ask(backoff=0.0)
    assert error is None and result.text == "after the wait" and result.attempts == 2
    [(model, reason, wait)] = retries
    assert model == MODEL and wait == pytest.approx(0.3)
    assert reason == ("RateLimitError (HTTP 429): Number of requests has exceeded your rate "
                      "limit")


@pytest.mark.parametrize("status, name", [(500, "InternalServerError"),
                                          (529, "InternalServerError")])
def test_server_errors_are_retried_then_said(anthropic, status, name):
    anthropic.default(http_error(status, "Overloaded" if status == 529 else None))
    error, retries, _ = ask(retries=1)
    assert anthropic.calls() == 2 and len(retries) == 1
    message = "Overloaded" if status == 529 else f"fakellm: scripted HTTP {status}"
    assert error == f"{name} (HTTP {status}): {message}"


def test_timeout_is_the_configured_one(anthropic):
    anthropic.default(hang(5))
    error, retries, _ = ask(timeout=0.3, retries=1)
    assert error == f"Timeout: timed out after 0.3s waiting for {anthropic.root}"
    assert len(retries) == 1 and anthropic.calls() == 2


def test_an_answer_that_is_not_a_message(anthropic):
    anthropic.default(Fault(raw_body='{"choices": []}'))
    error, _, _ = ask(retries=0)
    assert error.startswith(f"InternalServerError: the response from {anthropic.root} is not a "
                            "message")


# ------------------------------------------------------------------ streaming


REPLY = reply("A reply long enough to come in several events of text, each passed on as it "
              "arrives.", "READY")


def test_a_streamed_reply_arrives_in_pieces_and_whole(anthropic):
    anthropic.default(streamed(REPLY, 0.01))
    pieces: list[str] = []
    error, _, done = ask(on_text=pieces.append)
    assert error is None and len(pieces) > 3 and "".join(pieces) == REPLY == done.text
    assert anthropic.chat_requests[-1].body["stream"] is True
    error, _, whole = ask()  # not streamed: the same text and usage
    assert "stream" not in anthropic.chat_requests[-1].body
    assert (whole.text, whole.prompt_tokens, whole.completion_tokens) == (
        done.text, done.prompt_tokens, done.completion_tokens)


def test_an_error_event_in_a_stream_is_retried_like_a_server_error(anthropic):
    anthropic.script("AI-Test", Fault(content="half a rep", stream_error="overloaded_error"),
                     streamed(REPLY, 0.0), sticky=False)
    pieces: list[str] = []
    retried: list[str] = []
    done = asyncio.run(complete(MODEL, MESSAGES, Settings(model=MODEL, backoff=0.01),
                                on_text=pieces.append,
                                on_retry=lambda m, reason, wait: retried.append(reason)))
    assert done.text == REPLY and "".join(pieces) == "half a rep" + REPLY
    assert retried == [(f"InternalServerError: the stream from {anthropic.root} reported "
                        "overloaded_error: fakellm: scripted stream error")]


# ------------------------------------------------------------------ a hook run


@pytest.fixture
def hook_repo(repo, anthropic, monkeypatch):
    monkeypatch.setenv("CASCADE_MODEL", MODEL)
    monkeypatch.setenv("CASCADE_BACKOFF", "0.05")
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    stage_adr(repo, RULES, DOC)
    return repo


def probe_hook(repo, **env: str) -> tuple[int, bool, str]:
    proc = subprocess.run([sys.executable, "-c", PROBE % DOC], cwd=repo, capture_output=True,
                          text=True, timeout=120, env={**os.environ, **env}, check=False)
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("PROBE ")), None)
    assert line is not None, proc.stdout + proc.stderr
    _, rc, litellm = line.split()
    return int(rc), litellm == "True", proc.stdout + proc.stderr


def test_hook_run_asks_anthropic_without_litellm(hook_repo, anthropic):
    for name in PANEL:
        anthropic.script(f"Reply as {name} ", reply(f"{name} reviewed it.", "READY"))
    rc, litellm, out = probe_hook(hook_repo)
    assert rc == 1 and not litellm, out
    assert anthropic.calls() == 3
    assert {r.path for r in anthropic.chat_requests} == {"/v1/messages"}
    d = Discussion.load(hook_repo / LEDGER, root=hook_repo)
    assert sorted(d.votes) == sorted(PANEL)
    for c in d.comments:
        assert c.provenance["model"] == MODEL
        assert int(c.provenance["prompt_tokens"]) > 0 and float(c.provenance["cost"]) > 0


def test_hook_run_names_the_persona_and_the_cause(hook_repo, anthropic):
    anthropic.default(reply("fine", "READY"))
    anthropic.script("Reply as AI-Security ", http_error(401, "invalid x-api-key"))
    rc, litellm, out = probe_hook(hook_repo)
    assert rc == 1 and not litellm, out
    line = next(ln for ln in out.splitlines() if "HTTP 401" in ln)
    assert "AI-Security" in line or "security" in line, out
    assert f"credentials rejected by {anthropic.root} (HTTP 401): invalid x-api-key" in line
