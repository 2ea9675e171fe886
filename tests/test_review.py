"""A committed revision can still be reviewed: a governed document committed with
``git commit --no-verify`` (the hook skipped) fails ``cascade check``, whose hint is a command
that works -- ``cascade review`` runs the hook's review of the committed revision and stages
the ledger, and ``git commit`` lands it through the hook. Real repositories, the plain hook
under a real `git commit`, the fake endpoint over HTTP; each hint is taken from what `check`
printed and run by the shell as printed, with `cascade` (this checkout) on PATH."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import git
from test_gate_holds import cascade, check
from test_hook import (  # noqa: F401  (loop_repo is a fixture)
    DOC,
    LEDGER,
    PANEL,
    install_plain,
    loop_repo,
    match,
    reply,
)


@pytest.fixture
def hooked(loop_repo, fake_llm, monkeypatch):
    """``loop_repo`` with the plain hook installed and `cascade` first on PATH."""
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent) + os.pathsep
                       + os.environ["PATH"])
    monkeypatch.setenv("CASCADE_PYTHON", sys.executable)  # the plain hook's interpreter
    install_plain(loop_repo)
    return loop_repo


def panel(fake, *votes: str) -> None:
    for name, vote in zip(PANEL, votes):
        fake.script(match(name), reply(f"{name}: review.", vote))


def sh(repo: Path, command: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(["bash", "-c", command], cwd=repo, capture_output=True, text=True,
                          timeout=300)
    proc.out = proc.stdout + proc.stderr
    return proc


def the_hint(out: str) -> str:
    """The command `check`'s problem line ends with."""
    found = set(re.findall(r": (cascade review .*)$", out, re.M))
    assert len(found) == 1, out
    return found.pop()


def test_a_document_committed_without_the_hook_is_reviewed_by_the_hinted_command(hooked,
                                                                                  fake_llm):
    repo = hooked
    git(repo, "add", DOC)
    git(repo, "commit", "-qm", "the ADR, hook skipped", "--no-verify")
    assert sh(repo, f"git add {DOC} && git commit -m again").returncode == 1  # nothing to commit
    failed = check(repo)
    assert failed.returncode == 1, failed.out
    assert f"{DOC}:1: governed by rule 'adr'" in failed.out
    hint = the_hint(failed.out)
    assert hint == f"cascade review {DOC} && git commit -m 'Review of {DOC}'"

    panel(fake_llm, "READY", "READY", "READY")
    done = sh(repo, hint)
    assert done.returncode == 0, done.out
    assert fake_llm.calls() == 3  # the panel reviewed the committed revision, once
    assert "cascade: the review is staged: commit it" in done.out
    assert git(repo, "status", "--porcelain").strip() == ""
    assert git(repo, "log", "-1", "--format=%s").strip() == f"Review of {DOC}"
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == [LEDGER]
    assert f"Cascade-Consensus: {LEDGER} READY" in git(repo, "log", "-1", "--format=%B")
    passed = check(repo)
    assert passed.returncode == 0, passed.out
    assert fake_llm.calls() == 3  # the hook in the hinted commit asked nobody again


def test_a_revision_committed_without_the_hook_is_reviewed_by_the_hinted_command(hooked,
                                                                                 fake_llm):
    repo = hooked
    panel(fake_llm, "READY", "READY", "READY")
    git(repo, "add", DOC)
    assert sh(repo, "git commit -m 'the ADR'").returncode == 0
    assert check(repo).returncode == 0
    (repo / DOC).write_text("# Use SQLite\n\nWe will store events in SQLite, with WAL.\n")
    git(repo, "commit", "-qam", "revised, hook skipped", "--no-verify")
    failed = check(repo)
    assert failed.returncode == 1, failed.out
    assert f"the ledger reviewed another revision of {DOC}" in failed.out
    hint = the_hint(failed.out)
    done = sh(repo, hint)
    assert done.returncode == 0, done.out
    assert fake_llm.calls() == 6  # the new revision reviewed
    passed = check(repo)
    assert passed.returncode == 0, passed.out


def test_review_without_consensus_blocks_and_says_what_to_do(hooked, fake_llm):
    repo = hooked
    git(repo, "add", DOC)
    git(repo, "commit", "-qm", "the ADR, hook skipped", "--no-verify")
    panel(fake_llm, "CHANGES", "CHANGES", "READY")
    done = sh(repo, the_hint(check(repo).out))
    assert done.returncode == 1, done.out  # the commit after && does not run
    assert "1 of 1 discussion(s) are not at consensus" in done.out
    assert "answer in the ledger" in done.out
    assert git(repo, "log", "-1", "--format=%s").strip() == "the ADR, hook skipped"
    assert git(repo, "diff", "--cached", "--name-only").split() == [LEDGER]  # staged to read
    assert check(repo).returncode == 1


def test_review_refuses_what_no_rule_governs_in_one_line(hooked):
    repo = hooked
    proc = cascade(repo, "review", "README.md")
    assert proc.returncode == 2, proc.out
    assert proc.stderr.count("\n") == 1 and "README.md" in proc.stderr
    assert "Traceback" not in proc.out
    (repo / "docs/adr/0002-draft.md").write_text("# Draft\n")
    proc = cascade(repo, "review", "docs/adr/0002-draft.md")
    assert proc.returncode == 2, proc.out
    assert "git add docs/adr/0002-draft.md" in proc.stderr and proc.stderr.count("\n") == 1
