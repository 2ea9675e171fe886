"""The hook stages what it wrote where that cannot touch the person's unstaged work: a panel at
consensus lands in the same `git commit`, a blocked commit leaves the ledger staged. Real
repositories, real `git commit` with the hook installed (the pre-commit framework and the plain
git hooks), a real HTTP model endpoint on 127.0.0.1."""
from __future__ import annotations

import os
import sys

import inproc
import pytest
from conftest import git
from test_hook import (
    DOC,
    LEDGER,
    RULES,
    commit,
    hook,
    install_plain,
    install_pre_commit,
    loop_repo,  # noqa: F401  (the fixture)
    script,
)

from cascade import Discussion

INSTALLERS = pytest.mark.parametrize("installer", [install_pre_commit, install_plain],
                                     ids=["pre-commit", "plain"])
NEW_DOC = "docs/adr/0001-use-sqlite-for-events.md"
NEW_LEDGER = "docs/adr/discussions/0001-use-sqlite-for-events.discussion.md"
ADR = "# Use SQLite\n\n## Status\n\nProposed\n\n## Decision\n\nWe will store events in SQLite.\n"


def porcelain(repo) -> str:
    return git(repo, "status", "--porcelain").strip()


def in_head(repo) -> list[str]:
    return sorted(git(repo, "show", "--name-only", "--no-renames", "--format=", "HEAD").split())


def blocked_line(out: str) -> str:
    return next(line for line in out.splitlines() if "blocked: " in line)


@INSTALLERS
def test_a_unanimous_panel_lands_in_the_same_commit(loop_repo, fake_llm, installer):
    repo = loop_repo
    installer(repo)
    script(fake_llm, ("READY", "READY", "READY"))
    git(repo, "add", DOC)
    landed = commit(repo)
    assert landed.returncode == 0, landed.out
    assert fake_llm.calls() == 3
    assert in_head(repo) == sorted([DOC, LEDGER])
    assert porcelain(repo) == ""
    d = Discussion.load(repo / LEDGER, root=repo)
    assert d.consensus_result.outcome == "READY"
    assert cascade(repo, "check", check=False).returncode == 0


@INSTALLERS
def test_a_blocked_commit_leaves_the_ledger_staged(loop_repo, fake_llm, installer):
    repo = loop_repo
    installer(repo)
    script(fake_llm, ("CHANGES", "CHANGES", "READY"))
    git(repo, "add", DOC)
    first = commit(repo)
    assert first.returncode == 1, first.out
    assert git(repo, "diff", "--name-only").strip() == ""  # everything it wrote is staged
    assert LEDGER in git(repo, "diff", "--cached", "--name-only").split()
    line = blocked_line(first.out)
    assert "git add" not in line, line  # nothing left to stage: one line, why and what to do
    assert "1/3 READY, needs 67%" in line and f"git diff --cached {LEDGER}" in line, line
    assert "commit again" in line

    # read, answer, commit: the answer is the second and last attempt
    cascade(repo, "comment", LEDGER,
            "Added nightly backups. @architect @security does that cover it?")
    git(repo, "add", LEDGER)
    script(fake_llm, ("READY", "READY", "READY"), "better")
    second = commit(repo)
    assert second.returncode == 0, second.out
    assert fake_llm.calls() == 5
    assert in_head(repo) == sorted([DOC, LEDGER])
    assert porcelain(repo) == ""


@pytest.mark.parametrize("form", ["-a", "<path>"])
def test_commit_a_and_commit_path_land_and_leave_the_index_clean(loop_repo, fake_llm, form):
    repo = loop_repo
    install_plain(repo)
    git(repo, "add", DOC)
    git(repo, "commit", "-qm", "adr", "--no-verify")
    (repo / DOC).write_text("# Use SQLite\n\nRevised: WAL mode and nightly backups.\n")
    (repo / "notes.txt").write_text("staged, not part of a path commit\n")
    git(repo, "add", "notes.txt")
    script(fake_llm, ("READY", "READY", "READY"))
    landed = commit(repo, "-a") if form == "-a" else commit(repo, DOC)
    assert landed.returncode == 0, landed.out
    assert fake_llm.calls() == 3
    expected = [DOC, LEDGER] + (["notes.txt"] if form == "-a" else [])
    assert in_head(repo) == sorted(expected)
    # the real index holds what HEAD holds: no staged revert of the ledger after the commit
    staged = git(repo, "diff", "--cached", "--name-only").split()
    assert staged == ([] if form == "-a" else ["notes.txt"]), staged
    assert git(repo, "diff", "--name-only").strip() == ""
    d = Discussion.load(repo / LEDGER, root=repo)
    assert d.source_revision == git(repo, "rev-parse", f"HEAD:{DOC}").strip()


@pytest.mark.parametrize("form", ["-a", "<path>"])
def test_a_blocked_commit_a_or_commit_path_names_the_git_add_git_dropped(loop_repo, fake_llm,
                                                                         form):
    """git drops the index of a blocked `git commit -a` / `git commit <path>`, and with it what
    the hook staged there: the one line says so, as the exact command; followed, it lands."""
    repo = loop_repo
    install_plain(repo)
    git(repo, "add", DOC)
    git(repo, "commit", "-qm", "adr", "--no-verify")
    (repo / DOC).write_text("# Use SQLite\n\nRevised: WAL mode and nightly backups.\n")
    script(fake_llm, ("CHANGES", "CHANGES", "READY"))
    blocked = commit(repo, "-a") if form == "-a" else commit(repo, DOC)
    assert blocked.returncode == 1, blocked.out
    assert git(repo, "diff", "--cached", "--name-only").strip() == ""  # git dropped it
    step = {"-a": f"git add {LEDGER} && git commit -a",
            "<path>": f"git add {LEDGER} && git commit {DOC} {LEDGER}"}[form]
    line = blocked_line(blocked.out)
    assert line.count("git add") == 1, line
    assert f"read the replies in {LEDGER}, answer in the ledger, then {step};" in line, line
    cascade(repo, "comment", LEDGER,
            "Added nightly backups. @architect @security does that cover it?")
    script(fake_llm, ("READY", "READY", "READY"), "better")
    add, again = step.split(" && ")
    git(repo, *add.split()[1:])
    landed = commit(repo, *again.split()[2:])
    assert landed.returncode == 0, landed.out
    assert in_head(repo) == sorted([DOC, LEDGER])
    assert porcelain(repo) == ""


@INSTALLERS
def test_an_unstaged_edit_in_the_document_stays_and_the_ledger_lands(loop_repo, fake_llm,
                                                                      installer):
    """The staged text is reviewed and committed with its ledger; the unstaged edit stays in the
    working tree, untouched, and the document's status is not moved under it."""
    repo = loop_repo
    (repo / ".ai-rules.yml").write_text(RULES + "    status: true\n")
    git(repo, "add", ".ai-rules.yml")
    git(repo, "commit", "-qm", "status rule")
    installer(repo)
    (repo / DOC).write_text(ADR)
    git(repo, "add", DOC)
    mine = ADR + "\nMy unfinished thought.\n"
    (repo / DOC).write_text(mine)
    script(fake_llm, ("READY", "READY", "READY"))
    landed = commit(repo)
    assert landed.returncode == 0, landed.out
    assert "An unexpected error" not in landed.out
    assert (repo / DOC).read_text() == mine  # nothing lost
    assert git(repo, "show", f"HEAD:{DOC}") == ADR  # the staged text, status as it was
    assert in_head(repo) == sorted([DOC, LEDGER])
    assert git(repo, "diff", "--name-only").split() == [DOC]


@INSTALLERS
def test_the_status_moves_and_is_staged_in_the_same_commit(loop_repo, fake_llm, installer):
    repo = loop_repo
    (repo / ".ai-rules.yml").write_text(RULES + "    status: true\n")
    git(repo, "add", ".ai-rules.yml")
    git(repo, "commit", "-qm", "status rule")
    installer(repo)
    (repo / DOC).write_text(ADR)
    git(repo, "add", DOC)
    script(fake_llm, ("READY", "READY", "READY"))
    landed = commit(repo)
    assert landed.returncode == 0, landed.out
    assert "Accepted" in git(repo, "show", f"HEAD:{DOC}")
    assert porcelain(repo) == ""
    assert cascade(repo, "check", check=False).returncode == 0


@INSTALLERS
def test_an_unstaged_edit_in_the_ledger_is_never_staged_nor_lost(loop_repo, fake_llm, installer):
    """The ledger is staged after the first attempt; the person then writes in it without
    staging: the hook must not stage it (pre-commit would fail restoring its stash and leave
    the edit only in its patch file; a plain `git add` would commit the unstaged text). The
    edit survives, and the replies are cached: a rerun asks no model again."""
    repo = loop_repo
    installer(repo)
    script(fake_llm, ("CHANGES", "CHANGES", "READY"))
    git(repo, "add", DOC)
    assert commit(repo).returncode == 1
    assert LEDGER in git(repo, "diff", "--cached", "--name-only").split()  # staged
    cascade(repo, "comment", LEDGER, "Please look again, all of you.")
    git(repo, "add", LEDGER)
    mine = "\nMy private notes, not staged yet.\n"
    with open(repo / LEDGER, "a") as fh:
        fh.write(mine)
    staged_before = git(repo, "show", f":{LEDGER}")
    calls = fake_llm.calls()
    proc = commit(repo)
    assert proc.returncode != 0
    assert "An unexpected error" not in proc.out, proc.out
    assert mine in (repo / LEDGER).read_text()  # the person's edit is intact
    assert git(repo, "show", f":{LEDGER}") == staged_before  # and never staged
    assert fake_llm.calls() - calls == 3
    if installer is install_plain:  # the appends sit in the working tree, before the edit
        assert f"git add {LEDGER}" in blocked_line(proc.out)
    again = commit(repo)
    assert again.returncode != 0
    assert fake_llm.calls() - calls == 3  # cached: no second model call
    assert mine in (repo / LEDGER).read_text()


@pytest.fixture
def accepted(loop_repo, fake_llm):
    """An ADR at consensus, committed with its ledger in one commit."""
    repo = loop_repo
    install_plain(repo)
    script(fake_llm, ("READY", "READY", "READY"))
    git(repo, "add", DOC)
    assert commit(repo).returncode == 0
    assert fake_llm.calls() == 3
    return repo


@pytest.mark.parametrize("how", ["git mv", "git add -A"])
def test_a_rename_moves_the_discussion_in_the_same_commit(accepted, fake_llm, how):
    repo = accepted
    first = git(repo, "rev-parse", "HEAD").strip()
    if how == "git mv":
        git(repo, "mv", DOC, NEW_DOC)
    else:
        os.rename(repo / DOC, repo / NEW_DOC)
        git(repo, "add", "-A")
    landed = commit(repo)
    assert landed.returncode == 0, landed.out
    assert fake_llm.calls() == 3  # a pure rename asks no one
    assert not (repo / LEDGER).exists()
    assert in_head(repo) == sorted([DOC, LEDGER, NEW_DOC, NEW_LEDGER])
    assert porcelain(repo) == ""
    d = Discussion.load(repo / NEW_LEDGER, root=repo)
    assert d.source == NEW_DOC  # the ledger's recorded document follows
    assert d.consensus_result.outcome == "READY"
    assert cascade(repo, "check", check=False).returncode == 0
    check = cascade(repo, "check", "--from-ref", first, check=False)
    assert check.returncode == 0, check.stdout + check.stderr


def test_a_rename_with_an_unstaged_edit_in_the_ledger_is_left_to_the_person(accepted, fake_llm):
    repo = accepted
    git(repo, "mv", DOC, NEW_DOC)
    with open(repo / LEDGER, "a") as fh:
        fh.write("\nA note of mine.\n")
    blocked = commit(repo)
    assert blocked.returncode == 1, blocked.out
    assert "\nA note of mine.\n" in (repo / LEDGER).read_text()
    assert not (repo / NEW_LEDGER).exists()
    assert f"git mv {LEDGER} {NEW_LEDGER}" in blocked_line(blocked.out)
    git(repo, "add", LEDGER)  # the note, staged: now nothing is in the way
    landed = commit(repo)
    assert landed.returncode == 0, landed.out
    assert "\nA note of mine.\n" in (repo / NEW_LEDGER).read_text()
    assert not (repo / LEDGER).exists() and porcelain(repo) == ""


@pytest.mark.parametrize("off", ["env", "rule"])
def test_staging_can_be_turned_off(loop_repo, fake_llm, off, monkeypatch):
    repo = loop_repo
    if off == "env":
        monkeypatch.setenv("CASCADE_STAGE", "0")
    else:
        (repo / ".ai-rules.yml").write_text(RULES + "    stage: false\n")
        git(repo, "add", ".ai-rules.yml")
        git(repo, "commit", "-qm", "no staging")
    install_plain(repo)
    script(fake_llm, ("READY", "READY", "READY"))
    git(repo, "add", DOC)
    first = commit(repo)
    assert first.returncode == 1, first.out
    assert f"git add {LEDGER}" in blocked_line(first.out)
    assert LEDGER not in git(repo, "diff", "--cached", "--name-only").split()
    git(repo, "add", LEDGER)
    assert commit(repo).returncode == 0
    if off == "env":  # on again: the next revision lands in one commit
        monkeypatch.delenv("CASCADE_STAGE")
        (repo / DOC).write_text("# Use SQLite\n\nWe will store events in SQLite, with WAL.\n")
        git(repo, "add", DOC)
        landed = commit(repo)
        assert landed.returncode == 0, landed.out
        assert porcelain(repo) == ""


def test_outside_pre_commit_with_its_variable_nothing_is_staged(loop_repo, fake_llm):
    """PRE_COMMIT=1 but no pre-commit process to find the stash patch of: nothing is staged
    (it cannot be told which files hold stashed edits)."""
    repo = loop_repo
    script(fake_llm, ("READY", "READY", "READY"))
    git(repo, "add", DOC)
    index = str(repo / ".git" / "index")
    before = (repo / ".git" / "index").read_bytes()
    proc = hook(repo, DOC, env={"PRE_COMMIT": "1", "GIT_INDEX_FILE": index})
    assert proc.returncode == 1, proc.stdout
    assert (repo / ".git" / "index").read_bytes() == before
    assert f"git add {LEDGER}" in blocked_line(proc.stdout)
    assert ("cascade: nothing staged: the hook cannot tell which files pre-commit stashed (its "
            "patch file cannot be found or read); git add what it names") in proc.stdout


def test_under_pre_commit_without_proc_one_line_says_why_nothing_is_staged(loop_repo, fake_llm):
    """A system without /proc (macOS, Windows: the hook run as there, /proc pointed at a
    folder that does not exist): under pre-commit nothing is staged, and one line says why
    and what to do -- never a silent no-op. The plain hooks still stage."""
    repo = loop_repo
    script(fake_llm, ("READY", "READY", "READY"))
    git(repo, "add", DOC)
    index = str(repo / ".git" / "index")
    before = (repo / ".git" / "index").read_bytes()
    code = ("import sys; from pathlib import Path; import cascade.loop.staging as staging; "
            "staging.PROC = Path(sys.argv[1]); from cascade.main import main; "
            f"sys.exit(main(['hook', {DOC!r}]))")
    proc = run_env(repo, [sys.executable, "-c", code, str(repo / "no-proc")],
                   {"PRE_COMMIT": "1", "GIT_INDEX_FILE": index})
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert (repo / ".git" / "index").read_bytes() == before
    lines = [line for line in proc.stdout.splitlines() if "nothing staged" in line]
    assert lines == ["cascade: nothing staged: under pre-commit the hook finds which files "
                     "pre-commit stashed through /proc, which this system lacks; git add what "
                     "it names (or use the plain git hooks, cascade init --plain, which stage)"]
    assert f"git add {LEDGER}" in blocked_line(proc.stdout)


def run_env(repo, args: list[str], env: dict[str, str]):
    import subprocess

    return subprocess.run(args, cwd=repo, capture_output=True, text=True,
                          env={**os.environ, **env}, check=False)


def test_pre_commit_leaves_the_unstaged_edit_of_another_file_alone(loop_repo, fake_llm):
    repo = loop_repo
    install_pre_commit(repo)
    (repo / "README.md").write_text("# Project\n\nAn edit I have not staged.\n")
    script(fake_llm, ("READY", "READY", "READY"))
    git(repo, "add", DOC)
    landed = commit(repo)
    assert landed.returncode == 0, landed.out
    assert "Stashing unstaged files" in landed.out  # pre-commit did stash (a patch exists)
    assert in_head(repo) == sorted([DOC, LEDGER])
    assert git(repo, "diff", "--name-only").split() == ["README.md"]
    assert "An edit I have not staged." in (repo / "README.md").read_text()



def cascade(repo, *args: str, check: bool = True) -> inproc.Ran:
    """``cascade ARGS`` in ``repo``, in this process (tests/inproc.py): a command stages what
    it wrote as it would from a shell; the commits stay git's, with the hook in its process."""
    ran = inproc.cascade(repo, *args)
    if check and ran.returncode:
        raise AssertionError(ran.out)
    return ran


def blocked_once(repo, fake_llm, rules: str = RULES):
    """An ADR the panel asked about: the first commit is blocked, its ledger staged."""
    if rules != RULES:
        (repo / ".ai-rules.yml").write_text(rules)
        git(repo, "add", ".ai-rules.yml")
        git(repo, "commit", "-qm", "rules")
    install_plain(repo)
    (repo / DOC).write_text(ADR)
    script(fake_llm, ("CHANGES", "CHANGES", "READY"))
    git(repo, "add", DOC)
    assert commit(repo).returncode == 1
    assert git(repo, "diff", "--name-only").strip() == ""  # what the hook wrote is staged


def test_a_comment_is_staged_and_the_answer_lands_in_one_commit(loop_repo, fake_llm):
    repo = loop_repo
    blocked_once(repo, fake_llm)
    said = cascade(repo, "comment", LEDGER, "Added nightly backups. @architect @security ok?")
    assert said.stdout.splitlines()[-1] == f"Staged {LEDGER}: commit when ready."
    assert git(repo, "diff", "--name-only").strip() == ""
    assert "Added nightly backups." in git(repo, "show", f":{LEDGER}")
    script(fake_llm, ("READY", "READY", "READY"), "better")
    landed = commit(repo)  # no git add in between
    assert landed.returncode == 0, landed.out
    assert in_head(repo) == sorted([DOC, LEDGER]) and porcelain(repo) == ""


def test_a_comment_on_a_ledger_with_unstaged_work_is_not_staged(loop_repo, fake_llm):
    repo = loop_repo
    blocked_once(repo, fake_llm)
    staged_before = git(repo, "show", f":{LEDGER}")
    with open(repo / LEDGER, "a") as fh:
        fh.write("\nMy private notes, not staged yet.\n")
    said = cascade(repo, "comment", LEDGER, "Please look again.")
    assert said.stdout.splitlines()[-1] == (
        f"Stage it and commit: git add {LEDGER} (not staged for you: it already held changes "
        "that were not staged)")
    assert git(repo, "show", f":{LEDGER}") == staged_before  # the index is untouched
    text = (repo / LEDGER).read_text()
    assert "My private notes, not staged yet." in text and "Please look again." in text


@pytest.mark.parametrize("off", ["env", "rule"])
def test_a_comment_is_not_staged_when_staging_is_off(loop_repo, fake_llm, off, monkeypatch):
    repo = loop_repo
    blocked_once(repo, fake_llm, RULES + "    stage: false\n" if off == "rule" else RULES)
    if off == "env":
        monkeypatch.setenv("CASCADE_STAGE", "0")
    else:
        git(repo, "add", LEDGER)  # the hook did not stage it under this rule
    staged_before = git(repo, "show", f":{LEDGER}")
    said = cascade(repo, "comment", LEDGER, "Please look again.")
    assert said.stdout.splitlines()[-1] == f"Stage it and commit: git add {LEDGER}"
    assert git(repo, "show", f":{LEDGER}") == staged_before
    assert git(repo, "diff", "--name-only").split() == [LEDGER]


def test_decide_stages_the_ledger_and_the_status_it_moved(loop_repo, fake_llm):
    repo = loop_repo
    blocked_once(repo, fake_llm, RULES + "    status: true\n")
    decided = cascade(repo, "decide", DOC, "READY", "--reason", "we accept the risk")
    assert decided.stdout.splitlines()[-1] == f"Staged {LEDGER} {DOC}: commit when ready."
    assert "Accepted" in git(repo, "show", f":{DOC}")
    assert git(repo, "diff", "--name-only").strip() == ""
    landed = commit(repo)
    assert landed.returncode == 0, landed.out
    assert fake_llm.calls() == 3  # no new round
    assert porcelain(repo) == "" and cascade(repo, "check").returncode == 0


def test_advance_stages_a_tracked_topic_ledger_and_leaves_a_scratch_one_alone(loop_repo):
    repo = loop_repo
    topic = "discussions/x.discussion.md"
    cascade(repo, "new", "X")
    moved = cascade(repo, "advance", topic, "--to", "detailed_review")
    assert moved.stdout.strip() == "Advanced to phase: detailed_review"  # never added: quiet
    assert git(repo, "status", "--porcelain", topic).startswith("??")
    git(repo, "add", topic)
    git(repo, "commit", "-qm", "a topic", "--no-verify")
    before = git(repo, "show", f"HEAD:{topic}")
    moved = cascade(repo, "advance", topic, "--to", "consensus_vote")
    assert moved.stdout.splitlines()[-1] == f"Staged {topic}: commit when ready."
    assert git(repo, "show", f":{topic}") != before
    assert git(repo, "diff", "--name-only").strip() == ""
