"""One ledger a commit involves, as the hook's gate carries it from discovery to its
verdict (cascade.loop.gate)."""
from __future__ import annotations

from dataclasses import dataclass, field

from cascade.config.rules import Rule
from cascade.protocol.authority import Authority
from cascade.protocol.discussion import Discussion


@dataclass
class Item:
    """One involved ledger."""

    ledger: str  # repository-relative
    doc: str | None
    rule: Rule | None
    authority: Authority | None = None
    doc_blob: str | None = None  # the document's blob in the index git is using
    doc_data: bytes | None = None
    created: bool = False
    appended: int = 0  # blocks and events appended this run
    discussion: Discussion | None = None
    problems: list[str] = field(default_factory=list)  # found before any call: block, no call
    failures: list[str] = field(default_factory=list)  # personas that failed, and why
    verdict: str = ""
    passed: bool = False
    waiting: str | None = None  # a step protocol's open decision point (its question)
    carried: str = ""  # the revision recorded holds an earlier review: why (revisions.KINDS)
    replies: int = 0  # replies appended this run
    closed: object = None  # closing.Closed: the outcome recorded in this run
    also_add: list[str] = field(default_factory=list)  # files this run changed besides the ledger
    renamed_from: str | None = None  # the document's path at HEAD, when this commit renames it
    move_to: str | None = None  # where the ledger belongs now (it is still at ``ledger``)
    staged: bool = False  # the ledger (and whatever else this run wrote) is staged
    ledger_staged: bool = False  # the ledger is staged, even if some other file is not
    staged_paths: list[str] = field(default_factory=list)  # what the hook staged this run
