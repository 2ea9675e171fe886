"""`cascade personas add/remove` (seed 002's participant management), `status --verbose`,
and `from cascade import Runner` -- against real repositories and, for the turns, the fake
endpoint over HTTP."""
from __future__ import annotations

import json
import os
import pty
import subprocess
import sys

import pytest
from conftest import REPO, git

from cascade import Discussion

DBA = """\
# our database reviewer
name: AI-DBA
role: Database Specialist
personality: |
  You are AI-DBA. You look at data models, migrations and query patterns.
expertise: [Postgres, migrations]
concerns: ["What does the migration lock?"]
type: voting
"""


@pytest.fixture
def env(repo, fake_llm, monkeypatch):
    git(repo, "config", "user.name", "Rob")
    monkeypatch.setenv("CASCADE_MODEL", "openai/fake")
    monkeypatch.setenv("CASCADE_API_BASE", fake_llm.url)
    monkeypatch.setenv("CASCADE_BACKOFF", "0.05")
    return repo


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_add_from_a_file_then_the_persona_takes_a_turn(env, cli, fake_llm):
    (env / "dba.yml").write_text(DBA)
    code, out, err = cli("personas", "add", "dba", "--from-file", "dba.yml")
    assert code == 0, err
    assert "Added persona @dba: .cascade/personas/dba.yml (new)" in out
    written = (env / ".cascade/personas/dba.yml").read_text()
    assert written == "alias: dba\n" + DBA  # as written, with the alias it lacked
    assert "AI-DBA (@dba) - Database Specialist" in cli("personas", "show", "dba")[1]
    assert cli("new", "Split the orders table", "--template", "feature")[0] == 0
    fake_llm.script("YOUR ROLE: AI-DBA", json.dumps({"comment": "Lock-free migration.",
                                                      "vote": "READY"}))
    code, out, err = cli("turn", "discussions/split-the-orders-table.discussion.md", "@dba")
    assert code == 0, out + err
    d = Discussion.load(env / "discussions/split-the-orders-table.discussion.md")
    assert [(c.author, c.body) for c in d.comments] == [("AI-DBA", "Lock-free migration.")]


@pytest.mark.parametrize("text, name, message", [
    ("name: AI-X\nrole: r\npersonality: p\ntype: sometimes\n", "x",
     "persona type must be voting or background, not 'sometimes'"),
    ("name: AI-X\nalias: y\nrole: r\npersonality: p\ntype: voting\n", "x",
     "its alias is 'y', not 'x'"),
    ("name: [\n", "x", "invalid YAML"),
    ("name: AI-Architect\nrole: r\npersonality: p\ntype: voting\n", "x",
     "its name 'AI-Architect' reads like @architect's"),
    ("name: AI-X\nrole: r\npersonality: p\ntype: voting\n", "Bad Name",
     "must be lower-case letters"),
])
def test_a_bad_persona_is_refused_in_one_line_and_nothing_is_written(env, cli, text, name,
                                                                     message):
    (env / "p.yml").write_text(text)
    code, out, err = cli("personas", "add", name, "--from-file", "p.yml")
    assert code == 2 and message in one_line(err)
    assert not (env / ".cascade/personas").exists() or not any(
        (env / ".cascade/personas").iterdir())


def test_an_existing_persona_needs_force_and_a_bundled_one_is_replaced_not_removed(env, cli):
    (env / "dba.yml").write_text(DBA)
    assert cli("personas", "add", "dba", "--from-file", "dba.yml")[0] == 0
    code, _, err = cli("personas", "add", "dba", "--from-file", "dba.yml")
    assert code == 2 and "give --force to replace it" in one_line(err)
    assert cli("personas", "add", "dba", "--from-file", "dba.yml", "--force")[0] == 0
    (env / "sec.yml").write_text(DBA.replace("AI-DBA", "AI-Security-Team"))
    code, out, _ = cli("personas", "add", "security", "--from-file", "sec.yml")
    assert code == 0 and "replaces the bundled persona 'security'" in out
    assert cli("personas", "remove", "security")[0] == 0  # its repository file
    code, _, err = cli("personas", "remove", "security")  # the bundled one stays
    assert code == 2 and "'security' is a bundled persona: it cannot be removed" in one_line(err)
    code, _, err = cli("personas", "remove", "nobody")
    assert code == 2 and "no repository persona 'nobody' (the repository's own: dba)" in \
        one_line(err)


def test_a_persona_a_rule_names_is_not_removed(env, cli):
    (env / "dba.yml").write_text(DBA)
    assert cli("personas", "add", "dba", "--from-file", "dba.yml")[0] == 0
    (env / ".ai-rules.yml").write_text("rules:\n  - name: adr\n    match: 'docs/adr/*.md'\n"
                                       "    participants: [architect, dba]\n")
    code, _, err = cli("personas", "remove", "dba")
    assert code == 2
    assert one_line(err).startswith("cascade: .ai-rules.yml:4: rule 'adr' names 'dba'")
    assert (env / ".cascade/personas/dba.yml").is_file()


def test_interactive_add_on_a_terminal_and_refused_without_one(env, cli):
    code, _, err = cli("personas", "add", "dba", "--interactive")
    assert code == 2 and "--interactive needs a terminal" in one_line(err)
    answers = ["AI-DBA", "Database Specialist", "You are AI-DBA.", "You review migrations.",
               "", "Postgres, migrations", "What does it lock?; How long?", "y"]
    pid, fd = pty.fork()
    if pid == 0:  # the child: cascade on a pseudo-terminal
        os.chdir(env)
        os.environ["PYTHONPATH"] = str(REPO)
        os.execv(sys.executable, [sys.executable, "-m", "cascade", "personas", "add", "dba",
                                  "--interactive"])
    for answer in answers:
        os.write(fd, (answer + "\n").encode())
    output = b""
    while True:
        try:
            chunk = os.read(fd, 1024)
        except OSError:
            break
        if not chunk:
            break
        output += chunk
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, output.decode()
    out = cli("personas", "show", "dba")[1]
    assert "AI-DBA (@dba) - Database Specialist" in out and "Type: voting" in out
    assert "  - What does it lock?" in out and "  - How long?" in out
    assert "You are AI-DBA.\n  You review migrations." in out


def test_status_verbose_shows_each_participant_s_latest_comment(env, cli):
    assert cli("new", "Split the orders table", "--template", "feature")[0] == 0
    ledger = "discussions/split-the-orders-table.discussion.md"
    text = "First line.\nSecond line.\nThird line.\nFourth line."
    assert cli("comment", ledger, text, "--author", "Alice")[0] == 0
    code, out, _ = cli("status", ledger, "--verbose")
    assert code == 0
    assert "  Alice: no vote (line " in out
    assert "    First line.\n    Second line.\n    Third line.\n    ...\n" in out
    assert "Fourth line." not in out
    short = cli("status", ledger)[1]
    assert "Second line." not in short
    data = json.loads(cli("status", ledger, "--json", "--verbose")[1])
    assert data["discussions"][0]["latest"] == {"Alice": text}
    assert "latest" not in json.loads(cli("status", ledger, "--json")[1])["discussions"][0]


def test_runner_run_turn_with_a_callout_returns_and_appends_the_replies(env, cli, fake_llm):
    from cascade import Runner

    assert cli("new", "Split the orders table", "--template", "feature")[0] == 0
    path = env / "discussions/split-the-orders-table.discussion.md"
    fake_llm.script("YOUR ROLE: AI-Security", json.dumps({"comment": "Encrypt the new table.",
                                                          "vote": "CHANGES"}))
    fake_llm.script("YOUR ROLE: AI-Architect", json.dumps({"comment": "Fine.", "vote": None}))
    d = Discussion.load(path)
    replies = Runner().run_turn(d, participants=["architect", "@security"],
                                callout="Please review the updated proposal.")
    assert [(r.name, r.vote, r.comment, r.status) for r in replies] == [
        ("AI-Architect", None, "Fine.", "ok"), ("AI-Security", "CHANGES",
                                                "Encrypt the new table.", "ok")]
    for request in fake_llm.chat_requests:  # the callout reached each, as material
        text = request.text
        at = text.index("Please review the updated proposal.")
        assert text.rfind("<<<material", 0, at) > text.rfind("<<<end", 0, at)
        assert "A person asks this of you" in text
    # appended as each answered (concurrently); the Discussion given is current too
    assert sorted(c.author for c in Discussion.load(path).comments) == ["AI-Architect",
                                                                        "AI-Security"]
    assert sorted(c.author for c in d.comments) == ["AI-Architect", "AI-Security"]


def test_runner_reports_a_failure_and_refuses_bad_input(env, cli, fake_llm, monkeypatch):
    from fakellm import http_error

    from cascade import CascadeError, Runner

    monkeypatch.setenv("CASCADE_RETRIES", "0")
    assert cli("new", "Split the orders table", "--template", "feature")[0] == 0
    path = "discussions/split-the-orders-table.discussion.md"
    fake_llm.default(http_error(500))
    replies = Runner().run_turn(path, participants=["architect"])
    assert [(r.status, "HTTP 500" in r.error) for r in replies] == [("failed", True)]
    with pytest.raises(CascadeError, match="unknown persona 'nobody'"):
        Runner().run_turn(path, participants=["nobody"])


def test_runner_run_a_step_protocol_to_its_outcome(env, cli, fake_llm):
    sys.path.insert(0, str(REPO / "tests"))
    from council_script import Council

    from cascade import Runner

    fake_llm.default(Council(fake_llm))
    code, out, err = cli("new", "Rewrite billing", "--protocol", "council")
    assert code == 0, out + err
    path = env / "discussions/rewrite-billing.discussion.md"
    with pytest.raises(Exception, match="runs by its steps"):
        Runner().run_turn(path)
    result = Runner().run(path)
    assert result.outcome == "READY" and result.why.startswith("the referee's verdict")
    assert fake_llm.calls() == 4


def test_import_cascade_loads_no_model_library():
    code = ("import sys, cascade; cascade.Runner; "
            "print([m for m in ('litellm', 'jinja2', 'httpx', 'textual') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(REPO)}, check=True).stdout
    assert out.strip() == "[]"
