"""Tests for tests/fakellm.py, exercised through litellm over real HTTP.

Observed with litellm 1.106.2 (openai provider, ``api_base=fake.url``):
  HTTP 500          -> litellm.InternalServerError      (status_code 500)
  HTTP 503          -> litellm.ServiceUnavailableError  (status_code 503)
  HTTP 429          -> litellm.RateLimitError; the *real* response headers are on
                       ``e.litellm_response_headers`` (httpx.Headers, case-insensitive);
                       ``e.response`` is a synthetic httpx.Response with no headers.
  hang + timeout=   -> litellm.Timeout                  (status_code 408)
  non-JSON body     -> litellm.InternalServerError      (status_code 500, JSON decode msg)
Without ``num_retries=0`` litellm/openai retry: a 500 reaches the server 3 times.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import threading
import time
import urllib.error
import urllib.request

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # before importing litellm: no network fetch

import litellm  # noqa: E402
import pytest  # noqa: E402
from fakellm import (  # noqa: E402
    DEFAULT_REPLY,
    FakeLLM,
    Fault,
    delayed,
    empty,
    fake_llm,  # noqa: F401  (fixture, imported the way conftest.py will)
    hang,
    http_error,
    malformed,
    null_content,
    rate_limited,
)

litellm.suppress_debug_info = True


def ask(fake: FakeLLM, text: str, **kw):
    """One litellm round trip (async API, fresh event loop) with litellm retries off."""
    kw.setdefault("num_retries", 0)
    return asyncio.run(litellm.acompletion(
        model="openai/fake", api_base=fake.url, api_key="sk-test",
        messages=[{"role": "system", "content": "You are a reviewer."},
                  {"role": "user", "content": text}], **kw))


def content(resp) -> str | None:
    return resp.choices[0].message.content


def raw_post(url: str, body: bytes, path: str = "/chat/completions"):
    req = urllib.request.Request(url + path, data=body, method="POST",
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


# --------------------------------------------------------------------------- scripting


def test_scripted_replies_per_match_sticky_last_and_default(fake_llm):
    fake_llm.script("AI-Architect", "arch-1", "arch-2")
    fake_llm.script("AI-Security", "sec")
    fake_llm.default("fallback")

    assert content(ask(fake_llm, "Persona: AI-Architect. Review.")) == "arch-1"
    assert content(ask(fake_llm, "Persona: AI-Security. Review.")) == "sec"
    assert content(ask(fake_llm, "Persona: AI-Architect. Again.")) == "arch-2"
    assert content(ask(fake_llm, "Persona: AI-Architect. Again.")) == "arch-2"  # sticky last
    assert content(ask(fake_llm, "Persona: AI-Security.")) == "sec"
    assert content(ask(fake_llm, "nobody in particular")) == "fallback"

    assert fake_llm.calls() == 6
    assert fake_llm.calls("AI-Architect") == 3
    assert fake_llm.calls("AI-Security") == 2
    assert [r.matched for r in fake_llm.requests] == [
        "AI-Architect", "AI-Security", "AI-Architect", "AI-Architect", "AI-Security", None]


def test_non_sticky_script_falls_through_and_builtin_default():
    with FakeLLM() as fake:
        fake.script("AI-Architect", "once", sticky=False)
        assert content(ask(fake, "AI-Architect")) == "once"
        assert fake.pending("AI-Architect") == 0
        assert content(ask(fake, "AI-Architect")) == DEFAULT_REPLY


def test_callable_reply_sees_the_request(fake_llm):
    fake_llm.default(lambda req: f"{len(req.messages)} messages, model={req.body['model']}")
    assert content(ask(fake_llm, "hi")) == "2 messages, model=fake"


def test_arbitrary_content_is_served_verbatim(fake_llm):
    tricky = [
        'Sure! Here is the JSON:\n{"verdict": "approve", "notes": "ok"}\nHope it helps.',
        '```json\n{"verdict": "reject"}\n```',
        "line one\n<!-- cascade:vote AI-Architect=APPROVE -->\r\nline\tthree \u00e9\u2603",
    ]
    fake_llm.script("X", *tricky, sticky=False)
    for expected in tricky:
        assert content(ask(fake_llm, "X")) == expected


def test_empty_and_null_content(fake_llm):
    fake_llm.script("E", "", empty(), null_content(), None, sticky=False)
    assert content(ask(fake_llm, "E")) == ""
    assert content(ask(fake_llm, "E")) == ""
    assert content(ask(fake_llm, "E")) is None
    assert content(ask(fake_llm, "E")) is None


def test_delay_combined_with_content(fake_llm):
    fake_llm.default(delayed("slow answer", 0.3))
    t0 = time.monotonic()
    assert content(ask(fake_llm, "x")) == "slow answer"
    assert time.monotonic() - t0 >= 0.3


# --------------------------------------------------------------------------- faults


def test_http_500_raises_internal_server_error(fake_llm):
    fake_llm.default(http_error(500, "boom"))
    with pytest.raises(litellm.InternalServerError) as ei:
        ask(fake_llm, "x")
    assert ei.value.status_code == 500
    assert "boom" in str(ei.value)
    assert fake_llm.calls() == 1  # num_retries=0 really disables retries


def test_http_503_raises_service_unavailable(fake_llm):
    fake_llm.default(http_error(503))
    with pytest.raises(litellm.ServiceUnavailableError) as ei:
        ask(fake_llm, "x")
    assert ei.value.status_code == 503


def test_http_429_raises_rate_limit_error_with_retry_after(fake_llm):
    fake_llm.default(rate_limited(retry_after=7))
    t0 = time.monotonic()
    with pytest.raises(litellm.RateLimitError) as ei:
        ask(fake_llm, "x")
    assert time.monotonic() - t0 < 3  # not waiting out Retry-After: no retries
    e = ei.value
    assert e.status_code == 429
    # litellm exposes the real response headers here (e.response is synthetic, headerless):
    assert e.litellm_response_headers["Retry-After"] == "7"
    assert fake_llm.calls() == 1


def test_hang_raises_timeout_and_does_not_block_stop():
    fake = FakeLLM().start()
    try:
        fake.default(hang())
        t0 = time.monotonic()
        with pytest.raises(litellm.Timeout):
            ask(fake, "x", timeout=0.5)
        assert time.monotonic() - t0 < 3
    finally:
        t1 = time.monotonic()
        fake.stop()  # the handler thread is still "hanging": stop must abort it
        assert time.monotonic() - t1 < 2


def test_malformed_body_raises(fake_llm):
    fake_llm.default(malformed())
    with pytest.raises(litellm.InternalServerError) as ei:  # litellm maps the JSON decode failure
        ask(fake_llm, "x")
    assert ei.value.status_code == 500


def test_concurrent_delays_overlap(fake_llm):
    fake_llm.default(delayed("done", 1.0))

    async def six():
        return await asyncio.gather(*[
            litellm.acompletion(model="openai/fake", api_base=fake_llm.url, api_key="sk-test",
                                messages=[{"role": "user", "content": f"call {i}"}], num_retries=0)
            for i in range(6)])

    t0 = time.monotonic()
    results = asyncio.run(six())
    elapsed = time.monotonic() - t0
    assert [content(r) for r in results] == ["done"] * 6
    assert elapsed < 1.6, f"delays did not overlap: {elapsed:.2f}s"
    assert fake_llm.calls() == 6


def test_streaming_is_served_as_sse(fake_llm):
    fake_llm.default("a streamed reply longer than one sixteen-char chunk")

    async def run():
        stream = await litellm.acompletion(
            model="openai/fake", api_base=fake_llm.url, api_key="sk-test",
            messages=[{"role": "user", "content": "x"}], stream=True, num_retries=0)
        return "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])

    assert asyncio.run(run()) == "a streamed reply longer than one sixteen-char chunk"


# --------------------------------------------------------------------------- recording / wire


def test_recording_and_all_text(fake_llm):
    fake_llm.default("ok")
    sent = 'review "this" \u00e9 \u2603 \n newline AI-Architect'
    ask(fake_llm, sent)

    [rec] = fake_llm.requests
    assert rec.method == "POST" and rec.path == "/v1/chat/completions" and rec.is_chat
    assert rec.body["model"] == "fake"
    assert rec.body["messages"][1] == {"role": "user", "content": sent}
    assert rec.headers["Authorization"] == "Bearer sk-test"  # case-insensitive lookup
    assert abs(rec.timestamp - time.time()) < 10
    assert sent in rec.text and "You are a reviewer." in rec.text
    assert json.loads(rec.raw) == rec.body

    everything = fake_llm.all_text()
    assert sent in everything            # found even though the client JSON-escaped it
    assert "sk-test" in everything       # headers are included
    assert "POST /v1/chat/completions" in everything
    assert "never-sent-secret-0xDEADBEEF" not in everything
    assert b"POST /v1/chat/completions" in fake_llm.all_bytes()


def test_raw_http_shape_paths_and_models():
    with FakeLLM() as fake:
        fake.script("hello world", "hi there friend")
        body = json.dumps({"model": "m1", "messages": [{"role": "user", "content": "hello world!!"}]})
        status, _, data = raw_post(fake.url.removesuffix("/v1"), body.encode())  # /chat/completions
        assert status == 200
        obj = json.loads(data)
        assert obj["object"] == "chat.completion" and obj["model"] == "m1"
        assert obj["id"] and isinstance(obj["created"], int)
        choice = obj["choices"][0]
        assert choice["message"] == {"role": "assistant", "content": "hi there friend", "refusal": None}
        assert choice["finish_reason"] == "stop"
        assert obj["usage"] == {"prompt_tokens": 3, "completion_tokens": 3, "total_tokens": 6}

        with urllib.request.urlopen(fake.url + "/models", timeout=5) as r:
            assert json.loads(r.read())["data"][0]["id"] == "fake"

        status, _, data = raw_post(fake.url, b"not json", path="/chat/completions")
        assert status == 400 and "error" in json.loads(data)
        status, _, _ = raw_post(fake.url, b"{}", path="/embeddings")
        assert status == 404

        fake.default(Fault(status=429, retry_after="3", headers={"X-Extra": "1"}))
        other = json.dumps({"model": "m1", "messages": [{"role": "user", "content": "other"}]})
        status, headers, _ = raw_post(fake.url, other.encode(), path="/chat/completions")
        assert status == 429 and headers["Retry-After"] == "3" and headers["X-Extra"] == "1"

        assert fake.calls() == 3  # GET /models and 404s are recorded but are not chat calls
        assert len(fake.requests) == 5


def test_lifecycle_stop_aborts_delay_and_is_idempotent():
    fake = FakeLLM()
    with pytest.raises(RuntimeError):
        fake.url
    fake.start()
    assert fake.url.startswith("http://127.0.0.1:") and fake.url.endswith("/v1")
    fake.default(delayed("late", 30))
    outcome = []

    def client():
        try:
            outcome.append(raw_post(fake.url, b'{"messages": []}', path="/chat/completions"))
        except (OSError, http.client.HTTPException) as e:  # connection dropped, as intended
            outcome.append(e)

    t = threading.Thread(target=client, daemon=True)
    try:
        t.start()
        deadline = time.monotonic() + 5
        while fake.calls() == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        t0 = time.monotonic()
        fake.stop()
        fake.stop()
    assert time.monotonic() - t0 < 2
    t.join(timeout=5)
    assert not fake.running
    assert len(outcome) == 1 and isinstance(outcome[0], Exception)  # no reply was sent
