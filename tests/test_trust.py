"""The gate holds, part two: each way past `cascade check` found by trying it as an attacker
would, rebuilt in a real repository (real git, the fake endpoint over real HTTP) and judged
by the hook, by `check` over a range and by the snapshot `check`. The hook runs in this
process (tests/inproc.py), as in tests/test_gate_holds.py; the refused append goes through the
real `git commit` with the hook in its own process.

No event is taken on trust, history only grows, a decider is who they are, the reason to
block is in the ledger.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import git
from fakellm import delayed
from inproc import commit
from test_gate_holds import cascade, check, commit_rules, head, land
from test_hook import (  # noqa: F401  (loop_repo is a fixture)
    DOC,
    LEDGER,
    PANEL,
    RULES,
    install_plain,
    loop_repo,
    match,
    reply,
    script,
)
from test_hook import commit as git_commit

from cascade import Discussion
from cascade.ledger.parse import parse
from cascade.protocol.state import block_id

# These tests follow the hook's hints step by step (git add by git add): staging off.
pytestmark = pytest.mark.usefixtures("hook_stages_nothing")


def round_two(fake, repo: Path, votes=("READY", "REJECT", "READY")) -> str:
    """Round 1 (all CHANGES) committed through the hook; the document revised and the panel
    asked again (``votes``), the ledger committed with --no-verify. Returns the commit before
    round 2."""
    install_plain(repo)
    script(fake, ("CHANGES", "CHANGES", "CHANGES"), "round one")
    git(repo, "add", DOC)
    assert commit(repo).returncode == 1
    land(repo, "round 1")
    before = head(repo)
    (repo / DOC).write_text("# Use SQLite\n\nWe will store events in SQLite, with WAL.\n")
    script(fake, votes, "round two")
    git(repo, "add", DOC)
    assert commit(repo).returncode == 1
    land(repo, "round 2, committed with --no-verify")
    return before


def block_text(repo: Path, author: str) -> str:
    """The text of ``author``'s last block, delimiters included, exactly as in the ledger."""
    text = (repo / LEDGER).read_text()
    c = [c for c in parse(text).comments if c.author == author][-1]
    lines = text.split("\n")
    return "\n".join(lines[c.line - 2:c.end_line + 1]) + "\n"


def append(repo: Path, text: str) -> int:
    """Append ``text`` to the ledger; returns the line it starts at."""
    path = repo / LEDGER
    before = path.read_text()
    path.write_text(before + "\n" + text)
    return before.count("\n") + 2


def judged_everywhere(repo: Path, base: str) -> list[str]:
    """The range check and the snapshot check both fail; their outputs."""
    outs = []
    for args in (["--from-ref", base, "--to-ref", "HEAD"], []):
        out = check(repo, *args)
        assert out.returncode == 1, out.out
        outs.append(out.out)
    return outs


# ---- 1. no event is taken on trust ----------------------------------------------------------

COPIES = ("AI-Architect", "AI-Pragmatist")


@pytest.mark.parametrize("event", ["<!-- VOTE-RESET: the document changed -->",
                                   "<!-- PHASE-TRANSITION: review → review -->"])
def test_an_appended_event_and_copied_blocks_cannot_flip_a_reject(loop_repo, fake_llm, event):
    repo = loop_repo
    round_two(fake_llm, repo)
    base = head(repo)
    copies = "".join(block_text(repo, name) for name in COPIES)
    line = append(repo, event + "\n\n" + copies)
    git(repo, "add", LEDGER)
    calls = fake_llm.calls()
    proc = git_commit(repo)  # under git commit, the hook refuses the append before any call
    assert proc.returncode == 1, proc.out
    assert fake_llm.calls() == calls
    assert f"{LEDGER}:{line}:" in proc.out
    land(repo, "append an event and copies")
    ranged, snapshot = judged_everywhere(repo, base)
    for out in (ranged, snapshot):
        assert "REJECT from AI-Security" in out
    assert f"{LEDGER}:{line}: " in ranged  # the event named at its line
    out = json.loads(check(repo, "--from-ref", base, "--format", "json").stdout)
    kinds = {p["kind"] for p in out["problems"]}
    assert "unfounded-event" in kinds and "forged" in kinds, kinds
    d = Discussion.load(repo / LEDGER, root=repo)
    assert d.votes["AI-Security"] == "REJECT"


def test_a_keep_that_names_persona_blocks_is_not_a_reset(loop_repo, fake_llm):
    repo = loop_repo
    round_two(fake_llm, repo)
    base = head(repo)
    ledger = parse((repo / LEDGER).read_text())
    ids = [block_id([c for c in ledger.comments if c.author == n][-1]) for n in COPIES]
    line = append(repo, f"<!-- VOTE-RESET: clarified keep={','.join(ids)} -->\n")
    land(repo, "a reset that keeps two persona blocks")
    ranged, snapshot = judged_everywhere(repo, base)
    for out in (ranged, snapshot):
        assert "REJECT from AI-Security" in out
    assert f"{LEDGER}:{line}: a VOTE-RESET event that does not hold" in ranged


def test_a_stamped_event_copied_is_not_an_event(loop_repo, fake_llm):
    """Copying the tool's own stamped reset (and the revision before it) does not reset."""
    repo = loop_repo
    round_two(fake_llm, repo)
    base = head(repo)
    text = (repo / LEDGER).read_text()
    events = [ln for ln in text.split("\n") if ln.startswith(("<!-- SOURCE-REVISION",
                                                              "<!-- VOTE-RESET"))]
    copies = "".join(block_text(repo, name) for name in COPIES)
    append(repo, "\n".join(events[-2:]) + "\n\n" + copies)
    land(repo, "replay the last revision, its reset and two READY blocks")
    for out in judged_everywhere(repo, base):
        assert "REJECT from AI-Security" in out


# ---- 2. history only grows --------------------------------------------------------------------

def accepted(fake, repo: Path) -> None:
    """The ADR accepted through the hook: the panel's READY, then the commit that lands."""
    install_plain(repo)
    script(fake, ("READY", "READY", "READY"))
    git(repo, "add", DOC)
    assert commit(repo).returncode == 1
    git(repo, "add", LEDGER)
    assert commit(repo).returncode == 0


def test_a_rewinding_force_push_is_caught(loop_repo, fake_llm):
    repo = loop_repo
    accepted(fake_llm, repo)
    b0 = head(repo)
    (repo / DOC).write_text("# Use SQLite\n\nAnd Postgres later.\n")
    script(fake_llm, ("READY", "REJECT", "READY"), "second")
    git(repo, "add", DOC)
    assert commit(repo).returncode == 1
    b1 = land(repo, "a revision; security rejects")
    git(repo, "reset", "-q", "--hard", b0)
    (repo / "README.md").write_text("# Project\n\nUnrelated.\n")
    x = land(repo, "an unrelated commit on the rewound main")
    out = check(repo, "--from-ref", b1, "--to-ref", x)
    assert out.returncode == 1, out.out
    assert f"{LEDGER}:" in out.out and "is lost" in out.out
    assert "merge or rebase" in out.out


def test_dropping_the_commit_of_a_persons_reject_is_caught(loop_repo, fake_llm):
    repo = loop_repo
    accepted(fake_llm, repo)
    assert cascade(repo, "comment", LEDGER, "Not on my watch.", "--vote", "REJECT").returncode == 0
    pushed = land(repo, "a person rejects")
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    (repo / "README.md").write_text("# Project\n\nSomething else.\n")
    x = land(repo, "instead")
    out = check(repo, "--from-ref", pushed, "--to-ref", x)
    assert out.returncode == 1, out.out
    assert "Test Person's comment (VOTE: REJECT) is lost" in out.out


# ---- 3. a decider is who they are -------------------------------------------------------------

def rejected_where_carol_decides(fake, repo: Path,
                                 deciders: str | None = "carol@example.com") -> str:
    """A rule whose only decider is ``deciders`` (carol@example.com; None: the rule names no
    ``deciders:``); the panel rejects the ADR (its first commit attempt is blocked). Returns
    the commit before."""
    if deciders:
        commit_rules(repo, RULES + f"    deciders: [{deciders}]\n", f"{deciders} decides")
    base = head(repo)
    install_plain(repo)
    for name in PANEL:
        fake.script(match(name), reply(f"{name}: no.", "REJECT"))
    git(repo, "add", DOC)
    assert commit(repo).returncode == 1
    return base


def test_a_name_that_reads_like_a_deciders_email_is_not_the_decider(loop_repo, fake_llm):
    repo = loop_repo
    base = rejected_where_carol_decides(fake_llm, repo)
    git(repo, "config", "user.name", "carol@example.com")
    git(repo, "config", "user.email", "mallory@example.com")
    proc = cascade(repo, "decide", DOC, "READY", "--reason", "Carol says so.")
    assert "does not override the panel" in proc.out
    land(repo, "mallory decides as 'carol@example.com'")
    out = check(repo, "--from-ref", base)
    assert out.returncode == 1, out.out
    assert "not a decider" in out.out


def test_a_decision_added_in_someone_elses_commit_is_not_in_force(loop_repo, fake_llm):
    repo = loop_repo
    base = rejected_where_carol_decides(fake_llm, repo)
    git(repo, "config", "user.name", "Carol")
    git(repo, "config", "user.email", "carol@example.com")
    assert cascade(repo, "decide", DOC, "READY", "--reason", "Carol says so.").returncode == 0
    git(repo, "config", "user.name", "Mallory")
    git(repo, "config", "user.email", "mallory@example.com")
    land(repo, "mallory commits carol's decision")
    for args in (["--from-ref", base], []):
        out = check(repo, *args)
        assert out.returncode == 1, out.out
        assert "Carol <carol@example.com>" in out.out and "Mallory" in out.out


# ---- 5. the reason to block is in the ledger --------------------------------------------------

def test_a_persona_that_timed_out_blocks_in_ci_too(loop_repo, fake_llm, monkeypatch):
    repo = loop_repo
    monkeypatch.setenv("CASCADE_TIMEOUT", "1")
    monkeypatch.setenv("CASCADE_RETRIES", "0")
    base = head(repo)
    install_plain(repo)
    fake_llm.script(match("AI-Architect"), reply("Fine.", "READY"))
    fake_llm.script(match("AI-Pragmatist"), reply("Fine.", "READY"))
    fake_llm.script(match("AI-Security"), delayed(reply("Late.", "READY"), 5))
    git(repo, "add", DOC)
    proc = commit(repo)
    assert proc.returncode == 1 and "AI-Security" in proc.out
    text = (repo / LEDGER).read_text()
    assert "<!-- FAILURE: AI-Security" in text
    land(repo, "the same ledger, with --no-verify")
    for args in (["--from-ref", base], []):
        out = check(repo, *args)
        assert out.returncode == 1, out.out
        assert "AI-Security" in out.out and "timed out" in out.out
    status = json.loads(cascade(repo, "status", "--json", DOC).stdout)["discussions"][0]
    assert status["gate"]["ok"] is False
    # Asked again, Security answers: the failure no longer blocks.
    fake_llm.script(match("AI-Security"), reply("Fine now.", "READY"))
    monkeypatch.setenv("CASCADE_TIMEOUT", "30")
    turn = cascade(repo, "turn", LEDGER)
    assert turn.returncode == 0, turn.out
    assert fake_llm.calls("Reply as AI-Security") == 2 and fake_llm.calls() == 4
    land(repo, "security answers")
    assert check(repo, "--from-ref", base).returncode == 0


def test_a_persons_vote_counts_for_human_required_only_from_their_commit(loop_repo, fake_llm):
    repo = loop_repo
    commit_rules(repo, RULES.replace("human_required: false", "human_required: true"),
                 "a person must approve")
    base = head(repo)
    install_plain(repo)
    script(fake_llm, ("READY", "READY", "READY"))
    git(repo, "add", DOC)
    assert commit(repo).returncode == 1
    git(repo, "config", "user.name", "Mallory")
    git(repo, "config", "user.email", "mallory@example.com")
    assert cascade(repo, "comment", LEDGER, "--vote", "READY", "--author", "Carol").returncode == 0
    forged = land(repo, "mallory adds a READY under carol's name")
    for args in (["--from-ref", base], []):
        out = check(repo, *args)
        assert out.returncode == 1, out.out
        assert ("a human READY vote is required (Carol's READY was added in a commit by someone "
                "else)") in out.out
    # The outcome `comment` recorded on that vote does not hold either: a problem of the range.
    assert "a OUTCOME event that does not hold" in check(repo, "--from-ref", base).out
    git(repo, "config", "user.name", "Carol")
    git(repo, "config", "user.email", "carol@example.com")
    assert cascade(repo, "comment", LEDGER, "--vote", "READY").returncode == 0
    land(repo, "carol approves")
    assert check(repo).returncode == 0
    assert check(repo, "--from-ref", forged).returncode == 0
