"""The blob ids a history walk will check, computed ahead on worker threads.

Proving an append hashes the first bytes of a later version (``appendonly.extends``): over a
long history that is most of a check's work (5,000 commits of five ledgers: about 1 GB
hashed). hashlib lets go of the interpreter lock while it hashes, so worker threads hash
while the walk reads and parses. As soon as a version is read whole (an anchor), the prefixes
its chain of earlier versions will be asked for are queued, newest first, the order the walk
asks for them. A hash computed ahead is used only for the very anchor and size it was
computed from; anything else is hashed when asked, as before.
"""
from __future__ import annotations

from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor

from cascade.check.appendonly import object_id
from cascade.check.versions import Anchor

WORKERS = 2
MINIMUM = 64  # appends below which a walk hashes as it goes (threads cost more than they save)


class Ahead:
    """``appends``: (new version, old version) of each append step, in the walk's order;
    ``sizes``: the old versions' sizes."""

    def __init__(self, appends: Iterable[tuple[str, str]], sizes: dict[str, int]) -> None:
        self._old_of = dict(appends)  # the latest step's old version of each new version
        self._sizes = sizes
        self._pool = ThreadPoolExecutor(WORKERS) if len(self._old_of) >= MINIMUM else None
        self._queued: dict[str, tuple[Anchor, int, Future[str]]] = {}  # old version -> hash
        self._of_anchor: dict[int, list[str]] = {}  # id(anchor) -> the versions queued from it

    def __enter__(self) -> Ahead:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)

    def queue(self, anchor: Anchor) -> None:
        """Queue the hashes of the versions that should begin ``anchor`` (once per anchor)."""
        if self._pool is None or id(anchor) in self._of_anchor:
            return
        queued = self._of_anchor[id(anchor)] = []
        view = memoryview(anchor.data)
        blob, size = anchor.blob, len(view)
        while (old := self._old_of.get(blob)) is not None and old not in self._queued:
            n = self._sizes.get(old)
            if n is None or n > size:
                break
            self._queued[old] = (anchor, n, self._pool.submit(object_id, view[:n], old))
            queued.append(old)
            blob, size = old, n

    def blob_id(self, anchor: Anchor, old: str, size: int) -> str | None:
        """The blob id of ``anchor``'s first ``size`` bytes, if it was queued for ``old``."""
        hit = self._queued.pop(old, None)
        if hit is None or hit[0] is not anchor or hit[1] != size:
            return None
        return hit[2].result()

    def forget(self, anchor: Anchor) -> None:
        """The walk is done with ``anchor``: drop what is still queued from it."""
        for old in self._of_anchor.pop(id(anchor), ()):
            hit = self._queued.get(old)
            if hit is not None and hit[0] is anchor:
                hit[2].cancel()
                del self._queued[old]
