"""Tampering by appending, as a committer who does not compute stamps would try it: a ledger
whose panel rejects the current revision (round 2: AI-Security REJECT), and every kind of
text that can be appended to it -- copies of the tool's own blocks and events, events and
persona blocks written by hand, stamps moved onto other blocks, people's votes. Used by
tests/test_tamper.py (a few hundred cases per run) and bench/tamper.py (20,000).

``verdict(chunks)`` is the gate's verdict on the ledger with ``chunks`` appended, through the
same ``derive`` the hook, ``check`` and ``status`` use.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from cascade.ledger.consensus import VotingConfig
from cascade.ledger.records import Comment
from cascade.protocol.authority import Authority
from cascade.protocol.state import State, block_id
from cascade.protocol.discussion import Discussion
from cascade.protocol.revisions import record_revision
from cascade.protocol.setting import setting_of
from cascade.protocol.verdict import gate
from cascade.base.revision import blob_id

DOC = "docs/adr/0001-use-sqlite.md"
PANEL = (("architect", "AI-Architect"), ("security", "AI-Security"),
         ("pragmatist", "AI-Pragmatist"))
TEXT_A = b"# Use SQLite\n\nWe will store events in SQLite.\n"
TEXT_B = b"# Use SQLite\n\nWe will store events in SQLite, with WAL.\n"
AUTHORITY = Authority(tuple(a for a, _ in PANEL), "review", VotingConfig(),
                      rule="rule 'adr' (.ai-rules.yml:2)")


@dataclass
class Base:
    """The rejected ledger, and the pieces of it an attacker can copy."""

    root: Path
    path: Path
    text: str
    entries: list[str]  # each entry's text, exactly as in the ledger (blocks with delimiters)
    stamps: list[str]  # each stamp line of a block
    ids: list[str]  # block_id of every block (what a VOTE-RESET keep= names)
    blob: str  # the current revision (TEXT_B)


def build(root: Path) -> Base:
    """Round 1 (all CHANGES, a person asks for WAL), round 2 (Architect and Pragmatist READY,
    Security REJECT), written through the tool's own API as the hook writes it."""
    path = root / "docs/adr/discussions/0001-use-sqlite.discussion.md"
    d = Discussion.create("Use SQLite", "adr", path=path, source=DOC,
                          participants=[a for a, _ in PANEL], protocol="review", root=root,
                          created="2026-11-25T00:00:00Z")
    record_revision(d, DOC, TEXT_A)
    for alias, name in PANEL:
        d.add_comment(name, f"{name}: round one.", "CHANGES", untrusted=True,
                      provenance={"model": "m", "revision": blob_id(TEXT_A), "seen": "all"})
    d.add_comment("Rob Author", "Added WAL mode.", "READY")
    record_revision(d, DOC, TEXT_B)
    for (alias, name), vote in zip(PANEL, ("READY", "REJECT", "READY")):
        d.add_comment(name, f"{name}: round two.", vote, untrusted=True,
                      provenance={"model": "m", "revision": blob_id(TEXT_B), "seen": "all"})
    d = Discussion(path, d.text, setting_of(root), authority=AUTHORITY)
    lines = d.text.split("\n")
    entries, stamps, ids = [], [], []
    for entry in d.ledger.entries:
        if isinstance(entry, Comment):
            entries.append("\n".join(lines[entry.line - 2:entry.end_line + 1]) + "\n")
            stamps += [ln for ln in lines[entry.line - 1:entry.end_line] if "cascade:" in ln]
            ids.append(block_id(entry))
        else:
            entries.append(lines[entry.line - 1] + "\n")
    return Base(root, path, d.text, entries, stamps, ids, blob_id(TEXT_B))


def chunks(base: Base, rng: random.Random) -> list[str]:
    """One attack: a few appended pieces, each a copy, a hand-written event or block, a moved
    stamp, or a person's vote."""
    def copy() -> str:
        return rng.choice(base.entries)

    def event() -> str:
        keep = ",".join(rng.sample(base.ids, rng.randint(1, len(base.ids))))
        blob = rng.choice([base.blob, blob_id(TEXT_A), "0" * 40])
        return rng.choice([
            "<!-- VOTE-RESET: the document changed -->",
            f"<!-- VOTE-RESET: clarified keep={keep} -->",
            "<!-- PHASE-TRANSITION: review → review -->",
            "<!-- PHASE-TRANSITION: review -> review trigger=consensus -->",
            "<!-- OUTCOME: READY -->",
            f"<!-- SOURCE-REVISION: {blob} path={DOC} -->",
            f"<!-- SOURCE-REVISION: {blob} path={DOC} same-as={blob_id(TEXT_A)} -->",
            "<!-- SETTINGS: participants=architect consensus=threshold_ready=0.01 -->",
            "<!-- ROUND: 2 -->",
            f"<!-- FAILURE: AI-Architect alias=architect revision={base.blob} reason=x -->",
            "<!-- NEXT: synthesize step=next round=1 auto=true -->",
        ]) + "\n"

    def forged() -> str:
        name = rng.choice([n for _, n in PANEL] + ["ai-security", "AI-Security "])
        stamp = rng.choice(["", rng.choice(base.stamps) + "\n"])
        return f"---\nName: {name}\n{stamp}\nOn reflection, fine.\n\nVOTE: READY\n---\n"

    def person() -> str:
        vote = rng.choice(["READY", "READY", "CHANGES"])
        return f"---\nName: {rng.choice(['Rob Author', 'Mallory'])}\n\nFine.\n\nVOTE: {vote}\n---\n"

    def decision() -> str:
        stamp = rng.choice(base.stamps)
        return (f"---\nName: Mallory\n{stamp}\n\n**Decision: READY** -- Mallory decides.\n\n"
                "Because.\n---\n")

    makers = [copy, copy, copy, event, event, forged, person, decision]
    return [rng.choice(makers)() for _ in range(rng.randint(1, 8))]


def verdict(base: Base, pieces: list[str]) -> tuple[bool, State]:
    """(the gate lets the current revision through, the derived state) with ``pieces``
    appended."""
    text = base.text + "".join("\n" + p for p in pieces)
    d = Discussion(base.path, text, setting_of(base.root), authority=AUTHORITY)
    state = d.state
    return gate(state, base.blob, DOC).ok, state
