"""One ledger's file: its text as read, what is appended to it, and the save that writes it.

The file only ever grows. ``save()`` writes atomically and refuses to write if the file on
disk was rewritten meanwhile. An append is read alone, after the text read before it
(cascade.ledger.growing): appending costs what is appended, not what the ledger holds. The
ledger's state and configuration are not the file's: cascade.protocol.discussion adds them.
"""
from __future__ import annotations

import os
from pathlib import Path

from cascade.base.atomic import atomic_write
from cascade.base.errors import CascadeError
from cascade.base.safepath import check_local, open_nofollow
from cascade.config.yamlio import decode_utf8, read_bytes
from cascade.ledger.growing import Growing
from cascade.ledger.records import Ledger


class LedgerFile:
    """A ledger's text: its base (as read from the file, or as saved to it) and the appends
    since, each read once. ``exists`` False: a ledger created, not saved yet."""

    def __init__(self, path: str | os.PathLike[str], text: str, *, raw: bytes | None = None,
                 details: bool = True, exists: bool = True) -> None:
        self.path = Path(path)
        self.exists = exists
        self._base = text
        self._raw = raw if raw is not None else text.encode("utf-8")
        self._pending: list[str] = []
        self._details = details  # False: no markers or mentions (votes and consensus only)
        # The text read: the base's (as read or saved), and base and appends (a copy of the
        # base's, extended by each append): an append is read alone, after what was read.
        self._base_read: Growing | None = None
        self._read: Growing | None = None

    @classmethod
    def read(cls, path: str | os.PathLike[str]) -> LedgerFile:
        """The ledger at ``path``, as it is on disk (never read through a link)."""
        p = Path(path)
        raw = read_bytes(lambda q: open_nofollow(q, what="the ledger"), p, "discussion file")
        return cls(p, decode_utf8(raw, p), raw=raw)

    def copy(self) -> LedgerFile:
        """Another file whose base is this one's text, appends included, read as this one
        was (not read again)."""
        other = LedgerFile(self.path, self.text, details=self._details, exists=self.exists)
        other._base_read = self._reading().copy()
        return other

    @property
    def text(self) -> str:
        """The ledger's full text, including appends not yet saved."""
        return self._base + self.pending_text

    @property
    def pending_text(self) -> str:
        """What save() would append."""
        return self._lead() + "\n".join(self._pending) if self._pending else ""

    @property
    def ledger(self) -> Ledger:
        """The text read, base and appends. A new ``Ledger`` each time the text changes; the
        entries read before an append are the same objects after it."""
        return self._reading().ledger

    def _reading(self) -> Growing:
        if self._read is None:
            self._read = self._base_reading().copy()
            if self._pending:
                self._read.extend(self.pending_text)
        return self._read

    def _base_reading(self) -> Growing:
        if self._base_read is None:
            self._base_read = Growing(self._base, details=self._details)
        return self._base_read

    # ---- appending ------------------------------------------------------------------------

    def append(self, chunk: str) -> None:
        """Append ``chunk`` (whole lines: a comment block, an event line), read after what
        was read. Nothing is appended after a code fence left open."""
        base = self._base_reading().ledger
        fence = base.open_fence
        if fence:  # whatever is appended would land inside it and change an earlier comment
            raise CascadeError(f"unclosed code fence {fence} (opened here): close it before "
                               "anything is appended", self.path,
                               base.open_fence_line or None)
        piece = ("\n" if self._pending else self._lead()) + chunk
        self._pending.append(chunk)
        if self._read is not None:  # read what is appended, after what was read
            self._read.extend(piece)

    def discard(self, last: int | None = None) -> None:
        """Forget the ``last`` appends (None: all since the last save, a write that failed):
        the file is as it was, and the next save writes only what comes after."""
        del self._pending[0 if last is None else max(0, len(self._pending) - last):]
        self._read = None  # read again from the base's

    def _lead(self) -> str:
        """What goes between the base and the first append: the base's last line ended, an
        open block closed, a blank line."""
        base = self._base
        lead = "\n" if base and not base.endswith("\n") else ""
        if self._base_reading().ledger.open_block:
            lead += "---\n"
        if base and not (base[-2:] + lead).endswith("\n\n"):
            lead += "\n"
        return lead

    # ---- saving ---------------------------------------------------------------------------

    def save(self) -> Path:
        """Write the appended text atomically. Earlier text is never changed."""
        if not self._pending and self.exists:
            return self.path
        check_local(self.path, "the ledger")  # never written through a link, nor replacing one
        if not self.exists:
            if self.path.exists():
                raise CascadeError("already exists; not overwriting", self.path)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            data = self._encode(self.text)
            atomic_write(self.path, data, None)
        else:
            self._catch_up("; not writing")  # someone appended meanwhile: append after them
            data = self._raw + self._encode(self.pending_text)
            atomic_write(self.path, data, self.path.stat().st_mode)
        self._raw = data
        self._base = decode_utf8(data, self.path)
        if self._read is not None:  # what was read is the base now: it is not read again
            self._base_read, self._read = self._read, None
        else:
            self._base_read = None
        self._pending = []
        self.exists = True
        return self.path

    def refresh(self) -> None:
        """Read what was appended to the file since it was read (another writer's blocks);
        appends not saved yet stay, after it. A file removed or rewritten meanwhile is an
        error."""
        if self.exists:
            self._catch_up()

    def _catch_up(self, doing: str = "") -> None:
        try:
            current = open_nofollow(self.path, "the ledger")
        except FileNotFoundError:
            raise CascadeError(f"was removed since it was read{doing}", self.path) from None
        if not current.startswith(self._raw):
            raise CascadeError(f"was rewritten since it was read{doing}", self.path,
                               exit_code=1)
        if current != self._raw:
            self._raw = current
            self._base = decode_utf8(current, self.path)
            self._base_read = self._read = None  # read it again

    def _encode(self, text: str) -> bytes:
        if self._base_reading().ledger.newline == "\r\n":
            text = text.replace("\r\n", "\n").replace("\n", "\r\n")
        return text.encode("utf-8")
