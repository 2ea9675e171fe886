"""Identity is the commit's: a person's decision, vote and waiver record who git will write as
the next commit's author (``GIT_AUTHOR_NAME``/``GIT_AUTHOR_EMAIL`` over git's configuration, or
``--author``), so the commit that adds them is theirs and they count; and a blocked commit's
hint never names a `cascade decide` that could not count. Real repositories, the plain hook
under a real `git commit` wherever a person's identity reaches it (the shell lines), in this
process for the setup (tests/inproc.py), the fake endpoint over HTTP."""
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
from inproc import commit
from test_gate_holds import cascade, check, commit_rules, head
from test_trust import rejected_where_carol_decides as rejected
from test_hook import (  # noqa: F401  (loop_repo is a fixture)
    DOC,
    LEDGER,
    PANEL,
    RULES,
    install_plain,
    loop_repo,
    match,
    reply,
)

from cascade.base.errors import CascadeError
from cascade.base.gitio import Author, next_author

CAROL = {"GIT_AUTHOR_NAME": "Carol", "GIT_AUTHOR_EMAIL": "carol@example.com"}
MALLORY = {"GIT_AUTHOR_NAME": "Mallory", "GIT_AUTHOR_EMAIL": "mallory@example.com"}
CASCADE = f"{shlex.quote(sys.executable)} -m cascade"


def shell(repo: Path, line: str, env: dict[str, str] | None = None
          ) -> subprocess.CompletedProcess[str]:
    """``line`` run by the shell, as a person types it (``env``: added to the environment)."""
    proc = subprocess.run(line, shell=True, cwd=repo, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=300)
    proc.out = proc.stdout + proc.stderr
    return proc



# ---- who authors the next commit ---------------------------------------------------------------

def test_the_next_author_is_who_git_writes(repo, monkeypatch):
    assert next_author(repo) == Author("Test Person", "test@example.com")  # git's configuration
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Carol")
    assert next_author(repo) == Author("Carol", "test@example.com")  # as git writes it
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "carol@example.com")
    assert next_author(repo).ident == "Carol <carol@example.com>"
    given = next_author(repo, "  Dana  Decider <dana@example.com> ")  # as git commit --author
    assert given == Author("Dana Decider", "dana@example.com")
    assert next_author(repo, "Dana").ident == "Dana"  # a bare name: no address
    with pytest.raises(CascadeError, match="give a name"):
        next_author(repo, "<dana@example.com>")


def test_no_identity_is_one_line_naming_the_ways_to_set_it(repo, tmp_path, monkeypatch):
    empty = tmp_path / "empty.gitconfig"
    empty.write_text("")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    monkeypatch.delenv("GIT_AUTHOR_EMAIL", raising=False)
    monkeypatch.setenv("EMAIL", "")
    with pytest.raises(CascadeError) as caught:
        next_author(repo)
    message = str(caught.value)
    assert "\n" not in message
    assert all(w in message for w in ("user.name", "GIT_AUTHOR_NAME", "--author"))


# ---- decisions ---------------------------------------------------------------------------------

def test_a_decision_taken_as_git_author_counts_in_that_authors_commit(loop_repo, fake_llm):
    """git's configuration says Test Person; the environment says Carol, the decider: the
    decision is Carol's, and her commit lands it."""
    repo = loop_repo
    base = rejected(fake_llm, repo)
    done = shell(repo, f"{CASCADE} decide {DOC} READY --reason 'Carol accepts the risk.' "
                       "&& git commit -m 'carol decides'", CAROL)
    assert done.returncode == 0, done.out
    assert "Recorded the decision of Carol <carol@example.com>: READY" in done.out
    assert git(repo, "log", "-1", "--format=%an <%ae>").strip() == "Carol <carol@example.com>"
    assert "decided READY by Carol <carol@example.com>" in done.out  # the hook agrees
    for args in ([], ["--from-ref", base]):
        out = check(repo, *args)
        assert out.returncode == 0, out.out


def test_author_option_records_that_person_and_says_whose_commit_counts(loop_repo, fake_llm):
    repo = loop_repo
    base = rejected(fake_llm, repo)
    proc = cascade(repo, "decide", DOC, "READY", "--reason", "Carol's call.",
                   "--author", "Carol <carol@example.com>")
    assert proc.returncode == 0, proc.out
    assert "Recorded the decision of Carol <carol@example.com>" in proc.out
    assert ("it counts only when Carol <carol@example.com> commits it, from their own "
            "identity (git's author here is Test Person <test@example.com>)") in proc.out
    blocked = commit(repo)  # Test Person's commit: not Carol's decision
    assert blocked.returncode == 1, blocked.out
    landed = shell(repo, "git commit -m 'carol decides'", CAROL)  # Carol commits it herself
    assert landed.returncode == 0, landed.out
    assert check(repo, "--from-ref", base).returncode == 0


@pytest.mark.parametrize("deciders", ["carol@example.com", "Carol"])
def test_a_decision_in_another_authors_commit_hints_at_what_counts(loop_repo, fake_llm,
                                                                   deciders):
    """Carol decided; Mallory, who may not decide, commits: the hint never tells Mallory to
    run `cascade decide` (it would record Mallory's decision, which does not count); it says
    Carol commits her decision, and when she does, it lands."""
    repo = loop_repo
    rejected(fake_llm, repo, deciders)
    assert shell(repo, f"{CASCADE} decide {DOC} READY --reason 'Fine.'", CAROL).returncode == 0
    blocked = shell(repo, "git commit -m 'mallory commits'", MALLORY)
    assert blocked.returncode == 1, blocked.out
    assert "recorded as Carol <carol@example.com>'s, but added in a commit by Mallory" \
        in blocked.out
    assert "or cascade decide" not in blocked.out
    assert ("or Carol <carol@example.com> commits their decision from their own identity"
            in blocked.out)
    landed = shell(repo, "git commit -m 'carol commits her decision'", CAROL)
    assert landed.returncode == 0, landed.out
    assert check(repo).returncode == 0


def test_a_person_who_may_not_decide_is_told_who_may(loop_repo, fake_llm):
    repo = loop_repo
    rejected(fake_llm, repo)
    git(repo, "add", LEDGER)
    blocked = shell(repo, "git commit -m again", MALLORY)
    assert blocked.returncode == 1, blocked.out
    assert "or cascade decide" not in blocked.out
    assert (f"or a decider (carol@example.com) runs cascade decide {DOC} READY --reason '...' "
            "and commits it from their own identity") in blocked.out


def test_the_hinted_decide_works_when_this_author_may_decide(loop_repo, fake_llm):
    """No deciders: anyone may decide. Carol's decision, committed by Mallory, does not count;
    the hint names `cascade decide`, and Mallory running exactly it, then committing, lands."""
    repo = loop_repo
    rejected(fake_llm, repo, deciders=None)
    assert shell(repo, f"{CASCADE} decide {DOC} READY --reason 'Fine.'", CAROL).returncode == 0
    blocked = shell(repo, "git commit -m 'mallory commits'", MALLORY)
    assert blocked.returncode == 1, blocked.out
    hinted = re.search(r"or (cascade decide \S+ READY --reason '\.\.\.')", blocked.out)
    assert hinted is not None, blocked.out
    command = hinted.group(1).replace("cascade", CASCADE, 1).replace("'...'", "'My call.'")
    done = shell(repo, f"{command} && git commit -m 'mallory decides'", MALLORY)
    assert done.returncode == 0, done.out
    assert check(repo).returncode == 0


# ---- votes and waivers -------------------------------------------------------------------------

def test_a_vote_taken_as_git_author_counts_toward_human_required(loop_repo, fake_llm):
    repo = loop_repo
    commit_rules(repo, RULES.replace("human_required: false", "human_required: true"))
    install_plain(repo)
    for name in PANEL:
        fake_llm.script(match(name), reply(f"{name}: fine.", "READY"))
    git(repo, "add", DOC)
    assert commit(repo).returncode == 1  # no person has voted
    done = shell(repo, f"{CASCADE} comment {LEDGER} 'Agreed.' --vote READY "
                       "&& git commit -m 'carol approves'", CAROL)
    assert done.returncode == 0, done.out
    assert "Added comment from Carol" in done.out
    assert check(repo).returncode == 0


def test_a_waiver_under_an_address_decider_records_what_the_entry_matches(loop_repo, fake_llm):
    repo = loop_repo
    commit_rules(repo, RULES + "    deciders: [carol@example.com]\n")
    install_plain(repo)
    changes = json.dumps({"comment": "Needs work.", "vote": "CHANGES", "findings": [
        {"severity": "major", "where": "-", "what": "unbounded retention"}]})
    for name in PANEL:
        fake_llm.script(match(name), changes)
    git(repo, "add", DOC)
    assert commit(repo).returncode == 1
    said = shell(repo, f"{CASCADE} comment {LEDGER} 'WAIVE(F1): we accept it'", CAROL)
    assert said.returncode == 0, said.out
    assert "Name: Carol <carol@example.com>\n" in (repo / LEDGER).read_text()
    assert shell(repo, "git commit -qm waive --no-verify", CAROL).returncode == 0
    status = json.loads(cascade(repo, "status", "--json", LEDGER).stdout)["discussions"][0]
    waived = [f for f in status["findings"] if f["id"] == "F1"][0]
    assert waived["status"] == "waived", waived
    # A comment that waives nothing keeps the plain name.
    assert shell(repo, f"{CASCADE} comment {LEDGER} 'Thanks.'", CAROL).returncode == 0
    assert (repo / LEDGER).read_text().rstrip().split("---")[-2].startswith("\nName: Carol\n")


def test_the_package_under_test_is_this_worktree():
    import cascade
    assert Path(cascade.__file__).resolve().parent.parent == REPO
