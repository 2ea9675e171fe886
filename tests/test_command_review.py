"""Whole reviews through command providers: the real hook on a real `git commit`, and
`cascade discuss`, with the panel asked through programs run as declared providers -- the
`llm` CLI, its model declared in llm's own configuration as an OpenAI-compatible model on the
fake endpoint, and small Python scripts each test writes for the faults (a non-zero exit,
garbage, a hang, a secret echoed, a program not installed)."""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO, git
from council_script import Council
from test_command_provider import _gone, _wait_gone
from test_hook import (DOC, LEDGER, commit, install_plain, loop_repo, match,  # noqa: F401
                       reply, run, script)

from cascade import Discussion
from cascade.turns.credentials import SHOWN
from cascade.turns.providers.command import EARLIER_REPLY

LLM = Path(sys.executable).parent / "llm"
PY = shlex.quote(sys.executable)
PANEL = ("AI-Architect", "AI-Security", "AI-Pragmatist")
KEY = "sk-proj-Qw81Lq0Vb3NmC4Tg7Hr2Jp5Ks9Wd6Fy1"
TOKEN = "ghp_R2d2C3poBb8Yoda77Lukeskywalker000"


@pytest.fixture(scope="module")
def llm_database(tmp_path_factory) -> Path:
    """llm's database as its first run leaves it, made once for the module (an llm run costs
    ~1.5 s of CPU): each test's llm home gets a copy."""
    home = tmp_path_factory.mktemp("llm-first-run")
    subprocess.run([str(LLM), "-m", "echo", "hello"], check=True, capture_output=True,
                   env={**os.environ, "LLM_USER_PATH": str(home)})
    return home / "logs.db"


@pytest.fixture
def llm_models(tmp_path, fake_llm, monkeypatch, llm_database) -> Path:
    """llm's configuration for the test: one OpenAI-compatible model, ``fake-review``, served
    by the fake endpoint (llm's own ``extra-openai-models.yaml``; no key needed)."""
    home = tmp_path / "llm-home"
    home.mkdir()
    (home / "extra-openai-models.yaml").write_text(
        f"- model_id: fake-review\n  model_name: fake\n  api_base: \"{fake_llm.url}\"\n")
    monkeypatch.setenv("LLM_USER_PATH", str(home))
    # llm has been used here before: its database exists. Every run opens it (--no-log too),
    # and the first runs create its tables: three first runs at once collide ("no such
    # table: log") -- llm's failure, not what these tests are about.
    shutil.copyfile(llm_database, home / "logs.db")
    return home


# --no-log: llm would log every prompt to that database, and several llm processes at once
# writing to it can find it locked under load.
REVIEWER = f"providers:\n  - name: reviewer\n    command: {LLM} -m fake-review --no-log\n"


@pytest.fixture
def command_repo(loop_repo, monkeypatch) -> Path:
    """The loop's repository with no CASCADE_MODEL: the declared providers decide."""
    monkeypatch.delenv("CASCADE_MODEL", raising=False)
    monkeypatch.delenv("CASCADE_API_BASE", raising=False)
    monkeypatch.setenv("CASCADE_RETRIES", "0")
    return loop_repo


def declare(repo: Path, text: str) -> None:
    """``text`` as the repository's .cascade/providers.yml, committed."""
    (repo / ".cascade").mkdir(exist_ok=True)
    (repo / ".cascade/providers.yml").write_text(text)
    git(repo, "add", ".cascade")
    git(repo, "commit", "-qm", "providers", "--no-verify")


def pyscript(tmp_path: Path, name: str, source: str) -> str:
    """A Python script in ``tmp_path`` (outside the repository): its command line."""
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    return f"{PY} {shlex.quote(str(path))}"


def via_llm(fake) -> list:
    """The requests the fake endpoint had from llm (its OpenAI client), not from cascade."""
    return [r for r in fake.chat_requests if r.headers.get("user-agent", "").startswith(
        "OpenAI/Python")]


def stamps(repo: Path, ledger: str = LEDGER) -> dict[str, dict[str, str]]:
    d = Discussion.load(repo / ledger, root=repo)
    return {c.author: c.provenance for c in d.comments if c.provenance.get("model")}


@pytest.mark.usefixtures("llm_models")
def test_the_hook_reviews_through_llm_until_the_panel_is_ready(command_repo, fake_llm,
                                                               monkeypatch):
    repo = command_repo
    monkeypatch.setenv("CASCADE_MAX_TOKENS", "100000")
    declare(repo, REVIEWER + "default: reviewer\n")
    install_plain(repo)
    script(fake_llm, ("CHANGES", "CHANGES", "READY"))
    git(repo, "add", DOC)

    started = time.monotonic()
    first = commit(repo)
    took = time.monotonic() - started
    assert first.returncode == 1, first.out
    asked = via_llm(fake_llm)
    assert len(asked) == len(fake_llm.chat_requests) == 3  # every call went through llm
    for request in asked:  # the persona's system prompt by llm's --system, the rest as sent
        system, user = request.body["messages"]
        assert (system["role"], user["role"]) == ("system", "user")
        assert "Reply as AI-" in user["content"] and request.body["stream"] is True
    assert {name: (s["model"], "prompt_tokens" in s, "completion_tokens" in s, "cost" in s)
            for name, s in stamps(repo).items()} == {
        name: ("reviewer", False, False, False) for name in PANEL}, first.out  # no count, not 0
    assert first.out.count("note: tokens unknown for reviewer (a command: no token counts, "
                           "no cost)") == 1
    assert first.out.count("CASCADE_MAX_TOKENS=100000 cannot count the calls to reviewer") == 1
    print(f"\nthree reviews through llm, one commit: {took:.1f}s")

    assert run(repo, sys.executable, "-m", "cascade", "comment", LEDGER,
               "Added a backup plan. @security does this address your concern?").returncode == 0
    script(fake_llm, ("READY", "READY", "READY"), "better")
    git(repo, "add", LEDGER)
    landed = commit(repo)
    assert landed.returncode == 0, landed.out
    assert len(via_llm(fake_llm)) == 4  # security alone was asked again
    assert Discussion.load(repo / LEDGER, root=repo).votes == {
        "AI-Architect": "CHANGES", "AI-Security": "READY", "AI-Pragmatist": "READY"}


@pytest.mark.usefixtures("llm_models")
def test_a_persona_s_provider_hint_picks_the_command_provider(command_repo, fake_llm,
                                                               monkeypatch):
    """The architect hints at ``reviewer`` (llm); the others ask the declared default, a
    model over plain HTTP."""
    repo = command_repo
    monkeypatch.setenv("CASCADE_API_BASE", fake_llm.url)
    personas = repo / ".cascade/personas"
    personas.mkdir(parents=True)
    text = (REPO / "personas/architect.yml").read_text()
    (personas / "architect.yml").write_text(text + "provider_hint: reviewer\n")
    declare(repo, REVIEWER + "  - name: http\n    model: openai/fake\ndefault: http\n")
    install_plain(repo)
    script(fake_llm, ("READY", "READY", "READY"))
    git(repo, "add", DOC)
    landed = commit(repo)
    assert landed.returncode == 0, landed.out
    asked = via_llm(fake_llm)
    assert len(asked) == 1 and match("AI-Architect") in asked[0].text
    assert {name: s["model"] for name, s in stamps(repo).items()} == {
        "AI-Architect": "reviewer", "AI-Security": "http", "AI-Pragmatist": "http"}
    assert "prompt_tokens" in stamps(repo)["AI-Security"]  # HTTP counts its tokens


@pytest.mark.usefixtures("llm_models")
def test_the_declared_fallback_answers_when_the_default_command_fails(command_repo, fake_llm,
                                                                       monkeypatch, tmp_path):
    """The design's two files: the list of providers (the repository's) and the choice,
    ``providers: {default:, fallback: [...]}`` (the user's). The default command fails (it
    is retried once), the fallback answers."""
    repo = command_repo
    monkeypatch.setenv("CASCADE_RETRIES", "1")
    monkeypatch.setenv("CASCADE_BACKOFF", "0.01")
    runs = tmp_path / "runs"
    broken = pyscript(tmp_path, "broken", f"""\
import sys
open({str(runs)!r}, "a").write("x")
sys.stderr.write("Error: not logged in (run: claude login)\\n")
sys.exit(1)
""")
    declare(repo, f"providers:\n  - name: broken\n    command: {broken}\n"
                  f"  - name: reviewer\n    command: {LLM} -m fake-review --no-log\n")
    user = tmp_path / "xdg"
    (user / "cascade").mkdir(parents=True)
    (user / "cascade/providers.yml").write_text(
        "providers:\n  default: broken\n  fallback:\n    - reviewer\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(user))
    install_plain(repo)
    script(fake_llm, ("READY", "READY", "READY"))
    git(repo, "add", DOC)
    landed = commit(repo)
    assert landed.returncode == 0, landed.out
    assert len(runs.read_text()) == 6  # each persona: the default, then its one retry
    assert len(via_llm(fake_llm)) == 3
    assert {s["model"] for s in stamps(repo).values()} == {"reviewer"}
    assert "after 1 retry (command broken (" in landed.out
    assert "exited 1: Error: not logged in (run: claude login))" in landed.out


@pytest.mark.usefixtures("llm_models")
def test_discuss_runs_a_council_through_llm(command_repo, fake_llm, cli):
    repo = command_repo
    declare(repo, REVIEWER + "default: reviewer\n")
    council = Council(fake_llm)
    code, out, err = cli("discuss", "Should we rewrite the billing service?", "--protocol",
                         "council", "--participants", "architect,security", "--rounds", "1",
                         "--auto")
    assert code == 0, out + err
    assert len(via_llm(fake_llm)) == len(fake_llm.chat_requests) == len(council.seen) >= 3
    ledger = next((repo / "discussions").glob("*.discussion.md"))
    assert {s["model"] for s in stamps(repo, str(ledger.relative_to(repo))).values()} == {
        "reviewer"}
    assert "note: tokens unknown for reviewer (a command: no token counts, no cost)" in out
    table = [line.split() for line in out.split("persona ", 1)[1].splitlines()
             if line.startswith("round 1, ")]  # the closing table's rows
    assert len(table) == 3 and all(row[-2:] == ["?", "?"] for row in table), out  # tokens, cost


def failure_reasons(repo: Path) -> dict[str, str]:
    d = Discussion.load(repo / LEDGER, root=repo)
    return {f.author: f.reason for f in d.state.failures}


def test_a_failing_command_is_recorded_as_each_persona_s_failure(command_repo, fake_llm,
                                                                 monkeypatch, tmp_path):
    repo = command_repo
    monkeypatch.setenv("CASCADE_RETRIES", "1")
    monkeypatch.setenv("CASCADE_BACKOFF", "0.01")
    runs = tmp_path / "runs"
    flaky = pyscript(tmp_path, "flaky", f"""\
import sys
open({str(runs)!r}, "a").write("x")
sys.stderr.write("Error: rate limited by the upstream service\\n")
sys.exit(1)
""")
    declare(repo, f"providers:\n  - name: flaky\n    command: {flaky}\ndefault: flaky\n")
    install_plain(repo)
    git(repo, "add", DOC)
    blocked = commit(repo)
    assert blocked.returncode == 1
    assert len(runs.read_text()) == 6  # each persona asked, then retried once
    shown = " ".join(flaky.split())[:57] + "..."
    cause = f"command flaky ({shown}) exited 1: Error: rate limited by the upstream service"
    for name in PANEL:  # one line each: the persona, the cause, the retry
        assert re.search(rf"^{name}: failed: {re.escape(cause)} \([0-9.]+s, after 1 retry "
                         rf"\({re.escape(cause)}\)\)$", blocked.out, re.MULTILINE), blocked.out
    assert failure_reasons(repo) == {name: cause for name in PANEL}
    assert "Traceback" not in blocked.out


def test_garbage_is_asked_for_again_then_recorded_as_a_failure(command_repo, fake_llm,
                                                               tmp_path):
    repo = command_repo
    asked = tmp_path / "asked"
    asked.mkdir()
    chatty = pyscript(tmp_path, "chatty", f"""\
import sys, uuid
open({str(asked)!r} + "/" + uuid.uuid4().hex, "w").write(sys.stdin.read())
print("I think this looks fine overall.")
""")
    declare(repo, f"providers:\n  - name: chatty\n    command: {chatty}\ndefault: chatty\n")
    install_plain(repo)
    git(repo, "add", DOC)
    blocked = commit(repo)
    assert blocked.returncode == 1
    prompts = [p.read_text() for p in asked.iterdir()]
    again = [p for p in prompts if EARLIER_REPLY in p]
    assert len(prompts) == 6 and len(again) == 3  # each persona: asked, then re-asked once
    for text in again:
        assert f"{EARLIER_REPLY}\nI think this looks fine overall.\n" in text
        assert "Your reply was not a valid JSON object of the required form" in text
    reasons = failure_reasons(repo)
    assert set(reasons) == set(PANEL)
    assert all(r.startswith("unparseable reply twice") for r in reasons.values()), reasons


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
def test_a_hanging_command_is_killed_at_the_timeout_and_recorded(command_repo, fake_llm,
                                                                 monkeypatch, tmp_path):
    repo = command_repo
    monkeypatch.setenv("CASCADE_TIMEOUT", "1")
    pids = tmp_path / "pids"
    stuck = pyscript(tmp_path, "stuck", f"""\
import os, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
open({str(pids)!r}, "a").write(f"{{os.getpid()}} {{child.pid}} ")
time.sleep(120)
""")
    declare(repo, f"providers:\n  - name: stuck\n    command: {stuck}\ndefault: stuck\n")
    install_plain(repo)
    git(repo, "add", DOC)
    started = time.monotonic()
    blocked = commit(repo)
    assert blocked.returncode == 1 and time.monotonic() - started < 30
    assert all(r.endswith("timed out after 1s") for r in failure_reasons(repo).values())
    started_pids = [int(p) for p in pids.read_text().split()]
    assert len(started_pids) == 6 and _wait_gone(started_pids), [
        p for p in started_pids if not _gone(p)]


def test_a_command_not_installed_fails_each_persona_in_one_line(command_repo, fake_llm):
    repo = command_repo
    declare(repo, "providers:\n  - name: ghost\n    command: claude-not-installed-here -p\n"
                  "default: ghost\n")
    install_plain(repo)
    git(repo, "add", DOC)
    blocked = commit(repo)
    assert blocked.returncode == 1
    cause = "command not found: claude-not-installed-here (provider ghost)"
    for name in PANEL:  # one line each, naming the persona and the cause; not retried
        assert f"{name}: failed: {cause} (0." in blocked.out
    assert failure_reasons(repo) == {name: cause for name in PANEL}


@pytest.mark.parametrize("where", ["stderr", "stdout"])
def test_a_secret_a_command_echoes_reaches_no_output_ledger_or_cache(command_repo, fake_llm,
                                                                     monkeypatch, tmp_path,
                                                                     where):
    """The command has the user's environment, secrets included: what it writes of them
    (on stderr, in a failure; on stdout, in its reply) is scrubbed before it is shown,
    written or cached."""
    repo = command_repo
    monkeypatch.setenv("CASCADE_API_KEY", KEY)
    monkeypatch.setenv("MY_SERVICE_TOKEN", TOKEN)
    leaky = pyscript(tmp_path, "leaky", """\
import json, os, sys
said = f"key {os.environ['CASCADE_API_KEY']} token {os.environ['MY_SERVICE_TOKEN']}"
if sys.argv[1] == "stderr":
    sys.stderr.write(f"Error: refused: {said}\\n")
    sys.exit(1)
print(json.dumps({"comment": f"I was given {said}.", "vote": "READY"}))
""") + f" {where}"
    declare(repo, f"providers:\n  - name: leaky\n    command: {leaky}\ndefault: leaky\n")
    install_plain(repo)
    git(repo, "add", DOC)
    done = commit(repo)
    assert done.returncode == (1 if where == "stderr" else 0), done.out
    ledger = (repo / LEDGER).read_text()
    assert f"key {SHOWN} token {SHOWN}" in (done.out if where == "stderr" else ledger)
    written = [done.out, ledger]
    written += [p.read_text(errors="replace") for p in Path(repo / ".git").rglob("*")
                if p.is_file() and "cascade" in p.parts]
    for text in written:
        assert KEY not in text and TOKEN not in text
