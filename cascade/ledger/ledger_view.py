"""What a ledger's text says, read without a protocol: its header, comments and warnings,
its title and identity, and the markers its comments carry (cascade.ledger.items).
cascade.protocol.derived_view adds what a protocol derives from the same ledger."""
from __future__ import annotations

from typing import Any

from cascade.ledger import items
from cascade.ledger.ledger_file import LedgerFile
from cascade.ledger.provenance import ledger_id
from cascade.ledger.records import Comment, Header, Ledger


class LedgerView:
    """Queries over one ledger file's text, appends included."""

    def __init__(self, file: LedgerFile) -> None:
        self.file = file
        self.path = file.path

    @property
    def text(self) -> str:
        """The ledger's full text, including appends not yet saved."""
        return self.file.text

    @property
    def ledger(self) -> Ledger:
        return self.file.ledger

    @property
    def header(self) -> Header:
        return self.ledger.header

    @property
    def comments(self) -> list[Comment]:
        return self.ledger.comments

    @property
    def warnings(self) -> list[tuple[int, str]]:
        return self.ledger.warnings

    @property
    def title(self) -> str:
        return self.header.title or self.ledger.title_line or self.path.name.split(".")[0]

    @property
    def objective(self) -> str:
        """The larger goal the discussion serves, as its header records it (``Objective:``,
        given apart from the topic: ``cascade discuss TOPIC --objective TEXT``); "": none."""
        return " ".join(self.header.extra.get("objective", "").split())

    @property
    def identity(self) -> str:
        """What the stamps written for this ledger name (``ledger=``): its header's identity
        (cascade.ledger.provenance.ledger_id), the same for its whole life."""
        return ledger_id(self.header)

    @property
    def questions(self) -> list[dict[str, Any]]:
        return items.questions_and_answers(self.comments)[0]

    @property
    def answers(self) -> list[dict[str, Any]]:
        return items.questions_and_answers(self.comments)[1]

    @property
    def decisions(self) -> list[dict[str, Any]]:
        return items.decisions(self.comments)

    @property
    def concerns(self) -> list[dict[str, Any]]:
        return items.concerns(self.comments)

    @property
    def todos(self) -> list[dict[str, Any]]:
        return items.todos(self.comments)

    @property
    def mentions(self) -> list[dict[str, Any]]:
        return items.mentions(self.comments)
