"""The lifecycle closes (issue 10): at consensus the ledger records the outcome once, and where
the rule says so (`status:`) the document's own status moves -- Proposed to Accepted in
adr-tools' `## Status`, `status: accepted` in MADR's front matter -- recorded as keeping its
review, so the commit that follows asks no one. Real repositories, the real hook."""
from __future__ import annotations

import subprocess

import inproc
import pytest
from conftest import git
from inproc import commit
from test_hook import DOC, LEDGER, RULES, install_plain, loop_repo, run, script  # noqa: F401

from cascade import Discussion

# These tests follow the hook's hints step by step (git add by git add): staging off.
pytestmark = pytest.mark.usefixtures("hook_stages_nothing")

ADR = "# Use SQLite\n\n## Status\n\nProposed\n\n## Decision\n\nWe will store events in SQLite.\n"
MADR = ("---\nstatus: proposed\ndate: 2026-11-23\n---\n# Use SQLite\n\n## Decision Outcome\n\n"
        "We will store events in SQLite.\n")


def cascade(repo, *args: str) -> inproc.Ran:
    """``cascade ARGS`` in ``repo``, in this process (tests/inproc.py)."""
    return inproc.cascade(repo, *args)


def hint(out: str) -> str:
    """The next command the blocked commit printed: its status line's tail."""
    line = next(line for line in out.splitlines() if "blocked: " in line)
    return line.rsplit(": ", 1)[1].rsplit("then ", 1)[-1]


def outcomes(repo) -> list[str]:
    return [e.value for e in Discussion.load(repo / LEDGER, root=repo).events
            if e.kind == "OUTCOME"]


@pytest.fixture
def with_status(loop_repo):
    repo = loop_repo
    (repo / ".ai-rules.yml").write_text(RULES + "    status: true\n")
    git(repo, "commit", "-qam", "status moves at consensus")
    install_plain(repo)
    return repo


TABLE = ("# Use SQLite\n\n| | |\n|---|---|\n| Date | 2026-11-23 |\n| Status | Proposed |\n\n"
         "## Decision\n\nWe will store events in SQLite.\n")  # a metadata table (opendatahub)
MOVED = {ADR: ("\nProposed\n", "\nAccepted\n"), MADR: ("status: proposed\n", "status: accepted\n"),
         TABLE: ("| Status | Proposed |", "| Status | Accepted |")}


@pytest.mark.parametrize("text,expected", [(t, new) for t, (_, new) in MOVED.items()],
                         ids=["adr-tools", "madr", "table row"])
def test_consensus_records_the_outcome_and_moves_the_status(with_status, fake_llm, text,
                                                              expected):
    repo = with_status
    (repo / DOC).write_text(text)
    script(fake_llm, ("READY", "READY", "READY"))
    git(repo, "add", DOC)
    blocked = commit(repo)
    assert blocked.returncode == 1
    assert f"{DOC}: consensus READY: the outcome is recorded and {DOC}'s status is now" in (
        blocked.out)
    assert (repo / DOC).read_text() == text.replace(MOVED[text][0], expected)  # only that line
    assert outcomes(repo) == ["READY"]
    step = hint(blocked.out)
    assert step.endswith(f"git add {LEDGER} {DOC}")
    assert subprocess.run(["bash", "-c", step], cwd=repo).returncode == 0
    landed = commit(repo)
    assert landed.returncode == 0, landed.out
    assert fake_llm.calls() == 3
    assert expected in git(repo, "show", f"HEAD:{DOC}")
    assert git(repo, "status", "--porcelain").strip() == ""
    assert outcomes(repo) == ["READY"]
    assert cascade(repo, "check").returncode == 0
    again = cascade(repo, "advance", LEDGER)  # idempotent: already closed
    assert again.returncode == 0 and "Already closed with outcome READY" in again.stdout


def test_without_the_rule_setting_only_the_outcome_is_recorded(loop_repo, fake_llm):
    repo = loop_repo
    install_plain(repo)
    (repo / DOC).write_text(ADR)
    script(fake_llm, ("READY", "READY", "READY"))
    git(repo, "add", DOC)
    blocked = commit(repo)
    assert "consensus READY: the outcome is recorded" in blocked.out
    assert (repo / DOC).read_text() == ADR
    git(repo, "add", LEDGER)
    assert commit(repo).returncode == 0
    assert outcomes(repo) == ["READY"]


def test_unstaged_edits_are_never_touched(with_status, fake_llm):
    repo = with_status
    (repo / DOC).write_text(ADR)
    git(repo, "add", DOC)
    mine = ADR + "\nA paragraph I have not staged.\n"
    (repo / DOC).write_text(mine)
    script(fake_llm, ("READY", "READY", "READY"))
    blocked = commit(repo)
    assert "set its status to Accepted yourself: the file has unstaged edits" in blocked.out
    assert (repo / DOC).read_text() == mine
    assert outcomes(repo) == ["READY"]


def test_a_status_that_is_not_open_is_left_as_it_is(with_status, fake_llm):
    repo = with_status
    (repo / DOC).write_text(ADR.replace("Proposed", "Deprecated"))
    script(fake_llm, ("READY", "READY", "READY"))
    git(repo, "add", DOC)
    blocked = commit(repo)
    assert "its status says 'Deprecated': left as it is" in blocked.out
    assert "Deprecated" in (repo / DOC).read_text()


def test_decide_closes_at_once(with_status, fake_llm):
    repo = with_status
    (repo / DOC).write_text(ADR)
    script(fake_llm, ("CHANGES", "CHANGES", "READY"))
    git(repo, "add", DOC)
    assert commit(repo).returncode == 1
    git(repo, "add", LEDGER)
    decided = cascade(repo, "decide", DOC, "READY", "--reason", "we accept the risk")
    assert decided.returncode == 0, decided.stderr
    assert "consensus READY: the outcome is recorded" in decided.stdout
    assert f"Stage it and commit: git add {LEDGER} {DOC}" in decided.stdout
    assert "\nAccepted\n" in (repo / DOC).read_text()
    git(repo, "add", LEDGER, DOC)
    landed = commit(repo)  # no extra round
    assert landed.returncode == 0, landed.out
    assert fake_llm.calls() == 3
    assert cascade(repo, "check").returncode == 0


def test_a_vote_typed_by_hand_closes_at_the_next_commit(loop_repo, fake_llm):
    """A vote the commands did not write: the hook records the outcome, once."""
    repo = loop_repo
    (repo / ".ai-rules.yml").write_text(RULES.replace("human_required: false",
                                                      "human_required: true"))
    git(repo, "commit", "-qam", "a person must vote")
    install_plain(repo)
    (repo / DOC).write_text(ADR)
    script(fake_llm, ("READY", "READY", "READY"))
    git(repo, "add", DOC)
    assert commit(repo).returncode == 1
    assert outcomes(repo) == []  # the panel alone is not consensus here
    with open(repo / LEDGER, "a") as f:
        f.write("\n---\nName: Test Person\n\nVOTE: READY\n")  # a vote with no text asks nobody
    git(repo, "add", LEDGER)
    blocked = commit(repo)
    assert blocked.returncode == 1
    assert "consensus READY: the outcome is recorded: git add" in blocked.out
    assert outcomes(repo) == ["READY"]
    git(repo, "add", LEDGER)
    assert commit(repo).returncode == 0
    assert fake_llm.calls() == 3


def test_decide_after_a_blocked_commit_all_acts_on_the_revision_under_review(loop_repo,
                                                                             fake_llm):
    """`git commit -a` is blocked: the hook reviewed the edit from git's temporary index,
    which the blocked commit threw away, so the real index still holds HEAD's text. The
    decision is for the revision the ledger recorded (the edit in the working tree), and
    says to stage it."""
    repo = loop_repo
    install_plain(repo)
    git(repo, "add", DOC)
    git(repo, "commit", "-qm", "legacy", "--no-verify")
    (repo / DOC).write_text((repo / DOC).read_text() + "\nWith a nightly backup.\n")
    script(fake_llm, ("CHANGES", "CHANGES", "CHANGES"))
    blocked = commit(repo, "-a")
    assert blocked.returncode == 1, blocked.out
    edited = git(repo, "hash-object", DOC).strip()
    assert git(repo, "rev-parse", f":{DOC}").strip() != edited  # the index never got it
    decided = cascade(repo, "decide", DOC, "READY", "--reason", "backups settle it")
    assert decided.returncode == 0, decided.stderr
    assert decided.stderr == ""  # no "not recorded yet", no "does not override"
    assert f"(revision {edited[:7]})" in decided.stdout
    step = decided.stdout.strip().splitlines()[-1]
    assert step == f"Stage it and commit: git add {LEDGER} {DOC}"
    git(repo, "add", LEDGER, DOC)
    landed = commit(repo)
    assert landed.returncode == 0, landed.out
    assert fake_llm.calls() == 3
    assert cascade(repo, "check").returncode == 0


def test_decide_refuses_a_revision_nobody_has_seen(loop_repo, fake_llm):
    """Neither the index nor the working tree holds the revision the ledger recorded: the
    decision would be for text nobody reviewed. Refused, with the commands to run."""
    repo = loop_repo
    install_plain(repo)
    script(fake_llm, ("CHANGES", "CHANGES", "CHANGES"))
    git(repo, "add", DOC)
    assert commit(repo).returncode == 1
    (repo / DOC).write_text("# Use Postgres\n\nA different decision.\n")
    git(repo, "add", DOC)
    decided = cascade(repo, "decide", DOC, "READY", "--reason", "x")
    assert decided.returncode == 2
    assert decided.stderr.strip().endswith(
        f"the ledger reviewed another revision of {DOC} than the one staged: commit it "
        f"first (git commit), so the revision you decide on is recorded, then decide")


def test_decide_refuses_a_document_not_in_the_index(loop_repo, fake_llm):
    """A ledger started for a document nobody staged yet (``cascade discuss --source``, or
    by hand): a decision would name no revision a commit could hold. Refused, with the
    ``git add`` to run; nothing is appended."""
    repo = loop_repo
    d = Discussion.create("Use SQLite", "adr", path=repo / LEDGER, source=DOC, root=repo)
    d.save()
    before = (repo / LEDGER).read_bytes()
    decided = cascade(repo, "decide", DOC, "READY", "--reason", "we need it now")
    assert decided.returncode == 2
    assert decided.stderr.strip() == (
        f"cascade: {LEDGER}: {DOC} is not in the index: stage it (git add {DOC}) first, so the "
        "decision names the revision a commit will hold")
    assert (repo / LEDGER).read_bytes() == before
    assert fake_llm.calls() == 0


def test_decide_on_a_revision_in_the_working_tree_names_the_document_once(with_status,
                                                                          fake_llm):
    """The decided revision is only in the working tree and the decision moves its status:
    the document is both a file the command changed and one left for the person to stage,
    and the hint names it once."""
    repo = with_status
    (repo / DOC).write_text(ADR)
    git(repo, "add", DOC)
    git(repo, "commit", "-qm", "legacy", "--no-verify")
    (repo / DOC).write_text(ADR + "\nWith a nightly backup.\n")
    script(fake_llm, ("CHANGES", "CHANGES", "CHANGES"))
    assert commit(repo, "-a").returncode == 1
    decided = cascade(repo, "decide", DOC, "READY", "--reason", "backups settle it")
    assert decided.returncode == 0, decided.stderr
    assert "\nAccepted\n" in (repo / DOC).read_text()
    step = decided.stdout.strip().splitlines()[-1]
    assert step == f"Stage it and commit: git add {LEDGER} {DOC}"
