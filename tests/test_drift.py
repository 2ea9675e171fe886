"""Decision drift on real histories: `cascade drift` lists the commits since an accepted
decision's acceptance that changed the paths it governs, and `cascade check` warns of them
when a rule asks (`drift: warn`). Real git repositories, real commits, the real command."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import inproc
from conftest import REPO, git
from scripted import Scripted
from test_check import RULES, commit, review, write

from cascade import Discussion
from cascade.ledger.records import OUTCOME

PG = "docs/adr/0001-use-postgres.md"
PG_LEDGER = "docs/adr/discussions/0001-use-postgres.discussion.md"
UI = "docs/adr/0002-server-rendered-ui.md"
UI_LEDGER = "docs/adr/discussions/0002-server-rendered-ui.discussion.md"


def adr(title: str, status: str, governs: str | None = None) -> str:
    front = f"governs: [{governs}]\n" if governs else ""
    return f"---\nstatus: {status}\n{front}---\n\n# {title}\n\nWe will do it.\n"


def short(repo: Path, commit_id: str) -> str:
    return git(repo, "rev-parse", "--short", commit_id).strip()


def drift(repo: Path, *args: str):
    return inproc.cascade(repo, "drift", *args)


@pytest.fixture
def history(repo: Path) -> dict[str, str]:
    """Rules; an ADR governing src/db/** proposed, code changed, then accepted, then commits
    on governed and ungoverned paths; a second ADR, superseded, governing src/ui/**."""
    ids = {}
    write(repo, ".ai-rules.yml", RULES)
    write(repo, "src/db/pool.py", "size = 5\n")
    write(repo, "src/ui/page.py", "title = 'x'\n")
    ids["start"] = commit(repo, "start")
    write(repo, PG, adr("Use Postgres", "proposed", '"src/db/**"'))
    review(repo, doc=PG, ledger=PG_LEDGER)
    write(repo, UI, adr("Server-rendered UI", "accepted", "src/ui/**"))
    review(repo, doc=UI, ledger=UI_LEDGER)
    ids["proposed"] = commit(repo, "propose 0001, accept 0002")
    write(repo, "src/db/pool.py", "size = 10\n")
    ids["before"] = commit(repo, "tune the pool before the decision")
    write(repo, PG, adr("Use Postgres", "accepted", '"src/db/**"'))
    review(repo, doc=PG, ledger=PG_LEDGER)  # the hook's review of the new revision
    ids["accepted"] = commit(repo, "accept 0001")
    write(repo, "src/db/pool.py", "size = 50\n")
    ids["drift1"] = commit(repo, "grow the pool")
    write(repo, "src/ui/page.py", "title = 'y'\n")
    ids["ui"] = commit(repo, "retitle the page")
    write(repo, "src/db/sqlite.py", "import sqlite3\n")
    write(repo, "README.md", "# Project\n")
    ids["drift2"] = commit(repo, "add a sqlite fallback")
    write(repo, UI, adr("Server-rendered UI", "superseded by [ADR-0003](0003-spa.md)",
                        "src/ui/**"))
    review(repo, doc=UI, ledger=UI_LEDGER)
    ids["superseded"] = commit(repo, "supersede 0002")
    write(repo, "src/ui/app.js", "render()\n")
    ids["ui2"] = commit(repo, "client rendering")
    return ids


def test_drift_lists_the_governed_commits_since_acceptance(repo, history):
    run = drift(repo)
    assert run.returncode == 1, run.stderr
    assert run.stderr == ""
    out = run.stdout
    assert f"{PG}: accepted at {short(repo, history['accepted'])}" in out
    rows = [line.split()[0] for line in out.splitlines() if line.startswith("  ")]
    assert rows[0] == "commit"  # the columns' titles
    listed = rows[1:]
    assert listed == [short(repo, history["drift2"]), short(repo, history["drift1"])]
    assert "add a sqlite fallback" in out and "src/db/sqlite.py" in out
    assert "grow the pool" in out and "Test Person" in out
    assert "README.md" not in out  # the same commit's ungoverned path is not listed
    for quiet in ("before", "ui", "ui2", "accepted"):  # before acceptance, ungoverned, ...
        assert short(repo, history[quiet]) not in listed
    assert UI not in out  # superseded: skipped
    assert out.rstrip().endswith("cascade drift: 1 of 1 accepted decision(s) drifted "
                                 "(2 commit(s))")


def test_drift_json_names_every_accepted_decision(repo, history):
    run = drift(repo, "--json")
    assert run.returncode == 1, run.stderr
    data = json.loads(run.stdout)
    assert [d["document"] for d in data["decisions"]] == [PG]
    pg = data["decisions"][0]
    assert pg["accepted"] == history["accepted"] and pg["governs"] == ["src/db/**"]
    assert [c["commit"] for c in pg["commits"]] == [history["drift2"], history["drift1"]]
    assert pg["commits"][0]["paths"] == ["src/db/sqlite.py"]


def test_nothing_drifted_is_silent_and_exits_0(repo, history):
    git(repo, "checkout", "-q", history["accepted"])
    run = drift(repo)
    assert (run.returncode, run.stdout, run.stderr) == (0, "", "")
    git(repo, "checkout", "-q", history["ui"])  # a drift, at that commit
    assert drift(repo).returncode == 1
    assert drift(repo, "--ref", history["accepted"]).returncode == 0


def test_paths_narrow_the_decisions(repo, history):
    write(repo, "other/docs/adr/0001-x.md", adr("X", "accepted", "src/**"))
    assert drift(repo, "docs/adr/0002-server-rendered-ui.md").returncode == 0
    run = drift(repo, "docs")
    assert run.returncode == 1 and PG in run.stdout
    outside = drift(repo, "/")
    assert outside.returncode == 2 and "outside the repository" in outside.stderr


def test_accepted_again_counts_from_the_last_acceptance(repo, history):
    write(repo, PG, adr("Use Postgres", "proposed", '"src/db/**"'))
    commit(repo, "reopen 0001")
    write(repo, "src/db/pool.py", "size = 60\n")
    reopened = commit(repo, "pool while reopened")
    write(repo, PG, adr("Use Postgres", "Accepted", '"src/db/**"'))
    again = commit(repo, "accept 0001 again")
    write(repo, "src/db/pool.py", "size = 70\n")
    later = commit(repo, "pool after")
    out = drift(repo).stdout
    assert f"accepted at {short(repo, again)}" in out
    assert short(repo, later) in out and short(repo, reopened) not in out
    assert short(repo, history["drift1"]) not in out


def test_a_document_without_status_is_accepted_by_its_ledgers_outcome(repo):
    write(repo, ".ai-rules.yml", RULES)
    doc = "docs/adr/0003-queue.md"
    ledger = "docs/adr/discussions/0003-queue.discussion.md"
    write(repo, doc, "# Queue\n\n* Governs: `src/queue/**`, tools/q.sh\n\nWe use a queue.\n")
    write(repo, "src/queue/q.py", "q = []\n")
    review(repo, votes=("READY", "CHANGES", "CHANGES"), doc=doc, ledger=ledger)
    commit(repo, "start")
    write(repo, "src/queue/q.py", "q = [1]\n")
    early = commit(repo, "queue work during review")
    review(repo, doc=doc, ledger=ledger)
    commit(repo, "the panel agrees")
    d = Discussion.load(repo / ledger, root=repo)
    d.add_event(OUTCOME, "READY")
    d.save()
    accepted = commit(repo, "record the outcome")
    write(repo, "tools/q.sh", "echo q\n")
    late = commit(repo, "a queue tool")
    out = drift(repo).stdout
    assert f"{doc}: accepted at {short(repo, accepted)}" in out
    assert short(repo, late) in out and "tools/q.sh" in out
    assert short(repo, early) not in out


def test_the_rule_may_name_what_its_decisions_govern(repo):
    write(repo, "svc/.ai-rules.yml", RULES + '    governs: ["api/**"]\n')
    write(repo, "svc/docs/adr/0001-rest.md", "# REST\n\n## Status\n\nAccepted\n")
    write(repo, "svc/api/routes.py", "routes = []\n")
    write(repo, "api/elsewhere.py", "x = 1\n")
    commit(repo, "start")
    write(repo, "svc/api/routes.py", "routes = ['/a']\n")
    write(repo, "api/elsewhere.py", "x = 2\n")  # outside the rule's folder: not governed
    moved = commit(repo, "a route")
    run = drift(repo)
    assert run.returncode == 1
    assert "svc/api/routes.py" in run.stdout and short(repo, moved) in run.stdout
    assert "api/elsewhere.py" not in run.stdout.replace("svc/api", "")


def test_the_rules_own_word_for_accepted_counts(repo):
    write(repo, ".ai-rules.yml", RULES + "    status: {ready: Approved}\n")
    write(repo, PG, adr("Use Postgres", "Approved", "src/db/**"))
    write(repo, UI, adr("Server-rendered UI", "Draft", "src/**"))
    commit(repo, "start")
    write(repo, "src/db/pool.py", "size = 1\n")
    moved = commit(repo, "pool")
    run = drift(repo)
    assert run.returncode == 1 and short(repo, moved) in run.stdout
    assert PG in run.stdout and UI not in run.stdout


@pytest.mark.parametrize(("where", "text", "line", "says"), [
    (".ai-rules.yml", RULES + "    governs: {a: b}\n", 6, "rule 'governs' must be"),
    (".ai-rules.yml", RULES + "    governs: ../outside/**\n", 6, "must stay inside"),
    (".ai-rules.yml", RULES + "    drift: loud\n", 6, "rule 'drift' must be warn or off"),
    (PG, "---\nstatus: accepted\ngoverns: {src: db}\n---\n# T\n", 3, "governs must be"),
    (PG, "# T\n\n* Status: accepted\n* Governs: /etc/**\n", 4, "must stay inside"),
])
def test_a_bad_governs_is_one_line_at_its_file_and_line(repo, where, text, line, says):
    write(repo, ".ai-rules.yml", RULES)
    write(repo, where, text)
    commit(repo, "start")
    run = drift(repo)
    assert run.returncode == 2
    assert run.stderr.startswith(f"cascade: {where}:{line}: ") and says in run.stderr
    assert len(run.stderr.splitlines()) == 1


def check(repo: Path):
    return inproc.cascade(repo, "check")


def test_check_warns_of_drift_only_when_the_rule_asks(repo, history):
    plain = check(repo)
    assert plain.returncode == 0, plain.stdout
    assert "drift" not in plain.stdout
    write(repo, ".ai-rules.yml", RULES + "    drift: warn\n")
    commit(repo, "warn of drift")
    warned = check(repo)
    assert warned.returncode == 0, warned.stdout  # a warning: the check still passes
    lines = [line for line in warned.stdout.splitlines() if "decision drift" in line]
    assert len(lines) == 1
    assert lines[0].startswith(f"{PG}:3: warning: decision drift: 2 commit(s) since it was "
                               f"accepted at {short(repo, history['accepted'])}")
    assert "grow the pool" in lines[0] and UI not in lines[0]
    github = inproc.cascade(repo, "check", "--format", "github")
    assert github.returncode == 0
    assert f"::warning file={PG},line=3," in github.stdout  # an annotation on the decision


def test_check_with_the_rule_key_stays_silent_when_nothing_drifted(repo, history):
    git(repo, "checkout", "-q", "-b", "quiet", history["accepted"])
    write(repo, ".ai-rules.yml", RULES + "    drift: warn\n")
    write(repo, "src/web/page.py", "title = 'z'\n")  # no accepted decision governs it
    commit(repo, "warn of drift")
    run = check(repo)
    assert run.returncode == 0 and "warning" not in run.stdout, run.stdout


# ---- the hook asks one persona whether a staged change contradicts the decision ------------

class DriftScript(Scripted):
    """Answers the drift review: the change contradicts the decision; any other step is
    unscripted."""

    def reply(self, name, step, round_, text):
        if step != "Drift review":
            return super().reply(name, step, round_, text)
        return json.dumps({"comment": "The pool grows to 500 connections: the decision caps "
                                      "it at 50.", "drift": "CONTRADICTS"})


def drift_repo(repo: Path, monkeypatch, fake_llm, review_key: bool) -> str:
    """An accepted decision governing src/db/**, reviewed and committed, plain hooks on."""
    monkeypatch.setenv("CASCADE_MODEL", "openai/fake")
    monkeypatch.setenv("CASCADE_API_BASE", fake_llm.url)
    monkeypatch.setenv("CASCADE_BACKOFF", "0.05")
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    write(repo, ".ai-rules.yml", RULES + ("    drift_review: architect\n" if review_key else ""))
    write(repo, "src/db/pool.py", "size = 5\n")
    write(repo, "src/ui/page.py", "title = 'x'\n")
    write(repo, PG, adr("Use Postgres", "accepted", '"src/db/**"')
          + "\nThe pool holds at most 50 connections.\n")
    review(repo, doc=PG, ledger=PG_LEDGER)
    start = commit(repo, "accept 0001")
    proc = inproc.cascade(repo, "init", "--plain")
    assert proc.returncode == 0, proc.stderr
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "hooks", "--no-verify")
    return start


def git_commit(repo: Path, message: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(["git", "commit", "-m", message], cwd=repo, capture_output=True,
                          text=True, timeout=300, check=False)
    proc.out = proc.stdout + proc.stderr  # type: ignore[attr-defined]
    return proc


def test_the_hook_asks_a_persona_about_a_change_to_governed_code(repo, fake_llm, monkeypatch):
    script = DriftScript(fake_llm)
    start = drift_repo(repo, monkeypatch, fake_llm, review_key=True)
    before = (repo / PG_LEDGER).read_text()
    write(repo, "src/ui/page.py", "title = 'y'\n")  # ungoverned: nobody is asked
    git(repo, "add", "-A")
    quiet = git_commit(repo, "retitle")
    assert quiet.returncode == 0, quiet.out
    assert script.seen == [] and "drift" not in quiet.out.lower()
    write(repo, "src/db/pool.py", "size = 500\n")
    git(repo, "add", "-A")
    hook = inproc.cascade(repo, "hook")  # by hand first: the answer, once
    assert hook.returncode == 0 and "CONTRADICTS (advisory)" in hook.stdout, hook.stdout
    assert f"recorded in {PG_LEDGER}: git add {PG_LEDGER}" in hook.stdout  # outside a commit
    git(repo, "add", PG_LEDGER)
    proc = git_commit(repo, "grow the pool")
    assert proc.returncode == 0, proc.out  # advisory: the commit goes on
    assert "its drift review for this commit is in" in proc.out
    assert script.asked() == [("AI-Architect", "Drift review", 1)]
    prompt = script.seen[0][3]
    assert "+size = 500" in prompt and "at most 50 connections" in prompt
    assert (f"{PG}: AI-Architect: CONTRADICTS (advisory): The pool grows to 500 connections"
            in hook.stdout)
    committed = git(repo, "show", f"HEAD:{PG_LEDGER}")
    assert committed.startswith(before)  # appended, and committed with the change
    block = committed[len(before):]
    assert block.count("step=drift") == 1
    assert "The pool grows to 500 connections" in block
    assert "drift=CONTRADICTS" in block and "step=drift" in block and "VOTE:" not in block
    write(repo, "src/db/pool.py", "size = 600\n")  # inside the commit: asked and staged
    git(repo, "add", "-A")
    again = git_commit(repo, "grow the pool more")
    assert again.returncode == 0, again.out
    assert len(script.asked()) == 2 and "+size = 600" in script.seen[1][3]
    assert f"recorded in {PG_LEDGER} (staged)" in again.out
    assert git(repo, "show", f"HEAD:{PG_LEDGER}").count("step=drift") == 2
    assert git(repo, "status", "--porcelain") == ""
    check = inproc.cascade(repo, "check", "--from-ref", start)
    assert check.returncode == 0, check.stdout  # the decision's own verdict holds
    status = inproc.cascade(repo, "status", PG_LEDGER)
    assert status.returncode == 0, status.stderr
    review_line = next(line for line in status.stdout.splitlines() if "AI-Architect:" in line)
    assert "READY - AI-Architect: looks fine." in review_line, status.stdout  # its review
    drift_lines = [line.strip() for line in status.stdout.splitlines() if "Drift review" in line]
    stamp = max(n for n, line in enumerate(committed_lines(repo), 1) if "step=drift" in line)
    assert drift_lines == [f"Drift review by AI-Architect (line {stamp - 1}, advisory): "
                           "CONTRADICTS - The pool grows to 500 connections: the decision caps "
                           "it at 50."], status.stdout  # its latest, apart from the review
    [data] = json.loads(inproc.cascade(repo, "status", "--json", PG_LEDGER).stdout)[
        "discussions"]
    assert [(r["author"], r["answer"]) for r in data["drift_reviews"]] == [
        ("AI-Architect", "CONTRADICTS")] * 2


def committed_lines(repo: Path) -> list[str]:
    return git(repo, "show", f"HEAD:{PG_LEDGER}").splitlines()


def test_without_the_rule_key_the_hook_asks_nobody(repo, fake_llm, monkeypatch):
    script = DriftScript(fake_llm)
    drift_repo(repo, monkeypatch, fake_llm, review_key=False)
    write(repo, "src/db/pool.py", "size = 500\n")
    git(repo, "add", "-A")
    proc = inproc.commit(repo)  # the hook in process (the test above commits through git)
    assert proc.returncode == 0, proc.out
    assert script.seen == [] and fake_llm.calls() == 0
    assert git(repo, "status", "--porcelain") == ""
