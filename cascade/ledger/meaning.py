"""What an append must not change: the entries (authors, votes, bodies, stamps, events) and the
header parsed from the earlier text; used by the hook on the staged ledger and by ``cascade
check`` on every commit, merge and range. A byte-prefix test alone is not enough: text
appended after a block can change how the text before it parses (it used to, when a closing
``---`` at the end of the file became a thematic break). So these compare what the parser reads.
"""
from __future__ import annotations

from cascade.ledger.records import Comment, Event, Ledger


def entry_key(entry: Comment | Event) -> tuple:
    if isinstance(entry, Comment):
        return ("comment", entry.author, entry.vote, entry.body, entry.origin,
                tuple(sorted(entry.provenance.items())), entry.stamps)
    return ("event", entry.kind, entry.value, entry.stamp)


def describe(entry: Comment | Event) -> str:
    if isinstance(entry, Comment):
        return f"{entry.author}'s comment" + (f" (VOTE: {entry.vote})" if entry.vote else "")
    return f"the {entry.kind} event"


def _header_key(ledger: Ledger) -> tuple:
    h = ledger.header
    return (h.title, h.source, h.template, h.protocol, h.phase, h.status, tuple(h.participants),
            tuple(sorted(h.consensus.items())), h.created, tuple(sorted(h.extra.items())))


def changed_by_append(old: Ledger, new: Ledger) -> tuple[int, str] | None:
    """(line in the old text, what changed) when ``new`` does not begin with exactly the
    entries of ``old``, or its header differs; None when the append kept them."""
    if old.header.line and _header_key(old) != _header_key(new):
        return old.header.line, "the header changed"
    for i, entry in enumerate(old.entries):
        if i >= len(new.entries):
            return entry.line, f"{describe(entry)} is gone"
        if entry_key(entry) != entry_key(new.entries[i]):
            return entry.line, f"{describe(entry)} reads differently after the change"
    return None


def first_lost(old: Ledger, new: Ledger, start: int = 0) -> tuple[int, str] | None:
    """(line in the old text, what) of the first of ``old``'s entries (from index ``start``)
    that ``new`` does not keep, in order; None when all survive. Used where entries may be
    interleaved with others (merges, a range as a whole)."""
    keys = [entry_key(e) for e in new.entries]
    pos = start
    for entry in old.entries[start:]:
        key = entry_key(entry)
        try:
            pos = keys.index(key, pos) + 1
        except ValueError:
            return entry.line, f"{describe(entry)} is lost"
    return None


def common_prefix(ledgers: list[Ledger]) -> int:
    """How many entries all the ledgers share at the start."""
    n = min(len(ledger.entries) for ledger in ledgers)
    for i in range(n):
        if len({entry_key(ledger.entries[i]) for ledger in ledgers}) > 1:
            return i
    return n


def merge_lost(parents: list[tuple[str, Ledger]], result: Ledger) -> tuple[int, str] | None:
    """(line in a parent, what) when a merge does not keep what its parents say: the entries
    all parents share must begin the result, and each parent's own entries must follow in
    their order (interleaved with the other parents')."""
    shared = common_prefix([ledger for _, ledger in parents])
    for i, entry in enumerate(parents[0][1].entries[:shared]):
        if i >= len(result.entries) or entry_key(entry) != entry_key(result.entries[i]):
            return entry.line, f"changes what its parents share: {describe(entry)}"
    for name, ledger in parents:
        found = first_lost(ledger, result, shared)
        if found:
            line, what = found
            return line, f"loses an entry of parent {name}: {what} (its line {line})"
    return None
