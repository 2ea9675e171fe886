"""A ledger's text read once, and read on as it grows: what ``Discussion`` appends is parsed
alone, after what was read, and the ledger is what ``parse`` reads from the whole text."""
from __future__ import annotations

from typing import Any

from cascade.ledger.records import Ledger
from cascade.ledger.parse import Reader


class Growing:
    """``parse(text)``, kept: ``extend`` it with the text appended, ``ledger`` is the whole."""

    def __init__(self, text: str, *, details: bool = True) -> None:
        self._reader = Reader(details=details)
        whole = text[: text.rfind("\n") + 1]
        self._tail = text[len(whole):]  # a last line without its newline: read when it has one
        self._reader.feed(whole)
        self.ledger: Ledger = self._reader.ledger(self._tail)

    def extend(self, text: str) -> Ledger:
        """Read ``text``, appended to the text read: whole lines (with a last line that had no
        newline, they make whole lines)."""
        if not text.endswith("\n"):
            raise ValueError("Growing.extend takes whole lines")
        self._reader.feed(self._tail + text)
        self._tail = ""
        self.ledger = self._reader.ledger()
        return self.ledger

    def copy(self) -> Growing:
        """Another one where this one is, extended apart from it (its entries are the same
        objects)."""
        other = Growing.__new__(Growing)
        other._reader, other._tail, other.ledger = self._reader.copy(), self._tail, self.ledger
        return other


def continues(entries: list[Any], taken: int, last: Any) -> bool:
    """Whether ``entries`` begin with the ``taken`` entries that ended with ``last`` (the
    ledger read on after appends: the entries read before are the same objects)."""
    return taken <= len(entries) and (taken == 0 or entries[taken - 1] is last)
