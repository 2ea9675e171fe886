"""The tool's stamp on the blocks and events it writes, bound to their content (docs/trust.md).

A block the tool writes for a persona (``<!-- cascade:ai ... -->``) or a person's decision
(``<!-- cascade:decision ... -->``) carries ``sig=``, a SHA-256 digest of what the parser reads
back from it (kind, author, vote, markdown, the stamp's other fields); an event, a digest of
its kind and everything before ``sig=``. Edited, copied onto another block, or written by hand
under a persona's name, it does not verify. A nonce (``n=``) makes everything the tool writes
unique: a stamp seen a second time is a copy (``Replays``). ``ledger=`` names the ledger it
was written for (``ledger_id``, from the header, which never changes): a copy in another
ledger counts only in its own. Stamps from before stamps named their ledger count up to the
first stamp that names it (``Binding``).

Integrity, not authentication: the digest has no secret, so a deliberate forgery can compute
it; the guard against that is review of the ledgers (CODEOWNERS on ledgers and rule files).
"""
from __future__ import annotations

import hashlib
import re
import secrets

from cascade.ledger.records import Comment, Event, Header

SIG = "sig"
NONCE = "n"
LEDGER = "ledger"  # the identity of the ledger a stamp was written for (ledger_id)
VERSION = "1"
FOREIGN = "copied from another ledger: its stamp names the ledger it was written for"
_EVENT_STAMP = re.compile(r"(?:ledger=([0-9a-f]+)[ \t]+)?n=([0-9a-f]+)[ \t]+sig=([0-9a-f]{64})")


def nonce() -> str:
    """A fresh value for ``n=``: what makes each stamped block and event unique."""
    return secrets.token_hex(6)


def ledger_id(header: Header) -> str:
    """The identity of the ledger whose header is ``header``, as its stamps name it
    (``ledger=``): a digest of its document (``Source:``), title and creation time."""
    payload = f"cascade-ledger/1\n{header.source or ''}\n{header.title}\n{header.created or ''}"
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def bound_to(entry: Comment | Event) -> str | None:
    """The ledger an entry's stamp names (``ledger=``); None: none (or no stamp)."""
    if isinstance(entry, Event):
        m = _EVENT_STAMP.fullmatch(entry.stamp)
        return m.group(1) if m else None
    return entry.provenance.get(LEDGER) if entry.origin else None


def digest(comment: Comment) -> str:
    fields = "".join(f"{k}={v}\n" for k, v in sorted(comment.provenance.items()) if k != SIG)
    payload = (f"cascade-block/{VERSION}\n{comment.origin}\n{comment.author}\n{comment.vote}\n"
               f"{fields}\n{comment.body}")
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()


def verify(comment: Comment, ledger: str | None = None) -> str | None:
    """None when the block carries the tool's valid stamp; otherwise why it does not.
    ``ledger``: the identity of the ledger the block is read in (``ledger_id``): a stamp that
    names another does not count here. None: any ledger's (the digest alone)."""
    if comment.stamps == 0 or comment.origin is None:
        return "no stamp: written by hand, not by cascade"
    if comment.stamps > 1:
        return "more than one stamp line"
    sig = comment.provenance.get(SIG)
    if not sig:
        return "stamp without a digest (written by an older cascade, or by hand)"
    if sig != digest(comment):
        return "edited after cascade wrote it (its digest does not match)"
    return _foreign(comment, ledger)


def _foreign(entry: Comment | Event, ledger: str | None) -> str | None:
    if ledger is None:  # any ledger's: the digest alone (no stamp field read)
        return None
    named = bound_to(entry)
    return FOREIGN if named is not None and named != ledger else None


def event_digest(kind: str, unsigned: str) -> str:
    payload = f"cascade-event/{VERSION}\n{kind}\n{unsigned}"
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()


def verify_event(event: Event, ledger: str | None = None) -> str | None:
    """None when the event carries the tool's valid stamp; otherwise why it does not.
    ``ledger``: as ``verify``'s."""
    m = _EVENT_STAMP.fullmatch(event.stamp)
    if m is None:
        return "no stamp: written by hand, not by cascade"
    stamp = [f"{LEDGER}={m.group(1)}"] if m.group(1) else []
    stamp.append(f"{NONCE}={m.group(2)}")  # the digest covers the stamp's fields before sig=
    unsigned = " ".join([event.value, *stamp] if event.value else stamp)
    if m.group(3) != event_digest(event.kind, unsigned):
        return "edited after cascade wrote it (its digest does not match)"
    return _foreign(event, ledger)


def sig_of(entry: Comment | Event) -> str | None:
    """The digest an entry carries (None: none), whether or not it verifies."""
    if isinstance(entry, Event):
        m = _EVENT_STAMP.fullmatch(entry.stamp)
        return m.group(3) if m else None
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


class Binding:
    """The stamps of one ledger, in ledger order: whether each is this ledger's. A stamp that
    names another ledger is a copy from it; one that names none was written before stamps
    named their ledger, and counts only before the first stamp that names this one (from
    there on, cascade writes none here without it: an unnamed stamp after it is a copy)."""

    def __init__(self, identity: str) -> None:
        self.identity = identity
        self.since = 0  # the line of the first stamp that names this ledger (0: none yet)
        self.refused: dict[int, str] = {}  # line -> why a stamp that verifies is not its

    def check(self, entry: Comment | Event) -> str | None:
        """Why ``entry``'s stamp does not count in this ledger (None: it does): it does not
        verify, or it is another ledger's (a copy: ``refused`` keeps those)."""
        problem = verify_event(entry) if isinstance(entry, Event) else verify(entry)
        if problem is None:
            problem = self.problem(entry)
            if problem:
                self.refused[entry.line] = problem
        return problem

    def problem(self, entry: Comment | Event) -> str | None:
        """Why ``entry``, whose stamp verifies, is not this ledger's (None: it is)."""
        named = bound_to(entry)
        if named is None:
            if self.since and entry.line > self.since:
                return (f"its stamp names no ledger, but this ledger's stamps name it from "
                        f"line {self.since} on: a copy of a stamp from before stamps named "
                        "their ledger")
            return None
        if named != self.identity:
            return FOREIGN
        self.since = self.since or entry.line
        return None
