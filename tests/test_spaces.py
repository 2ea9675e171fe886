"""Paths with spaces, in every hint that names a command: a governed document and its ledger
under folders and names with spaces (in a repository whose own path has one), committed through
the real hooks against a real HTTP endpoint. Each hint is taken from what was printed, exactly,
and run with bash in the repository: it must do what it says."""
from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, git
from test_hook import PANEL, install_plain, install_pre_commit, match, reply

from cascade import Discussion

# These tests follow the hook's hints step by step (git add by git add): staging off.
pytestmark = pytest.mark.usefixtures("hook_stages_nothing")

DOC = "docs/my adr/0001 use x.md"
LEDGER = "docs/my adr/discussions/0001 use x.discussion.md"
SPEC = "docs/my specs/0001 use x.md"
RULES = """\
rules:
  - name: adr
    match: "docs/my adr/*.md"
    template: adr
    discussion: "docs/my adr/discussions/{stem}.discussion.md"
    participants: [architect, security, pragmatist]
    consensus: {threshold_ready: 0.67, threshold_reject: 0.01, human_required: false}
"""
ON_CONSENSUS = "    on_consensus: {template: feature-spec, path: 'docs/my specs/{stem}.md'}\n"


@pytest.fixture
def spaced(tmp_path, fake_llm, monkeypatch):
    """A repository at a path with a space, the rule above, the document written (not staged),
    `cascade` (this checkout) first on PATH, and an editor that writes a commit message."""
    repo = tmp_path / "my repo"
    repo.mkdir()
    git(repo, "init", "-q")
    monkeypatch.chdir(repo)
    monkeypatch.setenv("CASCADE_MODEL", "openai/fake")
    monkeypatch.setenv("CASCADE_API_BASE", fake_llm.url)
    monkeypatch.setenv("CASCADE_BACKOFF", "0.05")
    monkeypatch.setenv("CASCADE_PYTHON", sys.executable)  # the plain hooks' interpreter
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"])
    editor = tmp_path / "my editor.sh"  # `git commit -a` from a hint opens the editor
    editor.write_text('#!/bin/sh\n{ printf "Revise the ADR\\n\\n"; cat "$1"; } > "$1.new" '
                      '&& mv "$1.new" "$1"\n')
    editor.chmod(0o755)
    monkeypatch.setenv("GIT_EDITOR", shlex.quote(str(editor)))
    (repo / ".ai-rules.yml").write_text(RULES)
    (repo / "README.md").write_text("# Project\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "start")
    (repo / "docs/my adr").mkdir(parents=True)
    (repo / DOC).write_text("# Use X\n\nWe will use X.\n")
    return repo


def panel(fake, *votes: str | None, text: str = "review") -> None:
    for name, vote in zip(PANEL, votes):
        fake.script(match(name), reply(f"{name}: {text}.", vote))


def sh(repo: Path, command: str) -> subprocess.CompletedProcess[str]:
    """Run a printed command as a user pasting it into a shell would."""
    proc = subprocess.run(["bash", "-c", command], cwd=repo, capture_output=True, text=True,
                          timeout=300)
    proc.out = proc.stdout + proc.stderr  # git shows hook output on stderr
    return proc


def commit(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return sh(repo, shlex.join(["git", "commit", "-m", "change", *args]))


def hint(pattern: str, text: str) -> str:
    """The one command the output holds at ``pattern``'s group (it may be printed twice: on
    its problem's line and in the status table)."""
    found = set(re.findall(pattern, text, re.M))
    assert len(found) == 1, text
    return found.pop()


def changed(repo: Path) -> list[str]:
    return sorted(git(repo, "show", "-z", "--name-only", "--format=", "HEAD").strip("\0\n")
                  .split("\0"))


def accepted(repo: Path, fake) -> None:
    """The document and its ledger committed at consensus, through the hook."""
    panel(fake, "READY", "READY", "READY")
    git(repo, "add", DOC)
    first = commit(repo)
    assert first.returncode == 1, first.out
    assert sh(repo, hint(r"reply, then (git add .*)$", first.out)).returncode == 0
    second = commit(repo)
    assert second.returncode == 0, second.out
    assert changed(repo) == sorted([DOC, LEDGER])


@pytest.mark.parametrize("installer", [install_pre_commit, install_plain], ids=["pre-commit", "plain"])
def test_git_commit_hint_runs(spaced, fake_llm, installer):
    repo = spaced
    installer(repo)
    accepted(repo, fake_llm)
    assert git(repo, "status", "--porcelain").strip() == ""


@pytest.mark.parametrize("form", ["commit -a", "commit <path>"])
def test_commit_a_and_commit_path_hints_run(spaced, fake_llm, form):
    repo = spaced
    install_plain(repo)
    accepted(repo, fake_llm)
    (repo / DOC).write_text("# Use X\n\nWe will use X, revised.\n")
    panel(fake_llm, "READY", "READY", "READY", text="still fine")
    blocked = commit(repo, "-a") if form == "commit -a" else commit(repo, DOC)
    assert blocked.returncode == 1, blocked.out
    assert git(repo, "diff", "--cached", "--name-only").strip() == ""  # nothing was staged

    diff = hint(r"read them \((git diff .*?)\), reply", blocked.out)
    assert diff == f"git diff {shlex.quote(LEDGER)}"
    shown = sh(repo, diff)
    assert shown.returncode == 0 and "still fine." in shown.stdout, shown.out

    command = hint(r"reply, then (git add .*)$", blocked.out)
    expected = {"commit -a": f"git add {shlex.quote(LEDGER)} && git commit -a",
                "commit <path>": (f"git add {shlex.quote(LEDGER)} && git commit "
                                  f"{shlex.quote(DOC)} {shlex.quote(LEDGER)}")}[form]
    assert command == expected
    again = sh(repo, command)  # the editor writes the message; the hook runs again
    assert again.returncode == 0, again.out
    assert changed(repo) == sorted([DOC, LEDGER])
    assert git(repo, "status", "--porcelain").strip() == ""
    message = git(repo, "log", "-1", "--format=%B")
    assert message.startswith("Revise the ADR")
    assert f"Cascade-Consensus: {LEDGER} READY (3/3 READY)" in message


def test_decide_hints_run(spaced, fake_llm):
    repo = spaced
    install_plain(repo)
    panel(fake_llm, "CHANGES", "CHANGES", "READY")
    git(repo, "add", DOC)
    assert commit(repo).returncode == 1
    git(repo, "add", LEDGER)
    blocked = commit(repo)
    assert blocked.returncode == 1, blocked.out
    decide = hint(r"or (cascade decide .*? READY --reason '\.\.\.')$", blocked.out)
    assert decide == f"cascade decide {shlex.quote(DOC)} READY --reason '...'"

    git(repo, "reset", "-q", "--", DOC)  # the document is not in the index now
    decided = sh(repo, decide)  # for the revision under review: the working tree holds it
    assert decided.returncode == 0, decided.out
    add = hint(r"^Stage it and commit: (git add .*)$", decided.stdout)
    assert add == f"git add {shlex.quote(LEDGER)} {shlex.quote(DOC)}"
    assert sh(repo, add).returncode == 0
    landed = commit(repo)
    assert landed.returncode == 0, landed.out
    assert changed(repo) == sorted([DOC, LEDGER])
    assert fake_llm.calls() == 3  # a decision asks nobody


def test_restore_hint_runs(spaced, fake_llm):
    repo = spaced
    install_plain(repo)
    accepted(repo, fake_llm)
    ledger = repo / LEDGER
    committed = ledger.read_text()
    ledger.write_text(committed.replace("AI-Architect: review.", "AI-Architect: rewritten."))
    git(repo, "add", LEDGER)
    blocked = commit(repo)
    assert blocked.returncode == 1, blocked.out
    restore = hint(r"restore it with (git checkout HEAD -- .*?), then append", blocked.out)
    assert restore == f"git checkout HEAD -- {shlex.quote(LEDGER)}"
    assert sh(repo, restore).returncode == 0
    assert ledger.read_text() == committed
    assert git(repo, "status", "--porcelain").strip() == ""


def test_turn_hint_runs(spaced, fake_llm):
    repo = spaced
    install_plain(repo)
    accepted(repo, fake_llm)
    quiet = sh(repo, shlex.join(["cascade", "turn", LEDGER]))
    assert quiet.returncode == 0, quiet.out
    turn = hint(r"name personas to ask anyway: (cascade turn .*)$", quiet.stdout)
    assert turn == f"cascade turn {shlex.quote(LEDGER)} @alias"
    calls = fake_llm.calls()
    asked = sh(repo, turn.replace("@alias", "@security"))
    assert asked.returncode == 0, asked.out
    assert fake_llm.calls() == calls + 1
    assert Discussion.load(repo / LEDGER, root=repo).comments[-1].author == "AI-Security"


def test_on_consensus_hint_runs(spaced, fake_llm):
    repo = spaced
    (repo / ".ai-rules.yml").write_text(RULES + ON_CONSENSUS)
    git(repo, "commit", "-qam", "the next stage")
    install_plain(repo)
    panel(fake_llm, "READY", "READY", "READY")
    git(repo, "add", DOC)
    first = commit(repo)
    assert sh(repo, hint(r"reply, then (git add .*)$", first.out)).returncode == 0
    second = commit(repo)
    assert second.returncode == 0, second.out
    assert (repo / SPEC).is_file()
    add = hint(r"the next stage \(review it, then (git add .*)\)$", second.out)
    assert add == f"git add {shlex.quote(SPEC)}"
    assert sh(repo, add).returncode == 0
    assert commit(repo).returncode == 0
    assert changed(repo) == [SPEC]


def test_check_names_paths_with_spaces(spaced, fake_llm):
    """`cascade check` prints no command, only file:line: the paths come out whole."""
    repo = spaced
    install_plain(repo)
    accepted(repo, fake_llm)
    ok = sh(repo, "cascade check --from-ref HEAD~1 --to-ref HEAD --format json")
    assert ok.returncode == 0, ok.out
    report = json.loads(ok.stdout)
    assert [(d["document"], d["ledger"], d["ok"]) for d in report["verdicts"]] == \
        [(DOC, LEDGER, True)]
    (repo / DOC).write_text("# Use X\n\nChanged without review.\n")
    git(repo, "commit", "-qam", "unreviewed", "--no-verify")
    failed = sh(repo, "cascade check --from-ref HEAD~1 --to-ref HEAD")
    assert failed.returncode == 1, failed.out
    assert re.search(rf"^{re.escape(LEDGER)}:\d+: the ledger reviewed another revision of "
                     rf"{re.escape(DOC)} ", failed.stdout, re.M), failed.out
    github = sh(repo, "cascade check --from-ref HEAD~1 --to-ref HEAD --format github")
    assert f"::error file={LEDGER},line=" in github.stdout, github.out


@pytest.mark.parametrize("installer", [install_pre_commit, install_plain], ids=["pre-commit", "plain"])
def test_check_review_hint_runs(spaced, fake_llm, installer, monkeypatch):
    """A document committed with --no-verify: check's hint, run as printed, reviews it and
    lands the ledger through the hook (staging on, as by default)."""
    repo = spaced
    monkeypatch.delenv("CASCADE_STAGE")
    installer(repo)
    git(repo, "add", DOC)
    git(repo, "commit", "-qm", "skip the hook", "--no-verify")
    failed = sh(repo, "cascade check")
    assert failed.returncode == 1, failed.out
    review = hint(r": (cascade review .*)$", failed.out)
    assert review == (f"cascade review {shlex.quote(DOC)} && git commit -m "
                      f"{shlex.quote('Review of ' + DOC)}")
    panel(fake_llm, "READY", "READY", "READY")
    done = sh(repo, review)
    assert done.returncode == 0, done.out
    assert changed(repo) == [LEDGER]
    passed = sh(repo, "cascade check")
    assert passed.returncode == 0, passed.out
