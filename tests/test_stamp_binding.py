"""A stamp belongs to its ledger: a block or event cascade stamped counts
only in the ledger it was written for. A READY copied from the reviewed ledger of one ADR
into the ledger of another at the same text is shown and never counted; `cascade check`
names it, in range and snapshot mode alike. A legitimate move keeps every stamp.

Real repositories, the hook in this process (tests/inproc.py) and once under the real
`git commit` (the copy refused), the fake endpoint over real HTTP; the stamps' own rules (a
copy of an event, stamps from before stamps named their ledger) on real ledgers written
through the Python API."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import git
from inproc import commit
from test_gate_holds import cascade, check, head, land
from test_hook import (  # noqa: F401  (loop_repo is a fixture)
    DOC,
    LEDGER,
    PANEL,
    install_plain,
    loop_repo,
    script,
)
from test_hook import commit as git_commit
from test_revisions import NEW_DOC, NEW_LEDGER, hint
from test_trust import accepted, block_text

from cascade import Discussion
from cascade.ledger.records import SOURCE_REVISION, VOTE_RESET
from cascade.ledger.parse import parse
from cascade.ledger.provenance import FOREIGN, bound_to, ledger_id
from cascade.ledger.provenance import LEDGER as BOUND
from cascade.ledger.render import render_comment
from cascade.protocol.revisions import record_revision

# These tests follow the hook's hints step by step (git add by git add): staging off.
pytestmark = pytest.mark.usefixtures("hook_stages_nothing")

OTHER_DOC = "docs/adr/0002-use-sqlite-again.md"
OTHER_LEDGER = "docs/adr/discussions/0002-use-sqlite-again.discussion.md"
COPIED = ("AI-Architect", "AI-Security")



@pytest.fixture
def copied(loop_repo, fake_llm):
    """ADR A accepted; ADR B, the very same text, committed through the hook where only
    AI-Pragmatist votes (READY); then A's READY blocks of the two others appended to B's
    ledger and committed. Returns (repo, the commit before the copy, the copies' lines)."""
    repo = loop_repo
    accepted(fake_llm, repo)
    (repo / OTHER_DOC).write_text((repo / DOC).read_text())
    assert git(repo, "hash-object", OTHER_DOC) == git(repo, "hash-object", DOC)  # one blob
    script(fake_llm, (None, None, "READY"), "other")
    git(repo, "add", OTHER_DOC)
    blocked = commit(repo)
    assert blocked.returncode == 1, blocked.out  # 1 of 3 READY
    land(repo, "ADR B, blocked")
    base = head(repo)
    path = repo / OTHER_LEDGER
    text = path.read_text()
    lines = []
    for name in COPIED:
        lines.append(text.count("\n") + 3)  # its Name: line, after a blank and the ---
        text += "\n" + block_text(repo, name)  # from A's ledger, as written there
    path.write_text(text)
    land(repo, "copy A's READY into B's ledger")
    return repo, base, lines


def test_a_ready_copied_from_another_ledger_is_shown_and_not_counted(copied):
    repo, base, lines = copied
    d = Discussion.load(repo / OTHER_LEDGER, root=repo)
    a = Discussion.load(repo / LEDGER, root=repo)
    assert d.identity != a.identity
    copies = [c for c in d.comments if c.line in lines]
    assert [c.author for c in copies] == list(COPIED)  # shown, as written
    assert all(c.provenance[BOUND] == a.identity and c.vote == "READY" for c in copies)
    assert d.votes == {"AI-Pragmatist": "READY"}  # never counted
    assert not d.consensus_result.reached
    assert [(f.line, f.reason) for f in d.state.forged] == [(n, FOREIGN) for n in lines]
    shown = cascade(repo, "status", OTHER_LEDGER).stdout
    assert f"line {lines[1]}: AI-Security: {FOREIGN}" in shown, shown


def test_check_names_the_copy_in_range_and_snapshot_mode(copied):
    repo, base, lines = copied
    ranged = check(repo, "--from-ref", base, "--to-ref", "HEAD")
    snapshot = check(repo)
    for out in (ranged, snapshot):
        assert out.returncode == 1, out.out
        assert f"{OTHER_LEDGER}:{lines[0]}" in out.out, out.out
        assert f"AI-Architect's vote (line {lines[0]}) does not count: {FOREIGN}" in out.out
    # range mode: each copy is a problem of its own, on one line naming why
    problems = [ln for ln in ranged.stdout.splitlines() if ln.startswith(f"{OTHER_LEDGER}:")]
    for line, name in zip(lines, COPIED):
        assert (f"{OTHER_LEDGER}:{line}: a block under {name}'s name that cascade did not "
                f"write ({FOREIGN}): it does not count") in problems, ranged.stdout
    out = json.loads(check(repo, "--from-ref", base, "--format", "json").stdout)
    assert {(p["line"], p["kind"]) for p in out["problems"]} >= {(n, "forged") for n in lines}
    assert check(repo, "--to-ref", base).returncode == 1  # B was blocked before the copy


def test_the_hook_refuses_to_commit_the_copy(loop_repo, fake_llm):
    """Committed through the hook, the copies are refused before any model is asked, each
    named at its line."""
    repo = loop_repo
    accepted(fake_llm, repo)
    (repo / OTHER_DOC).write_text((repo / DOC).read_text())
    script(fake_llm, (None, None, "READY"), "other")
    git(repo, "add", OTHER_DOC)
    assert commit(repo).returncode == 1
    path = repo / OTHER_LEDGER
    text = path.read_text()
    line = text.count("\n") + 3
    path.write_text(text + "\n" + block_text(repo, "AI-Security"))
    calls = fake_llm.calls()
    git(repo, "add", OTHER_LEDGER)
    blocked = git_commit(repo)  # the real git commit, the hook in its own process
    assert blocked.returncode == 1, blocked.out
    assert fake_llm.calls() == calls
    assert (f"{OTHER_LEDGER}:{line}: a block under AI-Security's name that cascade did not "
            f"write ({FOREIGN}): it would not count; remove it") in blocked.out, blocked.out


def test_a_moved_ledger_keeps_its_stamps(loop_repo, fake_llm):
    """`git mv` of an accepted ADR and its ledger: the ledger is the same one (its header,
    hence what its stamps name, is unchanged), so the review holds and check passes; a new
    revision is reviewed in it after the move."""
    repo = loop_repo
    accepted(fake_llm, repo)
    before = head(repo)
    identity = Discussion.load(repo / LEDGER, root=repo).identity
    git(repo, "mv", DOC, NEW_DOC)
    blocked = commit(repo)
    assert blocked.returncode == 1
    assert subprocess.run(["bash", "-c", hint(blocked.out)], cwd=repo).returncode == 0
    assert commit(repo).returncode == 0
    d = Discussion.load(repo / NEW_LEDGER, root=repo)
    assert d.identity == identity and d.source == NEW_DOC
    assert d.state.forged == [] and d.state.unfounded == []
    assert d.consensus_result.outcome == "READY"
    assert check(repo).returncode == 0
    assert check(repo, "--from-ref", before).returncode == 0
    (repo / NEW_DOC).write_text((repo / NEW_DOC).read_text() + "\nWith WAL mode.\n")
    script(fake_llm, ("READY", "READY", "READY"), "after the move")
    git(repo, "add", NEW_DOC)
    assert commit(repo).returncode == 1
    git(repo, "add", NEW_LEDGER)
    assert commit(repo).returncode == 0
    d = Discussion.load(repo / NEW_LEDGER, root=repo)
    assert all(c.provenance[BOUND] == identity for c in d.comments if c.origin == "ai")
    assert check(repo, "--from-ref", before).returncode == 0


# ---- the stamps' own rules, on ledgers written through the Python API -------------------------

def reviewed(tmp_path: Path, name: str, doc: str) -> Discussion:
    """A ledger for ``doc`` that recorded its revision and got AI-Security's READY."""
    d = Discussion.create(f"ADR {name}", "adr", path=tmp_path / f"{name}.discussion.md",
                          source=doc, root=tmp_path, created="2026-01-02T03:04:05Z")
    record_revision(d, doc, b"# Use SQLite\n")
    d.add_comment("AI-Security", "Fine.", "READY", provenance={
        "model": "m", "revision": d.state.source_revision, "seen": "all"})
    d.save()
    return d


def test_events_copied_from_another_ledger_are_not_believed(tmp_path):
    a = reviewed(tmp_path, "a", "docs/a.md")
    record_revision(a, "docs/a.md", b"# Use SQLite, changed\n")  # a revision and its reset
    a.save()
    b = reviewed(tmp_path, "b", "docs/b.md")
    events = [ln for ln in a.text.split("\n") if ln.startswith(("<!-- SOURCE-REVISION",
                                                                 "<!-- VOTE-RESET"))][-2:]
    copied = Discussion.from_text(b.text + "\n" + "\n".join(events) + "\n", b.path,
                                  root=tmp_path)
    s = copied.state
    assert [(u.kind, u.reason) for u in s.unfounded] == [(SOURCE_REVISION, FOREIGN),
                                                        (VOTE_RESET, FOREIGN)]
    assert copied.votes == {"AI-Security": "READY"}  # no reset: the revision is b's own


def test_a_stamp_from_before_stamps_named_their_ledger_counts_until_one_does(tmp_path):
    """An unbound stamp (written by an earlier cascade) still counts -- but not after the
    first stamp in the ledger that names it: cascade writes none unbound there since."""
    d = reviewed(tmp_path, "a", "docs/a.md")
    old = render_comment("AI-Architect", "Fine too.", "READY", provenance={
        "model": "m", "revision": d.state.source_revision, "seen": "all"})
    assert BOUND not in parse(old).comments[0].provenance
    head_, rest = d.text.split("\n<!-- SOURCE-REVISION", 1)
    before = Discussion.from_text(head_ + "\n" + old + "\n<!-- SOURCE-REVISION" + rest, d.path,
                                  root=tmp_path)  # a ledger from before: the stamp first
    assert before.state.forged == []
    after = Discussion.from_text(d.text + "\n" + old, d.path, root=tmp_path)
    (forged,) = after.state.forged
    assert forged.author == "AI-Architect" and "names no ledger" in forged.reason
    assert "AI-Architect" not in after.votes


def test_the_identity_is_the_headers(tmp_path):
    """What the stamps name is read from the header alone: the same for the ledger read
    anywhere (a move), another for another document's ledger."""
    a = reviewed(tmp_path, "a", "docs/a.md")
    moved = Discussion.from_text(a.text, tmp_path / "elsewhere.discussion.md", root=tmp_path)
    assert moved.identity == a.identity == ledger_id(parse(a.text).header)
    assert moved.state.forged == [] and moved.votes == {"AI-Security": "READY"}
    (event,) = a.events  # its SOURCE-REVISION: the ledger named in the stamp, not the value
    assert bound_to(event) == a.identity and event.stamp.startswith(f"{BOUND}={a.identity} n=")
    assert BOUND not in event.value and BOUND not in event.fields
    b = reviewed(tmp_path, "b", "docs/b.md")
    assert b.identity != a.identity


def test_a_decision_copied_from_another_ledger_is_not_in_force(tmp_path):
    """A person's decision (cascade decide's block) decides in the ledger it was written for
    only: copied into another document's ledger at the same text, it is shown and named."""
    a = reviewed(tmp_path, "a", "docs/a.md")
    a.add_comment("Carol", "**Decision: READY** -- Carol decides.\n\nShip it.", None,
                  provenance={"vote": "READY", "revision": a.state.source_revision,
                              "by": "Carol <carol@example.com>"}, origin="decision")
    assert a.state.decision is not None and a.consensus_result.outcome == "READY"
    b = reviewed(tmp_path, "b", "docs/b.md")
    assert b.state.source_revision == a.state.source_revision  # the same text
    block = a.text[a.text.rindex("\n---\nName: Carol") + 1:]
    copied = Discussion.from_text(b.text + "\n" + block, b.path, root=tmp_path)
    s = copied.state
    assert s.decision is None and not copied.consensus_result.reached
    (decision,) = s.decisions
    assert decision.note == FOREIGN
    assert [(f.author, f.reason) for f in s.forged] == [("Carol", FOREIGN)]
