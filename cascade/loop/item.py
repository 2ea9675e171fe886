"""One ledger a commit involves, as the hook's gate carries it from discovery to its verdict
(cascade.loop.gate): immutable records, each step returning the item it made
(``msgspec.structs.replace``).
"""
from __future__ import annotations

from msgspec import Struct, field

from cascade.config.rules import Rule
from cascade.loop.closing import Closed
from cascade.protocol.authority import Authority
from cascade.protocol.discussion import Discussion


class Ran(Struct, frozen=True):
    """What this run did to the ledger: prepared it, ran its turns, recorded its outcome."""

    discussion: Discussion | None = None  # the ledger as prepared (None: not reached)
    created: bool = False
    appended: int = 0  # blocks and events appended this run
    replies: int = 0  # replies appended this run
    carried: str = ""  # the revision recorded holds an earlier review: why (revisions.KINDS)
    waiting: str | None = None  # a step protocol's open decision point (its question)
    failures: tuple[str, ...] = ()  # personas that failed, and why
    closed: Closed | None = None  # the outcome recorded in this run
    also_add: tuple[str, ...] = ()  # files this run changed besides the ledger (once staged:
    # only those the person still has to stage)


class Staged(Struct, frozen=True):
    """What the hook staged of what it wrote."""

    paths: tuple[str, ...] = ()
    ledger: bool = False  # the ledger is staged, even if some other file is not
    whole: bool = False  # the ledger and whatever else this run wrote


class HookVerdict(Struct, frozen=True):
    text: str = ""
    passed: bool = False
    notes: tuple[str, ...] = ()  # a passing review's open items, for its author to read


class Item(Struct, frozen=True):
    """One involved ledger."""

    ledger: str  # repository-relative
    doc: str | None
    rule: Rule | None
    authority: Authority | None = None
    doc_blob: str | None = None  # the document's blob in the index git is using
    doc_data: bytes | None = None
    problems: tuple[str, ...] = ()  # found before any call: block, no call
    renamed_from: str | None = None  # the document's path at HEAD, when this commit renames it
    move_to: str | None = None  # where the ledger belongs now (it is still at ``ledger``)
    ran: Ran = field(default_factory=Ran)
    staged: Staged = field(default_factory=Staged)
    verdict: HookVerdict = field(default_factory=HookVerdict)
