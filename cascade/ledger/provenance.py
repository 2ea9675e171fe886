"""The tool's stamp on the blocks and events it writes, bound to their content.

A block the tool writes for a persona (``<!-- cascade:ai ... -->``) or for a person's decision
(``<!-- cascade:decision ... -->``) carries ``sig=``, a SHA-256 digest of what the parser reads
back from the block: its kind, author, vote, markdown and the stamp's other fields (the model,
the reviewed revision, ...). A block that is edited after it was written, a stamp copied onto
another block, or a block written by hand under a persona's name does not verify, and does
not count.

Every event the tool writes (``<!-- VOTE-RESET: ... n=... sig=... -->``) carries the same
kind of digest, over its kind and everything before ``sig=``. Blocks and events alike carry a
nonce (``n=``), so no two things the tool writes are the same: a stamped block or event that
appears a second time is a copy (a replay of the tool's earlier words), and does not count.

This is integrity, not authentication: the digest has no secret, so a committer who means to
forge can compute it. What it catches is every edit and hand-written block made without
that intent, and it makes a forgery deliberate. The organisational guard against deliberate
forgery is review of the ledgers themselves (CODEOWNERS on ledgers and rule files).
"""
from __future__ import annotations

import hashlib
import re
import secrets

from cascade.ledger.model import Comment, Event

SIG = "sig"
NONCE = "n"
VERSION = "1"
_EVENT_STAMP = re.compile(r"n=([0-9a-f]+)[ \t]+sig=([0-9a-f]{64})")


def nonce() -> str:
    """A fresh value for ``n=``: what makes each stamped block and event unique."""
    return secrets.token_hex(6)


def digest(comment: Comment) -> str:
    fields = "".join(f"{k}={v}\n" for k, v in sorted(comment.provenance.items()) if k != SIG)
    payload = (f"cascade-block/{VERSION}\n{comment.origin}\n{comment.author}\n{comment.vote}\n"
               f"{fields}\n{comment.body}")
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()


def verify(comment: Comment) -> str | None:
    """None when the block carries the tool's valid stamp; otherwise why it does not."""
    if comment.stamps == 0 or comment.origin is None:
        return "no stamp: written by hand, not by cascade"
    if comment.stamps > 1:
        return "more than one stamp line"
    sig = comment.provenance.get(SIG)
    if not sig:
        return "stamp without a digest (written by an older cascade, or by hand)"
    if sig != digest(comment):
        return "edited after cascade wrote it (its digest does not match)"
    return None


def event_digest(kind: str, unsigned: str) -> str:
    payload = f"cascade-event/{VERSION}\n{kind}\n{unsigned}"
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()


def event_sig(event: Event) -> str | None:
    """The digest an event carries (its stamp's ``sig=``), or None."""
    m = _EVENT_STAMP.fullmatch(event.stamp)
    return m.group(2) if m else None


def verify_event(event: Event) -> str | None:
    """None when the event carries the tool's valid stamp; otherwise why it does not."""
    m = _EVENT_STAMP.fullmatch(event.stamp)
    if m is None:
        return "no stamp: written by hand, not by cascade"
    unsigned = f"{event.value} {NONCE}={m.group(1)}" if event.value else f"{NONCE}={m.group(1)}"
    if m.group(2) != event_digest(event.kind, unsigned):
        return "edited after cascade wrote it (its digest does not match)"
    return None


def sig_of(entry: Comment | Event) -> str | None:
    """The digest an entry carries (None: none), whether or not it verifies."""
    if isinstance(entry, Event):
        return event_sig(entry)
    return entry.provenance.get(SIG) if entry.origin else None


class Replays:
    """Stamped entries seen so far, by digest: a second entry with a digest already seen is a
    copy of the first (the tool never writes the same thing twice: ``n=``)."""

    def __init__(self) -> None:
        self._first: dict[str, int] = {}

    def copy_of(self, entry: Comment | Event) -> int | None:
        """The line of the entry ``entry`` copies, or None (and ``entry`` is remembered)."""
        sig = sig_of(entry)
        if not sig:
            return None
        first = self._first.setdefault(sig, entry.line)
        return first if first != entry.line else None
