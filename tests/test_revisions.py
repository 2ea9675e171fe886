"""A document's revisions that need no new review (issue 10): a rename (`git mv`) keeps its
discussion, a status-line or whitespace edit records the revision without asking the panel,
and the text going back to what the panel reviewed says so and counts that review again.
Real repositories, the real hook, the fake endpoint; `cascade check` verifies each claim."""
from __future__ import annotations

import subprocess

import inproc
import pytest
from conftest import git
from inproc import commit
from test_hook import DOC, LEDGER, install_plain, loop_repo, run, script  # noqa: F401

from cascade import Discussion

# These tests follow the hook's hints step by step (git add by git add): staging off.
pytestmark = pytest.mark.usefixtures("hook_stages_nothing")

ADR = "# Use SQLite\n\n## Status\n\nProposed\n\n## Decision\n\nWe will store events in SQLite.\n"
NEW_DOC = "docs/adr/0001-use-sqlite-for-events.md"
NEW_LEDGER = "docs/adr/discussions/0001-use-sqlite-for-events.discussion.md"


def check(repo, *args: str) -> inproc.Ran:
    """``cascade check ARGS`` in ``repo``, in this process (tests/inproc.py)."""
    return inproc.cascade(repo, "check", *args)


def hint(out: str) -> str:
    """The command the blocked commit printed for the next step (its status line's tail)."""
    line = next(line for line in out.splitlines() if "blocked: " in line)
    return line.rsplit(": ", 1)[1]


@pytest.fixture
def accepted(loop_repo, fake_llm):
    """An ADR at consensus, committed with its ledger."""
    repo = loop_repo
    install_plain(repo)
    (repo / DOC).write_text(ADR)
    script(fake_llm, ("READY", "READY", "READY"))
    git(repo, "add", DOC)
    assert commit(repo).returncode == 1
    git(repo, "add", LEDGER)
    landed = commit(repo)
    assert landed.returncode == 0, landed.out
    assert fake_llm.calls() == 3
    return repo


def test_git_mv_keeps_the_discussion_and_asks_no_one(accepted, fake_llm):
    repo = accepted
    first_commit = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "mv", DOC, NEW_DOC)
    blocked = commit(repo)
    assert blocked.returncode == 1, blocked.out
    assert fake_llm.calls() == 3  # a pure rename asks no one
    assert f"renamed from {DOC}" in blocked.out
    step = hint(blocked.out)
    assert step == f"git mv {LEDGER} {NEW_LEDGER} && git add {NEW_LEDGER}"
    assert not (repo / NEW_LEDGER).exists()  # the hook never moves files: it says how

    assert subprocess.run(["bash", "-c", step], cwd=repo).returncode == 0
    landed = commit(repo)
    assert landed.returncode == 0, landed.out
    assert fake_llm.calls() == 3
    d = Discussion.load(repo / NEW_LEDGER, root=repo)
    assert d.source == NEW_DOC
    event = d.events[-1]
    assert (event.kind, event.fields["path"]) == ("SOURCE-REVISION", NEW_DOC)
    assert event.fields["same-as"] == event.value.split()[0]  # the very same text
    assert d.consensus_result.outcome == "READY"
    assert git(repo, "status", "--porcelain").strip() == ""
    assert check(repo).returncode == 0
    assert check(repo, "--from-ref", first_commit).returncode == 0, check(
        repo, "--from-ref", first_commit).stdout


def test_git_mv_with_an_edit_is_reviewed_in_the_discussion_it_had(accepted, fake_llm):
    repo = accepted
    git(repo, "mv", DOC, NEW_DOC)
    (repo / NEW_DOC).write_text(ADR.replace("SQLite.", "SQLite, with WAL mode."))
    git(repo, "add", NEW_DOC)
    script(fake_llm, ("READY", "READY", "CHANGES"), "again")
    blocked = commit(repo)
    assert blocked.returncode == 1
    assert fake_llm.calls() == 6  # a new text: the panel is asked, in the old ledger
    d = Discussion.load(repo / LEDGER, root=repo)
    assert sorted(c.body.strip().split("\n\n")[0] for c in d.comments[-3:]) == [  # its text
        f"{n}: again." for n in ("AI-Architect", "AI-Pragmatist", "AI-Security")]
    assert subprocess.run(["bash", "-c", hint(blocked.out)], cwd=repo).returncode == 0
    landed = commit(repo)
    assert landed.returncode == 0, landed.out  # 2 of 3 READY
    assert check(repo).returncode == 0


def test_moving_both_records_the_rename_once(accepted, fake_llm):
    repo = accepted
    git(repo, "mv", DOC, NEW_DOC)
    git(repo, "mv", LEDGER, NEW_LEDGER)
    blocked = commit(repo)
    assert blocked.returncode == 1
    assert "it was renamed: recorded the revision" in blocked.out
    assert fake_llm.calls() == 3
    git(repo, "add", NEW_LEDGER)
    assert commit(repo).returncode == 0
    assert check(repo).returncode == 0


@pytest.mark.parametrize("edit", [
    lambda t: t.replace("Proposed", "Accepted"),
    lambda t: t.replace("Proposed", "Superseded by [2. Use Postgres](0002-use-postgres.md)"),
    lambda t: t.replace("We will", "We  will").replace("SQLite.\n", "SQLite.   \r\n") + "\n\n",
], ids=["status", "superseded", "whitespace"])
def test_status_or_whitespace_edit_records_the_revision_without_asking(accepted, fake_llm, edit):
    repo = accepted
    (repo / DOC).write_text(edit(ADR))
    blocked = commit(repo, "-a")
    assert blocked.returncode == 1, blocked.out
    assert fake_llm.calls() == 3
    assert "only in its status or spacing: recorded the revision" in blocked.out
    step = hint(blocked.out)
    assert step == f"git add {LEDGER} && git commit -a"
    assert subprocess.run(["bash", "-c", step.replace("git commit -a", "true")],
                          cwd=repo).returncode == 0
    landed = commit(repo, "-a")
    assert landed.returncode == 0, landed.out
    assert git(repo, "status", "--porcelain").strip() == ""
    assert check(repo).returncode == 0


def test_a_real_change_still_asks(accepted, fake_llm):
    repo = accepted
    (repo / DOC).write_text(ADR.replace("Proposed", "Accepted").replace("SQLite.", "Postgres."))
    script(fake_llm, ("CHANGES", "READY", "READY"), "later")
    blocked = commit(repo, "-a")
    assert blocked.returncode == 1
    assert fake_llm.calls() == 6
    assert "recorded the revision" not in blocked.out


def test_back_to_the_reviewed_text_says_so_and_its_review_counts_again(accepted, fake_llm):
    repo = accepted
    (repo / DOC).write_text(ADR.replace("SQLite.", "SQLite and Redis."))
    script(fake_llm, ("REJECT", "CHANGES", "CHANGES"), "no redis")
    git(repo, "add", DOC)
    assert commit(repo).returncode == 1
    assert fake_llm.calls() == 6
    # The author gives the change up: the document goes back to HEAD's text; the ledger keeps
    # what was said about the change, and the commit carries just that.
    git(repo, "checkout", "HEAD", "--", DOC)
    git(repo, "add", LEDGER)
    blocked = commit(repo)
    assert blocked.returncode == 1
    assert f"{DOC}: it is back to a text the panel reviewed before" in blocked.out
    assert fake_llm.calls() == 6  # that text's review holds again: nobody is asked
    git(repo, "add", LEDGER)
    landed = commit(repo)
    assert landed.returncode == 0, landed.out
    assert check(repo).returncode == 0


def test_check_refuses_a_carried_review_the_text_does_not_match(accepted, fake_llm):
    """A hand-written `same-as=` claim for a changed text is caught, in the hook and in CI."""
    repo = accepted
    d = Discussion.load(repo / LEDGER, root=repo)
    (repo / DOC).write_text(ADR.replace("SQLite.", "Postgres."))
    blob = git(repo, "hash-object", DOC).strip()
    d.add_event("SOURCE-REVISION", blob, path=DOC, core=d.state.core,
                **{"same-as": d.source_revision})
    d.save()
    git(repo, "add", DOC, LEDGER)
    landed = run(repo, "git", "commit", "-qm", "sneak", "--no-verify")
    assert landed.returncode == 0
    report = check(repo)
    assert report.returncode == 1
    assert "changed-core" in check(repo, "--format", "json").stdout
    assert "but its core differs" in report.stdout
    # Through the hook, the text is reviewed anew: the panel is asked.
    (repo / DOC).write_text(ADR.replace("SQLite.", "Postgres!"))
    script(fake_llm, ("READY", "READY", "READY"), "fine")
    assert commit(repo, "-a").returncode == 1
    assert fake_llm.calls() == 6
