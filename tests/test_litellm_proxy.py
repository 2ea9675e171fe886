"""The hook through a real LiteLLM proxy: `litellm --config ...` on 127.0.0.1 (a subprocess,
the `proxy` extra), in front of the fake endpoint (tests/fakellm.py), as a team gateway would
stand in front of a provider. Real repositories, real `git commit` with the plain hooks.

The proxy holds the upstream key and the model list; cascade knows only the proxy's URL, its
key and a model alias (docs/gateway.md)."""
from __future__ import annotations

import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from conftest import REPO, git
from fakellm import FakeLLM, http_error
from test_hook import DOC, LEDGER, PANEL, RULES, commit, install_plain, match, reply

from cascade import Discussion

pytestmark = pytest.mark.slow

MASTER_KEY = "sk-cascade-gateway-test"  # what cascade sends (CASCADE_API_KEY)
UPSTREAM_KEY = "sk-upstream-only-the-proxy-knows"  # what the proxy sends upstream
ALIAS = "review-model"  # the proxy's name for the fake endpoint's model "fake"
DOWN = "down-model"  # an alias whose upstream nothing listens on
INPUT_PRICE, OUTPUT_PRICE = 2e-6, 5e-6  # per token, priced by the proxy
START_TIMEOUT = 120.0  # seconds; a cold start (bytecode compiled) takes ~15 s on 2 cores
# What the proxy needs beyond litellm itself (the `proxy` extra installs all of it).
PROXY_MODULES = ("fastapi", "uvicorn", "websockets", "apscheduler", "backoff", "orjson")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def proxy_config(upstream: str, down: str) -> str:
    return f"""\
model_list:
  - model_name: {ALIAS}
    litellm_params:
      model: openai/fake
      api_base: {upstream}
      api_key: {UPSTREAM_KEY}
      input_cost_per_token: {INPUT_PRICE}
      output_cost_per_token: {OUTPUT_PRICE}
  - model_name: {DOWN}
    litellm_params:
      model: openai/fake
      api_base: {down}
      api_key: {UPSTREAM_KEY}
litellm_settings:
  num_retries: 0
  request_timeout: 30
router_settings:
  num_retries: 0
general_settings:
  master_key: {MASTER_KEY}
"""


def tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no output)"


class Proxy:
    def __init__(self, url: str, process: subprocess.Popen, stderr: Path):
        self.url, self.process, self.stderr = url, process, stderr


@pytest.fixture(scope="module")
def upstream():
    with FakeLLM() as fake:
        yield fake


@pytest.fixture(scope="module")
def proxy(upstream, tmp_path_factory):
    missing = [m for m in PROXY_MODULES if importlib.util.find_spec(m) is None]
    if missing:
        message = (f"the LiteLLM proxy's dependencies are not installed ({', '.join(missing)}): "
                   "pip install -e '.[test,local,proxy]'")
        pytest.fail(message)  # the README's test command installs them: never a silent skip
    folder = tmp_path_factory.mktemp("proxy")
    config = folder / "config.yaml"
    config.write_text(proxy_config(upstream.url, f"http://127.0.0.1:{free_port()}/v1"))
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENAI_", "LITELLM_", "CASCADE_", "DATABASE_URL"))}
    # the price list litellm ships, not a download at start (there may be no network)
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    env["HOME"] = str(folder)
    stdout, stderr = folder / "stdout.log", folder / "stderr.log"
    with open(stdout, "wb") as out, open(stderr, "wb") as err:
        process = subprocess.Popen(
            [sys.executable, "-m", "litellm.proxy.proxy_cli", "--config", str(config),
             "--host", "127.0.0.1", "--port", str(port)],
            cwd=folder, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
            start_new_session=True)  # its own process group: killed whole below
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if process.poll() is not None:
                pytest.fail(f"the LiteLLM proxy exited with {process.returncode} before it was "
                            f"ready; its stderr ends:\n{tail(stderr)}\nand its stdout:\n"
                            f"{tail(stdout, 10)}")
            try:
                if httpx.get(f"{url}/health/liveliness", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"the LiteLLM proxy was not ready at {url}/health/liveliness after "
                            f"{START_TIMEOUT:.0f}s; its stderr ends:\n{tail(stderr)}")
            time.sleep(0.25)
        yield Proxy(url, process, stderr)
    finally:
        try:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=15)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=15)


@pytest.fixture
def gateway_repo(repo, proxy, upstream, monkeypatch):
    """The loop tests' repository, its plain hooks installed, every model call to the proxy."""
    upstream.reset()
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE", "CASCADE_HTTP",
                "CASCADE_FALLBACK_MODELS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("CASCADE_API_BASE", proxy.url)
    monkeypatch.setenv("CASCADE_API_KEY", MASTER_KEY)
    monkeypatch.setenv("CASCADE_MODEL", f"openai/{ALIAS}")
    monkeypatch.setenv("CASCADE_BACKOFF", "0.05")
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    (repo / ".ai-rules.yml").write_text(RULES)
    (repo / "README.md").write_text("# Project\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "start")
    install_plain(repo)
    (repo / "docs/adr").mkdir(parents=True)
    (repo / DOC).write_text("# Use SQLite\n\nWe will store events in SQLite.\n")
    git(repo, "add", DOC)
    return repo


def test_the_hook_through_a_litellm_proxy(gateway_repo, upstream, proxy):
    repo = gateway_repo
    for name, vote in zip(PANEL, ("READY", "READY", "CHANGES")):
        upstream.script(match(name), reply(f"{name} reviewed it through the gateway.", vote))

    first = commit(repo)  # 2 of 3 READY meets 0.67: the commit lands with the staged ledger
    assert first.returncode == 0, first.out
    d = Discussion.load(repo / LEDGER, root=repo)
    assert {c.author: c.body.strip().split("\n\n")[0] for c in d.comments} == {  # its text
        name: f"{name} reviewed it through the gateway." for name in PANEL}
    assert d.votes == {"AI-Architect": "READY", "AI-Security": "READY",
                       "AI-Pragmatist": "CHANGES"}

    # Each call reached the fake endpoint through the proxy: under the upstream model's name,
    # with the proxy's upstream key and its client; cascade's key stayed at the proxy.
    calls = upstream.chat_requests
    assert len(calls) == 3
    assert sorted(name for name in PANEL for r in calls if match(name) in r.text) == sorted(PANEL)
    for request in calls:
        assert request.body["model"] == "fake"
        assert request.headers["Authorization"] == f"Bearer {UPSTREAM_KEY}"
        assert not request.headers.get("User-Agent", "").startswith("cascadingdev")
    assert MASTER_KEY not in upstream.all_text()

    # Usage as the endpoint reported it; the cost is the proxy's (x-litellm-response-cost,
    # from the prices in its config): the alias is in no price list cascade could read.
    sent = {name: next(r for r in calls if match(name) in r.text) for name in PANEL}
    for c in d.comments:
        prompt = int(c.provenance["prompt_tokens"])
        completion = int(c.provenance["completion_tokens"])
        assert c.provenance["model"] == f"openai/{ALIAS}"
        assert prompt == len(sent[c.author].text) // 4 > 0  # the fake's own count
        assert completion > 0
        assert float(c.provenance["cost"]) == pytest.approx(
            prompt * INPUT_PRICE + completion * OUTPUT_PRICE, abs=1e-6)

    assert len(upstream.chat_requests) == 3
    assert git(repo, "status", "--porcelain").strip() == ""
    assert git(repo, "show", "--stat", "--format=", "HEAD").count("|") == 2  # doc and ledger


@pytest.mark.parametrize("failure", ["upstream error", "upstream down"])
def test_a_failing_upstream_blocks_with_one_line_per_persona(gateway_repo, upstream, monkeypatch,
                                                              failure):
    repo = gateway_repo
    monkeypatch.setenv("CASCADE_RETRIES", "0")
    if failure == "upstream error":
        upstream.default(http_error(503, "fakellm: the provider is overloaded"))
        cause = "the provider is overloaded"
    else:
        monkeypatch.setenv("CASCADE_MODEL", f"openai/{DOWN}")
        cause = f"Connection error. (from the provider behind the proxy, model group {DOWN})"

    before = git(repo, "rev-parse", "HEAD")
    proc = commit(repo)
    assert proc.returncode == 1, proc.out
    assert "Traceback" not in proc.out
    assert not (repo / LEDGER).exists() or not Discussion.load(repo / LEDGER, root=repo).comments
    for name in PANEL:
        lines = [ln for ln in proc.out.splitlines() if name in ln and cause in ln]
        assert len(lines) == 1, proc.out  # each failure once, on one line, with its cause
    assert "AI-Architect, AI-Security, AI-Pragmatist failed (see above)" in proc.out
    assert upstream.calls() == (3 if failure == "upstream error" else 0)
    assert git(repo, "rev-parse", "HEAD") == before  # nothing landed
