"""Test helpers: persona blocks as the tool writes them (stamped, digest included).

A persona's vote counts only from a block the tool wrote for it, and an event only when the
tool wrote it. Tests that build ledgers by hand use ``stamp(text)`` to give every block under a
bundled persona's name the stamp a turn would have written (the revision it reviewed: the
ledger's last SOURCE-REVISION before it), and every event the stamp the tool gives it.
"""
from __future__ import annotations

import msgspec.structs

from cascade.config.personas import load_personas
from cascade.ledger.records import SOURCE_REVISION, Comment, Event
from cascade.ledger.parse import parse
from cascade.ledger.provenance import NONCE, SIG, digest, event_digest, nonce, verify_event
from cascade.ledger.render import format_fields

PERSONAS = load_personas(None)  # the bundled ones


def stamp_fields(revision: str | None, source: bool = True) -> dict[str, str]:
    fields = {"model": "test"}
    if revision:
        fields["revision"] = revision
    if source:
        fields["seen"] = "all"
    return fields


def stamp(text: str, personas=PERSONAS) -> str:
    """``text`` with a valid stamp inserted after the ``Name:`` line of every block under a
    persona's exact name that has none."""
    ledger = parse(text)
    lines = text.split("\n")
    revision = None
    inserts: list[tuple[int, str]] = []
    for entry in ledger.entries:
        if isinstance(entry, Event):
            if entry.kind == SOURCE_REVISION and entry.value.split():
                revision = entry.value.split()[0]
            if verify_event(entry) is not None:
                lines[entry.line - 1] = stamped_event(entry.kind, entry.value.strip())
            continue
        if entry.origin or entry.author not in personas.by_name:
            continue
        fields = {**stamp_fields(revision, bool(ledger.header.source or revision)),
                  NONCE: nonce()}
        probe = msgspec.structs.replace(entry, origin="ai", provenance=fields, stamps=1)
        line = f"<!-- cascade:ai {format_fields({**fields, SIG: digest(probe)})} -->"
        inserts.append((entry.line, line))  # after the Name: line (1-based = index)
    for index, line in reversed(inserts):
        lines.insert(index, line)
    return "\n".join(lines)


def stamped_event(kind: str, value: str) -> str:
    """The event line the tool writes for ``kind: value`` (with its nonce and digest)."""
    payload = " ".join([p for p in (value, f"{NONCE}={nonce()}") if p])
    return f"<!-- {kind}: {payload} {SIG}={event_digest(kind, payload)} -->"


def is_stamped(c: Comment) -> bool:
    return c.origin == "ai"
