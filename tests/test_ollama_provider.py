"""A provider is one module registered by name: Ollama's own chat API
(cascade/turns/providers/ollama_chat.py), asked for ``ollama/<name>`` with no edit in the
model seam -- its request, its answer plain and streamed, its failures in one line, a whole
review through the real hook, and an installed package's provider found through the
``cascade.providers`` entry point group. Real HTTP against a small Ollama-shaped server on
127.0.0.1."""
from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from conftest import REPO, stage_adr
from test_hook import DOC, RULES

from cascade.config.providers import ProviderEntry, ProviderTable
from cascade.protocol.discussion import Discussion
from cascade.turns import providers
from cascade.turns.chain import ModelError, complete
from cascade.turns.settings import Settings

MESSAGES = [{"role": "system", "content": "You review."}, {"role": "user", "content": "hi"}]
REVIEW = json.dumps({"comment": "Reviewed through Ollama's own API.", "vote": "READY"})


class _Ollama(ThreadingHTTPServer):
    daemon_threads = True
    requests: list[dict]
    reply: str
    status: int


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append({"path": self.path, "body": body})
        if self.server.status != 200:
            data = json.dumps({"error": f"model '{body['model']}' not found"}).encode()
            self._send(self.server.status, data, "application/json")
            return
        text = self.server.reply
        if not body.get("stream"):
            data = json.dumps({"model": body["model"], "done": True, "prompt_eval_count": 21,
                               "eval_count": 7,
                               "message": {"role": "assistant", "content": text}}).encode()
            self._send(200, data, "application/json")
            return
        pieces = [text[i:i + 10] for i in range(0, len(text), 10)]
        lines = [json.dumps({"message": {"role": "assistant", "content": p}, "done": False})
                 for p in pieces]
        lines.append(json.dumps({"message": {"role": "assistant", "content": ""}, "done": True,
                                 "prompt_eval_count": 21, "eval_count": 7}))
        self._send(200, ("\n".join(lines) + "\n").encode(), "application/x-ndjson")

    def _send(self, status: int, data: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def ollama():
    server = _Ollama(("127.0.0.1", 0), _Handler)
    server.requests, server.reply, server.status = [], REVIEW, 200
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    server.url = f"http://127.0.0.1:{server.server_address[1]}"
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for var in ("CASCADE_API_BASE", "CASCADE_API_KEY", "OLLAMA_API_BASE", "OLLAMA_HOST",
                "CASCADE_HTTP", "CASCADE_FALLBACK_MODELS"):
        monkeypatch.delenv(var, raising=False)


def ask(model: str, on_text=None, **options):
    settings = Settings(**{"retries": 0, "timeout": 5.0, **options})
    try:
        return None, asyncio.run(complete(model, MESSAGES, settings, on_text=on_text))
    except ModelError as exc:
        return str(exc), None


def test_the_request_and_the_answer_are_ollama_s(ollama, monkeypatch):
    monkeypatch.setenv("OLLAMA_API_BASE", ollama.url)
    error, done = ask("ollama/llama3.2", max_reply_bytes=1 << 20)
    assert error is None
    assert (done.text, done.model, done.prompt_tokens, done.completion_tokens) == (
        REVIEW, "ollama/llama3.2", 21, 7)
    [request] = ollama.requests
    assert request["path"] == "/api/chat"
    assert request["body"] == {"model": "llama3.2", "messages": MESSAGES, "stream": False,
                               "options": {"num_predict": 1024}}
    assert providers.target("ollama/llama3.2", Settings()).provider == "ollama"
    assert providers.target("ollama/llama3.2", Settings(http="litellm")).provider == "litellm"


def test_a_streamed_answer_arrives_in_pieces_and_whole(ollama):
    pieces: list[str] = []
    error, done = ask("ollama_chat/llama3.2", on_text=pieces.append, api_base=ollama.url)
    assert error is None and done.text == REVIEW and "".join(pieces) == REVIEW
    assert len(pieces) > 3 and done.completion_tokens == 7
    assert ollama.requests[0]["body"]["stream"] is True


def test_a_failure_is_one_line_and_the_chain_goes_on(ollama, fake_llm, monkeypatch):
    """A 404 with Ollama's error body: one line, not retried; the next model of the chain
    (another provider, over its own endpoint) answers."""
    ollama.status = 404
    error, _ = ask("ollama/nope", api_base=ollama.url)
    assert error == "NotFoundError (HTTP 404): model 'nope' not found"
    fake_llm.default("from the fallback")
    declared = ProviderTable((ProviderEntry("local-llama", None, "ollama/nope",
                                            (("api_base", ollama.url),)),))
    error, done = ask("local-llama", api_base=fake_llm.url, fallbacks=["openai/fake"],
                      providers=declared)  # a declared provider's own api_base comes first
    assert error is None and done.text == "from the fallback" and done.model == "openai/fake"
    assert len(ollama.requests) == 2  # once each: a 404 is not retried


def test_a_review_through_the_hook(repo, ollama):
    """A whole review in the gate: three personas asked over Ollama's API, their replies in
    the ledger, each stamp naming the model."""
    stage_adr(repo, RULES, DOC)
    env = {**os.environ, "PYTHONPATH": str(REPO), "CASCADE_MODEL": "ollama/llama3.2",
           "OLLAMA_API_BASE": ollama.url}
    proc = subprocess.run([sys.executable, "-m", "cascade", "hook", DOC], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # written: staged next
    assert len(ollama.requests) == 3
    ledger = next(repo.rglob("*.discussion.md"))
    d = Discussion.load(ledger, root=repo)
    assert {c.provenance["model"] for c in d.comments if c.origin == "ai"} == {"ollama/llama3.2"}
    assert all(c.provenance["prompt_tokens"] == "21" for c in d.comments if c.origin == "ai")


def test_the_model_seam_names_no_provider():
    """Adding Ollama took one module: the seam (retries, fallbacks) names no provider."""
    seam = (REPO / "cascade/turns/chain.py").read_text().lower()
    for name in ("ollama", "anthropic", "openai", "litellm", "httpx"):
        assert name not in seam, name


def test_an_installed_package_adds_a_provider(tmp_path):
    """A distribution on the path with a ``cascade.providers`` entry point: its provider is
    asked for its prefix; the same package inside the working directory is never imported."""
    site = tmp_path / "site"
    (site / "cascade_echo_provider").mkdir(parents=True)
    (site / "cascade_echo_provider/__init__.py").write_text(
        "from cascade.turns.call import Completion, Route\n"
        "from cascade.turns.providers import Provider, register\n"
        "def route(target, ask):\n"
        "    async def request():\n"
        "        return ask.messages[-1]['content'].upper()\n"
        "    return Route(request, lambda text, n: Completion(text, target.name, 0, 0, None, n))\n"
        "register(Provider('echo', route))\n")
    dist = site / "cascade_echo_provider-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: cascade-echo-provider\n"
                                   "Version: 1.0\n")
    (dist / "entry_points.txt").write_text("[cascade.providers]\necho = cascade_echo_provider\n")
    code = ("import asyncio\n"
            "from cascade.turns.chain import complete\n"
            "from cascade.turns.settings import Settings\n"
            "done = asyncio.run(complete('echo/any', [{'role': 'user', 'content': 'hi'}], "
            "Settings(retries=0)))\n"
            "print('ANSWER', done.text, done.model)\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(site)])}
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "ANSWER HI echo/any" in proc.stdout
    # Run from inside that folder: not trusted. Which provider asks echo/any is the question
    # (litellm, which would then say it knows no such provider: its import alone is ~5 s of
    # CPU), and the package's module never imported.
    asked = ("import sys\n"
             "from cascade.turns.providers import target\n"
             "from cascade.turns.settings import Settings\n"
             "print('TARGET', target('echo/any', Settings(retries=0)).provider,\n"
             "      'cascade_echo_provider' in sys.modules)\n")
    inside = subprocess.run([sys.executable, "-c", asked], cwd=site, env={
        **os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(site)])},
        capture_output=True, text=True, timeout=60)
    assert "TARGET litellm False" in inside.stdout, inside.stdout + inside.stderr
    outside = subprocess.run([sys.executable, "-c", asked], cwd=REPO, env=env,
                             capture_output=True, text=True, timeout=60)
    assert "TARGET echo True" in outside.stdout, outside.stdout + outside.stderr
