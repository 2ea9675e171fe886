"""openai/ models are asked over HTTP (cascade.turns.providers.openai_chat), without importing
litellm (anthropic/ ones too: tests/test_anthropic_http.py); every other model still goes
through litellm. Real HTTP against the fake endpoint,
real hook runs in subprocesses (where sys.modules tells what was imported)."""
from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, stage_adr
from fakellm import Fault, http_error, rate_limited
from test_hook import DOC, LEDGER, PANEL, RULES, match, reply  # the loop tests' repository

from cascade import Discussion
from cascade.base.errors import CascadeError
from cascade.turns.chain import ModelError, complete
from cascade.turns.providers import uses_litellm
from cascade.turns.settings import Settings

MESSAGES = [{"role": "user", "content": "Reply as AI-Test please"}]
KEY_VARS = ("OPENAI_API_KEY", "CASCADE_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE",
            "CASCADE_FALLBACK_MODELS", "CASCADE_HTTP", "ANTHROPIC_API_KEY")
# Runs the hook as `cascade hook` does, then says which model libraries were imported.
PROBE = ("import sys; from cascade.main import main; rc = main(['hook', %r]); "
         "print('PROBE', rc, 'litellm' in sys.modules, 'openai' in sys.modules)")


@pytest.fixture(autouse=True)
def no_keys(monkeypatch):
    for var in KEY_VARS:
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def hook_repo(repo, fake_llm, monkeypatch):
    monkeypatch.setenv("CASCADE_MODEL", "openai/fake")
    monkeypatch.setenv("CASCADE_API_BASE", fake_llm.url)
    monkeypatch.setenv("CASCADE_BACKOFF", "0.05")
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    stage_adr(repo, RULES, DOC)
    return repo


def probe_hook(repo: Path, **env: str) -> tuple[int, bool, bool, str]:
    """(exit code, litellm imported, openai SDK imported, output) of one hook run."""
    proc = subprocess.run([sys.executable, "-c", PROBE % DOC], cwd=repo, capture_output=True,
                          text=True, timeout=120, env={**os.environ, **env},
                          check=False)
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("PROBE ")), None)
    assert line is not None, proc.stdout + proc.stderr
    _, rc, litellm, openai = line.split()
    return int(rc), litellm == "True", openai == "True", proc.stdout + proc.stderr


def ask(model: str, **settings):
    retries: list[tuple] = []
    options = {"backoff": 0.01, "retries": 2, "timeout": 5.0, **settings}
    try:
        result = asyncio.run(complete(model, MESSAGES, Settings(model=model, **options),
                                      on_retry=lambda *args: retries.append(args)))
        return None, retries, result
    except ModelError as exc:
        return str(exc), retries, None


# ------------------------------------------------------------------ which way a model goes


@pytest.mark.parametrize("model, http, litellm", [
    ("openai/fake", "auto", False),
    ("openai/gpt-4o-mini", "auto", False),
    ("openai/fake", "litellm", True),
    ("anthropic/claude-3-5-haiku-latest", "auto", False),  # Anthropic's Messages API
    ("gemini/gemini-1.5-flash", "auto", True),
    ("gpt-4o-mini", "auto", True),  # a bare name: only litellm knows its provider
    ("cascade-local/smollm2", "auto", True),
    ("openai/", "auto", True),
])
def test_which_models_go_direct(model, http, litellm):
    assert uses_litellm(model, Settings(http=http)) is litellm


def test_cascade_http_is_validated(monkeypatch):
    monkeypatch.setenv("CASCADE_HTTP", "LiteLLM")
    assert Settings.from_env().http == "litellm"
    monkeypatch.setenv("CASCADE_HTTP", "curl")
    with pytest.raises(CascadeError, match="CASCADE_HTTP='curl' must be one of: auto, litellm"):
        Settings.from_env()


# ------------------------------------------------------------------ a hook run, no litellm


def test_hook_run_never_imports_litellm(hook_repo, fake_llm):
    for name in PANEL:
        fake_llm.script(match(name), reply(f"{name} reviewed it.", "READY"))
    rc, litellm, openai, out = probe_hook(hook_repo)
    assert rc == 1, out  # the ledger was written: the commit is blocked until it is staged
    assert (litellm, openai) == (False, False), out
    assert fake_llm.calls() == 3
    # the request litellm sends: the name without its provider prefix, the reply budget
    body = fake_llm.chat_requests[0].body
    assert body["model"] == "fake" and body["max_tokens"] == 1024
    assert fake_llm.chat_requests[0].headers["Authorization"] == "Bearer no-key"
    d = Discussion.load(hook_repo / LEDGER, root=hook_repo)
    assert sorted(d.votes) == sorted(PANEL)
    for c in d.comments:  # usage in the stamp
        assert c.provenance["model"] == "openai/fake"
        assert int(c.provenance["prompt_tokens"]) > 0
        assert int(c.provenance["completion_tokens"]) > 0
        assert "cost" not in c.provenance  # an unknown model on a plain server: no price


def test_a_request_goes_through_httpx_and_never_loads_litellm(fake_llm):
    """The direct path speaks HTTP through httpx: a request, plain and streamed, loads it
    (and nothing of litellm or the openai SDK, 2-3 s of a commit attempt); importing the
    seam alone loads no HTTP client at all (a run served from the cache asks nobody)."""
    fake_llm.default(reply("fine", "READY"))
    code = (
        "import asyncio, sys\n"
        "from cascade.turns import chain\n"
        "print('SEAM', sorted(n for n in ('httpx', 'httpcore', 'litellm') if n in sys.modules))\n"
        "from cascade.turns.providers import openai_chat as o\n"
        "from cascade.turns.providers.httpclient import Endpoint\n"
        "m = [{'role': 'user', 'content': 'hi'}]\n"
        f"e = Endpoint({fake_llm.url!r}, None, 5, 1 << 20)\n"
        "a = asyncio.run(o.chat('fake', m, e, max_tokens=16))\n"
        "s = asyncio.run(o.chat('fake', m, e, max_tokens=16, on_text=lambda t: None))\n"
        "print('ANSWER', a.text == s.text, a.text)\n"
        "print('LOADED', sorted(n for n in ('httpx', 'litellm', 'openai') if n in sys.modules))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "PYTHONPATH": str(REPO)}, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "SEAM []" in proc.stdout
    assert 'ANSWER True {"comment": "fine"' in proc.stdout
    assert "LOADED ['httpx']" in proc.stdout


def test_hook_run_with_cascade_http_litellm_uses_litellm(hook_repo, fake_llm):
    fake_llm.default(reply("fine", "READY"))
    rc, litellm, _, out = probe_hook(hook_repo, CASCADE_HTTP="litellm")
    assert rc == 1 and litellm, out
    assert fake_llm.chat_requests[0].headers["User-Agent"].startswith("AsyncOpenAI")
    assert fake_llm.chat_requests[0].body["model"] == "fake"


def test_proxy_cost_header_is_recorded_in_the_stamp(hook_repo, fake_llm):
    fake_llm.default(Fault(content=reply("priced", "READY"),
                           headers={"x-litellm-response-cost": "0.00042"}))
    rc, litellm, _, out = probe_hook(hook_repo)
    assert rc == 1 and not litellm, out
    d = Discussion.load(hook_repo / LEDGER, root=hook_repo)
    assert [c.provenance["cost"] for c in d.comments] == ["0.000420"] * 3


def test_retries_and_fallback_in_a_hook_run_without_litellm(hook_repo, fake_llm):
    fake_llm.script(match("AI-Architect"), http_error(503), reply("second try", "READY"))
    fake_llm.script(match("AI-Security"), rate_limited(0.2), reply("after the wait", "READY"))
    fake_llm.script(match("AI-Pragmatist"),
                    lambda req: http_error(500) if req.body["model"] == "fake"
                    else reply("from the backup", "CHANGES"))
    rc, litellm, _, out = probe_hook(hook_repo, CASCADE_RETRIES="1",
                                     CASCADE_FALLBACK_MODELS="openai/backup")
    assert rc == 1 and not litellm, out
    d = Discussion.load(hook_repo / LEDGER, root=hook_repo)
    models = {c.author: c.provenance["model"] for c in d.comments}
    assert models == {"AI-Architect": "openai/fake", "AI-Security": "openai/fake",
                      "AI-Pragmatist": "openai/backup"}
    assert d.votes["AI-Pragmatist"] == "CHANGES"
    assert fake_llm.calls(match("AI-Architect")) == 2
    assert fake_llm.calls(match("AI-Security")) == 2
    assert fake_llm.calls(match("AI-Pragmatist")) == 3  # fake twice (one retry), then backup
    assert "after 1 retry (" in out and "retrying" not in out  # folded into its one line


# ------------------------------------------------------------------ complete(), in-process


def test_retry_after_is_honoured(fake_llm):
    fake_llm.script("AI-Test", http_error(429, retry_after=0.3), "ok")
    error, retries, result = ask("openai/fake", api_base=fake_llm.url, backoff=0.0)
    assert error is None and result.text == "ok" and result.attempts == 2
    [(model, reason, wait)] = retries
    assert model == "openai/fake" and reason.startswith("RateLimitError (HTTP 429)")
    assert wait == pytest.approx(0.3)


def test_timeout_is_the_configured_one(fake_llm):
    from fakellm import hang

    fake_llm.default(hang(5))
    error, retries, _ = ask("openai/fake", api_base=fake_llm.url, timeout=0.3, retries=1)
    assert error == f"Timeout: timed out after 0.3s waiting for {fake_llm.url}"
    assert len(retries) == 1 and fake_llm.calls() == 2


def test_reply_tokens_and_keys(fake_llm, monkeypatch):
    fake_llm.default("hi")
    assert ask("openai/fake", api_base=fake_llm.url, api_key="sk-cascade",
               reply_tokens=77)[0] is None
    request = fake_llm.chat_requests[-1]
    assert request.body["max_tokens"] == 77
    assert request.headers["Authorization"] == "Bearer sk-cascade"
    # OpenAI's own key, and its base URL variable, as litellm reads them
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.url)
    error, _, result = ask("openai/gpt-4o-mini")
    assert error is None and result.text == "hi"
    assert fake_llm.chat_requests[-1].headers["Authorization"] == "Bearer sk-openai"
    assert fake_llm.chat_requests[-1].body["model"] == "gpt-4o-mini"
    # a listed model is priced from litellm's bundled price list: 1 token at $0.60 / 1M
    assert result.cost == pytest.approx(result.completion_tokens * 6e-7
                                        + result.prompt_tokens * 1.5e-7)
    assert result.cost > 0


def test_reasoning_models_get_max_completion_tokens(fake_llm):
    fake_llm.default("hi")
    assert ask("openai/o3-mini", api_base=fake_llm.url)[0] is None
    body = fake_llm.chat_requests[-1].body
    assert body["max_completion_tokens"] == 1024 and "max_tokens" not in body


def test_missing_openai_key_is_said_without_a_request(fake_llm, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.url)
    error, retries, _ = ask("openai/gpt-4o-mini", retries=3, backoff=5.0)
    assert error == "no credentials for openai/gpt-4o-mini: set OPENAI_API_KEY"
    assert retries == [] and fake_llm.requests == []


def test_an_answer_that_is_not_a_chat_completion(fake_llm):
    fake_llm.default(Fault(raw_body='{"object": "list", "data": []}'))
    error, _, _ = ask("openai/fake", api_base=fake_llm.url, retries=0)
    assert error.startswith(f"InternalServerError: the response from {fake_llm.url} is not a "
                            "chat completion")
    assert "HTTP" not in error


def test_a_password_in_the_base_url_is_never_printed(fake_llm):
    fake_llm.default(Fault(raw_body='{"object": "list", "data": []}'))
    base = fake_llm.url.replace("http://", "http://rob:s3cret@")
    error, _, _ = ask("openai/fake", api_base=base, retries=0)
    assert error.startswith(f"InternalServerError: the response from {fake_llm.url} is not a "
                            "chat completion"), error
    assert "s3cret" not in error and "rob" not in error


def test_a_query_string_in_the_base_url_stays_after_the_path(fake_llm):
    """A base URL with a query (an ``?api-version=`` a gateway wants): the request goes to
    the path, the query after it, and a base that already names the endpoint is used as is."""
    fake_llm.default("fine")
    for base in (f"{fake_llm.url}/?api-version=2024-10", f"{fake_llm.url}/chat/completions"
                 "?api-version=2024-10"):
        error, _, result = ask("openai/fake", api_base=base, retries=0)
        assert error is None and result.text == "fine", error
        assert fake_llm.requests[-1].path == "/v1/chat/completions?api-version=2024-10"


def test_a_non_json_error_page_is_quoted(fake_llm):
    fake_llm.default(Fault(status=502, raw_body="<html>bad gateway</html>"))
    error, _, _ = ask("openai/fake", api_base=fake_llm.url, retries=0)
    assert error == "BadGatewayError (HTTP 502): <html>bad gateway</html>"


def test_another_provider_still_goes_through_litellm_then_falls_back_direct(fake_llm):
    """gemini/ with a base URL is litellm's Gemini translation (POST .../models/<name>:
    generateContent), not an OpenAI-compatible call; its failure falls back to an openai/ model
    asked directly."""
    fake_llm.default("from the fallback")
    error, _, result = ask("gemini/gemini-1.5-flash", api_base=fake_llm.url, api_key="sk-test",
                           retries=0, fallbacks=["openai/fake"])
    assert error is None and result.model == "openai/fake"
    paths = [r.path for r in fake_llm.requests]
    assert "gemini-1.5-flash:generateContent" in paths[0]
    assert paths[-1] == "/v1/chat/completions"
    assert "litellm" in sys.modules


def test_the_price_list_is_read_through_a_small_index(tmp_path):
    """A model's price comes from an index of litellm's price list (one model a line), kept
    in the user's cache folder (keyed by the list's size and time): the 3 MB list is read
    only to build that index."""
    code = ("from cascade.turns.pricing import listed_cost\n"
            "print('COST', listed_cost(('gpt-4o-mini',), 1000, 0), listed_cost(('fake',), 1000, 0),"
            " listed_cost(('fake', 'gpt-4o-mini'), 1000, 0))")
    env = {**os.environ, "PYTHONPATH": str(REPO), "XDG_CACHE_HOME": str(tmp_path)}

    def cost() -> str:
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              env=env, timeout=60, check=True)
        return next(ln for ln in proc.stdout.splitlines() if ln.startswith("COST"))

    assert cost() == "COST 0.00015 None 0.00015"
    (index,) = (tmp_path / "cascade").glob("price-index-*.jsonl")
    head, *lines = index.read_text().splitlines()
    listed = {row[0]: row[1:] for row in map(json.loads, lines)}
    assert listed["gpt-4o-mini"] == [1.5e-07, 6e-07] and len(listed) > 500
    assert cost() == "COST 0.00015 None 0.00015"  # from the index
    index.write_text("\n".join([head] + [ln for ln in lines
                                          if json.loads(ln)[0] != "gpt-4o-mini"]) + "\n")
    assert cost() == "COST None None None"  # the index decides what is listed
    index.write_text(f"{head}\n" + json.dumps(["gpt-4o-mini", 1e-06, None]) + "\n")
    assert cost() == "COST 0.001 None 0.001"  # and at what price
    index.write_text("not json")
    assert cost() == "COST 0.00015 None 0.00015"  # an unreadable index is built again
