"""The merge driver for ledgers: two branches that each append merge without a conflict, in a
form ``cascade check`` and the hook accept; anything else stays a conflict."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, git

from cascade.check.merge import merge_problem
from cascade.check.mergedriver import merge_versions
from cascade.ledger.meaning import merge_lost
from cascade.ledger.parse import parse

LEDGER = "discussions/merge-test.discussion.md"

BASE = """\
<!-- DISCUSSION -->
<!-- Title: Merge test -->
<!-- Phase: initial_feedback -->

# Merge test

*Discussion begins below.*

---
Name: Ada

First words.
---
"""


def block(name: str, text: str, vote: str | None = None) -> str:
    return f"\n---\nName: {name}\n\n{text}\n" + (f"\nVOTE: {vote}\n" if vote else "") + "---\n"


def merged(base: str | bytes, ours: str | bytes, theirs: str | bytes) -> bytes:
    """The driver's result, checked with the rules ``cascade check`` and the hook apply."""
    b, o, t = (x.encode() if isinstance(x, str) else x for x in (base, ours, theirs))
    result, reason = merge_versions(b, o, t)
    assert result is not None, reason
    assert result.startswith(b)
    for parents in ([("ours", o), ("theirs", t)], [("theirs", t), ("ours", o)]):
        assert merge_problem(parents, result) is None
        assert merge_lost([(n, parse(d.decode(), details=False)) for n, d in parents],
                          parse(result.decode(), details=False)) is None
    return result


def authors_votes(data: bytes) -> list[tuple[str, str | None]]:
    return [(c.author, c.vote) for c in parse(data.decode()).comments]


# ---- the merge itself ------------------------------------------------------------------------

def test_two_appends_keep_the_base_then_ours_then_theirs():
    ours = BASE + block("Bo", "From main.", "CHANGES")
    theirs = BASE + block("Cy", "From the branch.", "READY")
    result = merged(BASE, ours, theirs).decode()
    assert result == ours + block("Cy", "From the branch.", "READY")
    assert authors_votes(result.encode()) == [("Ada", None), ("Bo", "CHANGES"), ("Cy", "READY")]


def test_identical_versions_and_one_sided_changes():
    ours = BASE + block("Bo", "Same.")
    assert merged(BASE, ours, ours) == ours.encode()
    assert merged(BASE, ours, BASE) == ours.encode()
    assert merged(BASE, BASE, ours) == ours.encode()


def test_the_same_block_on_both_sides_is_kept_once():
    cached = "\n---\nName: AI-Architect\n<!-- cascade:ai model=m sig=abc -->\n\nSame.\n---\n"
    both = BASE + cached
    # the same block first on both sides, then each its own
    ours, theirs = both + block("Bo", "Mine."), both + block("Cy", "Yours.")
    result = merged(BASE, ours, theirs)
    assert result.decode() == ours + block("Cy", "Yours.")
    assert result.decode().count("Same.") == 1
    # one side's whole append is also in the other's (later): nothing to add
    ours = BASE + block("Bo", "Mine.") + cached
    assert merged(BASE, ours, both) == ours.encode()
    # one side's append is a prefix of the other's
    assert merged(BASE, both, both + block("Cy", "Later.")) == (both + block("Cy", "Later.")).encode()


def test_a_block_in_common_that_is_not_a_prefix_is_kept_twice_rather_than_reordered():
    p, x, y = block("P", "Same."), block("X", "Ours."), block("Y", "Theirs.")
    result = merged(BASE, BASE + p + x, BASE + y + p).decode()
    assert [a for a, _ in authors_votes(result.encode())] == ["Ada", "P", "X", "Y", "P"]


def test_trailing_newline_differences():
    base = BASE.rstrip("\n")  # the base's last line has no newline
    ours = base + "\n" + block("Bo", "Mine.")
    theirs = base + "\n" + block("Cy", "Yours.").lstrip("\n")
    result = merged(base, ours, theirs)
    assert authors_votes(result) == [("Ada", None), ("Bo", None), ("Cy", None)]
    # a side that ends without a final newline, inside its own block (no closing ---)
    ours = BASE + "\n---\nName: Bo\n\nUnfinished"
    result = merged(BASE, ours, BASE + block("Cy", "Yours.", "READY")).decode()
    assert result.startswith(ours + "\n---\n")  # closed as an append closes it
    assert authors_votes(result.encode()) == [("Ada", None), ("Bo", None), ("Cy", "READY")]
    assert parse(result).comments[1].body == "Unfinished"


def test_a_base_that_ends_inside_a_block():
    base = BASE + "\n---\nName: Bo\n\nStill open.\n"
    ours = base + "---\n" + block("Cy", "Closed it.")
    theirs = base + "---\nName: Di\n\nShared delimiter.\n---\n"
    result = merged(base, ours, theirs).decode()
    assert [a for a, _ in authors_votes(result.encode())] == ["Ada", "Bo", "Cy", "Di"]
    assert parse(result).comments[1].body == "Still open."


def test_crlf_ledger_stays_crlf():
    def crlf(text: str) -> str:
        return text.replace("\n", "\r\n")

    base = crlf(BASE)
    ours, theirs = base + crlf(block("Bo", "Mine.")), base + crlf(block("Cy", "Yours."))
    result = merged(base, ours, theirs)
    assert result == (ours + crlf(block("Cy", "Yours."))).encode()
    assert b"\n" not in result.replace(b"\r\n", b"")
    # with the glue the merge adds (ours ends inside a block): CRLF too
    ours = base + crlf("\n---\nName: Bo\n\nOpen")
    result = merged(base, ours, theirs)
    assert b"\n" not in result.replace(b"\r\n", b"")
    assert authors_votes(result) == [("Ada", None), ("Bo", None), ("Cy", None)]


def test_a_side_that_changes_the_state_goes_last():
    """Votes cast on one branch for the earlier revision are reset by the other branch's new
    revision, as they would have been: the branch that recorded the revision goes last."""
    revision = "\n<!-- SOURCE-REVISION: abc123 path=doc.md -->\n<!-- VOTE-RESET: the document changed -->\n"
    stale_vote = block("Bo", "Fine as it was.", "READY")
    new_round = revision + block("Cy", "New revision.", "CHANGES")
    for ours, theirs in [(BASE + new_round, BASE + stale_vote), (BASE + stale_vote, BASE + new_round)]:
        result = merged(BASE, ours, theirs).decode()
        assert result.index("Fine as it was.") < result.index("SOURCE-REVISION")
    # both sides changed the state: ours then theirs
    result = merged(BASE, BASE + new_round, BASE + revision.replace("abc123", "def456")).decode()
    assert result.index("abc123") < result.index("def456")


@pytest.mark.parametrize("theirs, reason", [
    (BASE.replace("First words.", "Other words.") + block("Cy", "x"), "theirs changed the earlier text"),
    (BASE[:-4] + "More words.\n---\n" + block("Cy", "x"), "theirs changed the earlier text"),
    (BASE + block("Cy", "x").replace("x\n---", "```\ncode"), "theirs ends inside a code fence"),
])
def test_not_an_append_is_a_conflict(theirs, reason):
    result, why = merge_versions(BASE.encode(), (BASE + block("Bo", "y")).encode(), theirs.encode())
    assert result is None and why.startswith(reason)


def test_an_append_that_changes_what_the_base_says_is_a_conflict():
    base = BASE + "\n---\nName: Bo\n\nOpen"  # ends inside a block, without a newline
    theirs = base + "\nand more\n---\n"  # lengthens Bo's comment
    result, why = merge_versions(base.encode(), (base + "\n---\n" + block("Cy", "x")).encode(),
                                 theirs.encode())
    assert result is None and "changes the earlier text" in why


def test_a_ledger_both_branches_created_is_a_conflict():
    result, why = merge_versions(b"", (BASE + block("Bo", "y")).encode(), BASE.encode())
    assert result is None and why == "both branches created this ledger"


def test_not_utf8_is_a_conflict():
    result, why = merge_versions(BASE.encode(), BASE.encode() + b"\xff\n",
                                 (BASE + block("Cy", "x")).encode())
    assert result is None and "UTF-8" in why


# ---- the command ------------------------------------------------------------------------------

def test_command_writes_the_merge_into_current(tmp_path, cli):
    o, a, b = tmp_path / "o", tmp_path / "a", tmp_path / "b"
    o.write_text(BASE)
    a.write_text(BASE + block("Bo", "Mine."))
    b.write_text(BASE + block("Cy", "Yours."))
    code, _, err = cli("merge-driver", str(o), str(a), str(b), LEDGER)
    assert (code, err) == (0, "")
    assert a.read_text() == BASE + block("Bo", "Mine.") + block("Cy", "Yours.")


def test_command_leaves_conflict_markers_and_exits_1(tmp_path, cli):
    o, a, b = tmp_path / "o", tmp_path / "a", tmp_path / "b"
    o.write_text(BASE)
    a.write_text(BASE + block("Bo", "Mine."))
    b.write_text(BASE.replace("First words.", "Rewritten.") + block("Cy", "Yours."))
    code, _, err = cli("merge-driver", str(o), str(a), str(b), LEDGER)
    assert code == 1
    assert err.startswith(f"cascade: {LEDGER}: not merged: theirs changed the earlier text")
    # git's own textual merge (here without markers: the edit and the appends do not
    # overlap); git reports the file conflicted all the same, as the driver failed
    text = a.read_text()
    assert "Rewritten." in text and "Mine." in text and "Yours." in text


# ---- with git -------------------------------------------------------------------------------

def run(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(list(args), check=False, cwd=cwd, capture_output=True, text=True, env=env)


@pytest.fixture
def shim_env(tmp_path) -> dict[str, str]:
    """PATH with a ``cascade`` that runs this checkout: what ``cascade init`` registers."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    shim = bindir / "cascade"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m cascade "$@"\n')
    shim.chmod(0o755)
    return {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}",
            "PYTHONPATH": str(REPO)}


def cascade(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    proc = run(cwd, sys.executable, "-m", "cascade", *args, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


@pytest.fixture
def ledger_repo(repo, shim_env) -> tuple[Path, str]:
    """A repository with the driver registered by ``cascade init --plain`` and a committed
    ledger that no rule governs; returns (repo, the base commit)."""
    cascade(repo, shim_env, "init", "--plain")
    cascade(repo, shim_env, "new", "Merge test")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base", "--no-verify")
    return repo, git(repo, "rev-parse", "HEAD").strip()


def diverge(repo: Path, env: dict[str, str], side: list[tuple[str, ...]],
            main: list[tuple[str, ...]]) -> subprocess.CompletedProcess:
    """Commands on a side branch, then on main; then merge the side branch into main."""
    git(repo, "checkout", "-qb", "side")
    for args in side:
        cascade(repo, env, *args)
    git(repo, "commit", "-qam", "side", "--no-verify")
    git(repo, "checkout", "-q", "main")
    for args in main:
        cascade(repo, env, *args)
    git(repo, "commit", "-qam", "main", "--no-verify")
    return run(repo, "git", "merge", "--no-edit", "--no-verify", "side", env=env)


def test_init_registers_the_driver(repo, shim_env):
    (repo / ".gitattributes").write_bytes(b"*.png binary")  # the user's, without a newline
    cascade(repo, shim_env, "init", "--plain")
    assert (repo / ".gitattributes").read_bytes() == (
        b"*.png binary\n*.discussion.md merge=cascade-ledger text eol=lf\n")
    assert git(repo, "config", "merge.cascade-ledger.driver").strip() == (
        "cascade merge-driver %O %A %B %P")
    assert git(repo, "config", "merge.cascade-ledger.name").strip() == "cascade ledger merge"
    git(repo, "config", "merge.cascade-ledger.driver", "my-driver %O %A %B")
    proc = cascade(repo, shim_env, "init", "--plain")  # again: nothing added, nothing replaced
    assert (repo / ".gitattributes").read_bytes().count(b"cascade-ledger") == 1
    assert git(repo, "config", "merge.cascade-ledger.driver").strip() == "my-driver %O %A %B"
    assert "kept your git config merge.cascade-ledger.driver" in proc.stdout
    attr = git(repo, "check-attr", "merge", "--", LEDGER)
    assert attr.strip().endswith("merge: cascade-ledger")


def test_git_merge_of_two_comments_succeeds_and_passes_check(ledger_repo, shim_env):
    repo, base = ledger_repo
    before = (repo / LEDGER).read_text()
    proc = diverge(repo, shim_env,
                   side=[("comment", LEDGER, "A note from the side branch.", "--vote", "READY")],
                   main=[("comment", LEDGER, "A note from main.", "--vote", "CHANGES")])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert len(git(repo, "log", "-1", "--format=%P").split()) == 2  # a real merge commit
    text = (repo / LEDGER).read_text()
    assert text.startswith(before)
    main_text = git(repo, "show", f"HEAD^1:{LEDGER}")
    side_text = git(repo, "show", f"HEAD^2:{LEDGER}")
    assert text.startswith(main_text) and text.endswith(side_text[len(before):])
    assert [c.body for c in parse(text).comments] == ["A note from main.",
                                                      "A note from the side branch."]
    check = run(repo, sys.executable, "-m", "cascade", "check", "--from-ref", base, "--to-ref",
                "HEAD", env=shim_env)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "3 commit(s)" in check.stdout


def test_git_merge_keeps_the_same_block_once(ledger_repo, shim_env):
    repo, base = ledger_repo
    same = ("comment", LEDGER, "Written alike on both branches.", "--author", "Ada")
    proc = diverge(repo, shim_env, side=[same, ("comment", LEDGER, "Side only.")],
                   main=[same])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = (repo / LEDGER).read_text()
    assert text.count("Written alike on both branches.") == 1
    assert text == git(repo, "show", f"side:{LEDGER}")
    check = run(repo, sys.executable, "-m", "cascade", "check", "--from-ref", base, "--to-ref",
                "HEAD", env=shim_env)
    assert check.returncode == 0, check.stdout + check.stderr


def test_git_merge_of_crlf_ledgers(ledger_repo, shim_env):
    repo, _ = ledger_repo
    # A repository that keeps CRLF ledgers (its attribute has no eol=lf, as an older init wrote)
    (repo / ".gitattributes").write_text("*.discussion.md merge=cascade-ledger\n")
    path = repo / LEDGER
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    git(repo, "commit", "-qam", "crlf", "--no-verify")
    base = git(repo, "rev-parse", "HEAD").strip()
    proc = diverge(repo, shim_env, side=[("comment", LEDGER, "Side.")],
                   main=[("comment", LEDGER, "Main.")])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = path.read_bytes()
    assert b"\n" not in data.replace(b"\r\n", b"")
    assert [c.body for c in parse(data.decode()).comments] == ["Main.", "Side."]
    check = run(repo, sys.executable, "-m", "cascade", "check", "--from-ref", base, "--to-ref",
                "HEAD", env=shim_env)
    assert check.returncode == 0, check.stdout + check.stderr


def test_git_merge_of_an_edit_stays_a_conflict_and_check_reports_it(ledger_repo, shim_env):
    repo, base = ledger_repo
    git(repo, "checkout", "-qb", "side")
    path = repo / LEDGER
    path.write_text(path.read_text().replace("*Discussion begins below.*", "*Edited.*"))
    cascade(repo, shim_env, "comment", LEDGER, "Side.")
    git(repo, "commit", "-qam", "side edits", "--no-verify")
    git(repo, "checkout", "-q", "main")
    cascade(repo, shim_env, "comment", LEDGER, "Main.")
    git(repo, "commit", "-qam", "main", "--no-verify")
    proc = run(repo, "git", "merge", "--no-edit", "--no-verify", "side", env=shim_env)
    assert proc.returncode != 0
    assert "not merged: theirs changed the earlier text" in proc.stderr
    assert "CONFLICT" in proc.stdout
    text = path.read_text()
    assert "<<<<<<< ours" in text and ">>>>>>> theirs" in text
    # resolved by keeping both comments: the edit is still reported
    resolved = "\n".join(ln for ln in text.split("\n")
                         if not ln.startswith(("<<<<<<<", "=======", ">>>>>>>")))
    path.write_text(resolved)
    git(repo, "commit", "-qam", "merge", "--no-verify")
    side_sha = git(repo, "rev-parse", "side").strip()
    check = run(repo, sys.executable, "-m", "cascade", "check", "--from-ref", base, "--to-ref",
                "HEAD", env=shim_env)
    assert check.returncode == 1
    assert f"ledger text edited in {side_sha[:7]}" in check.stdout


def test_without_cascade_on_path_git_leaves_a_conflict(ledger_repo, shim_env):
    repo, _ = ledger_repo
    env = {**shim_env, "PATH": os.pathsep.join(p for p in shim_env["PATH"].split(os.pathsep)
                                               if not (Path(p) / "cascade").exists())}
    git(repo, "checkout", "-qb", "side")
    cascade(repo, shim_env, "comment", LEDGER, "Side.")
    git(repo, "commit", "-qam", "side", "--no-verify")
    git(repo, "checkout", "-q", "main")
    cascade(repo, shim_env, "comment", LEDGER, "Main.")
    git(repo, "commit", "-qam", "main", "--no-verify")
    proc = run(repo, "git", "merge", "--no-edit", "--no-verify", "side", env=env)
    assert proc.returncode != 0
    assert "CONFLICT" in proc.stdout
    assert git(repo, "ls-files", "-u", LEDGER).strip()  # conflicted: nothing was lost
