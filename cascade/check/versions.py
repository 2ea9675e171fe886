"""The versions of ledgers a history walk proves, read without reading every one whole.

Reading each version of a ledger that only grows would cost the sum of their sizes --
quadratic in the history's length -- and so would parsing each. The walk goes from the newest
commit back (history.py): a version is read whole (an *anchor*) only when no later version
holds it; each earlier version is proved to be the first bytes of a later one and is read
from there (docs/ci.md, *Speed*).

An anchor is kept only while a step still to be walked may need it; then ``scan`` reads it
once, answering what the walk asked about its versions (whether an append changed what the
old text says, whether each parent of a merge ends clean, a deleted ledger's ``Source:``).
Memory holds the anchors alive at once: in a linear history, one per ledger.
"""
from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterator

from msgspec import Struct, field

from cascade.check.gittree import Blobs
from cascade.base.gitio import BlobReader
from cascade.ledger.meaning import changed_by_append
from cascade.ledger.parse import Reader

MEANING, MERGE, SOURCE = "meaning", "merge", "source"  # what a step asks of its anchor


class Anchor(Struct, eq=False):
    """A version read whole, and what the walk asks about the versions that begin it."""

    blob: str
    data: bytes
    expiry: int  # the earliest step of the walk that may still read from it
    views: list[str] = field(default_factory=list)  # the versions read from it
    # (MEANING, step, old size, new size) | (MERGE, step, [each parent's size], merged size)
    # | (SOURCE, step, size)
    asks: list[tuple] = field(default_factory=list)
    gone: bool = False


class Versions:
    """Where each version the walk has met can be read: the anchor it begins, and its size.
    ``first_use``: for each version, the earliest step that reads it (as its new version, a
    merge's result, or a deleted ledger) -- how long an anchor holding it must be kept."""

    def __init__(self, reader: BlobReader, blobs: Blobs, first_use: dict[str, int]) -> None:
        self._reader = reader
        self._blobs = blobs
        self._first_use = first_use
        self._where: dict[str, tuple[Anchor, int]] = {}
        self._alive: list[tuple[int, int, Anchor]] = []  # (-expiry, order, anchor)
        self._order = itertools.count()

    def read(self, blob: str, step: int) -> tuple[Anchor, memoryview]:
        """A version's bytes, and the anchor they are in: read whole now unless a later
        version already proved to hold them."""
        found = self._where.get(blob)
        if found is None:
            data = self._blobs.peek(blob)  # the to-ref's ledgers are read already
            if data is None:
                data = self._reader.read(blob)
            anchor = Anchor(blob, data, step)
            heapq.heappush(self._alive, (-step, next(self._order), anchor))
            self.prove(blob, anchor, len(data))
            found = self._where[blob]
        anchor, size = found
        return anchor, memoryview(anchor.data)[:size]

    def prove(self, blob: str, anchor: Anchor, size: int) -> None:
        """``blob`` is proved to be the first ``size`` bytes of ``anchor``."""
        if blob in self._where:
            return
        self._where[blob] = (anchor, size)
        anchor.views.append(blob)
        first = self._first_use.get(blob)
        if first is not None and first < anchor.expiry:
            anchor.expiry = first
            heapq.heappush(self._alive, (-first, next(self._order), anchor))

    def holds(self, blob: str, anchor: Anchor) -> bool:
        """Whether ``blob`` is proved to begin ``anchor``."""
        found = self._where.get(blob)
        return found is not None and found[0] is anchor

    def expired(self, step: int) -> Iterator[Anchor]:
        """The anchors no step up to ``step`` reads (all of them, for -1); the versions they
        held are forgotten (read again if a step should need one after all)."""
        while self._alive and -self._alive[0][0] > step:
            expiry, _, anchor = heapq.heappop(self._alive)
            if anchor.gone or -expiry != anchor.expiry:
                continue  # kept longer since, or released already
            anchor.gone = True
            for blob in anchor.views:
                if self._where.get(blob, (None, 0))[0] is anchor:
                    del self._where[blob]
            yield anchor


def scan(data: bytes, asks: list[tuple]) -> dict[tuple[str, int], object]:
    """Answer the asks about the versions that begin ``data``, reading it once and only as
    far as they need: {(what, step): answer}. MEANING: (line, what) when the append changed
    what the old text says (``changed_by_append``), else None. MERGE: whether every parent
    ends clean -- no entry of it is still open, so it cannot read differently as part of the
    merged text. SOURCE: the header's ``Source:``."""
    todo: list[tuple[int, int, int, str, tuple]] = []  # (offset, phase, order, what, ask)
    order = itertools.count()
    for ask in asks:
        if ask[0] == MERGE:
            for size in ask[2]:
                todo.append((size, 0, next(order), MERGE, ask))
        else:
            todo.append((ask[2], 0, next(order), ask[0], ask))
    heapq.heapify(todo)
    reader = Reader(details=False)
    answers: dict[tuple[str, int], object] = {}
    before: dict[int, tuple[int, object]] = {}  # step -> (entries read, the old text's ledger)
    pos = 0  # bytes read
    entries_until = -1  # entries are needed up to here (an open old text's new version)
    while todo:
        offset, phase, _, what, ask = heapq.heappop(todo)
        whole = data.rfind(b"\n", pos, offset) + 1
        if whole > pos:
            text = data[pos:whole].decode("utf-8", "replace")
            if entries_until > pos:
                reader.feed(text)
            else:
                reader.skip(text)
            pos = whole
        tail = data[pos:offset].decode("utf-8", "replace")  # the last line, unfinished
        step = ask[1]
        k = len(reader.entries)
        if what == MEANING and phase == 0:
            old = reader.ledger(tail, start=k)
            if old.entries or old.header_open:
                before[step] = (k, old)
                heapq.heappush(todo, (ask[3], 1, next(order), MEANING, ask))
                entries_until = max(entries_until, ask[3])
            else:
                answers[(MEANING, step)] = None  # sealed: nothing appended can change it
        elif what == MEANING:
            k, old = before.pop(step)
            answers[(MEANING, step)] = changed_by_append(old, reader.ledger(tail, start=k))
        elif what == MERGE:
            clean = not reader.ledger(tail, start=k).entries
            answers[(MERGE, step)] = answers.get((MERGE, step), True) and clean
        else:
            answers[(SOURCE, step)] = reader.ledger(tail, start=k).header.source
    return answers
