"""``cascade list``: the governed documents below this folder, as ``adr list`` shows them --
number, title, the document's own status, where its review stands, what supersedes it -- then
the discussions that belong to no document (topics)."""
from __future__ import annotations

from pathlib import Path

from cascade.commands._common import find_ledgers
from cascade.base.docstatus import document_title, find, superseded_by
from cascade.base.errors import CascadeError, display_path
from cascade.base.gitio import git, repo_root
from cascade.check.governance import open_discussion
from cascade.config.adr_conventions import DOCUMENT_STATUSES, listed_number
from cascade.config.ruleset import RuleSet
from cascade.base.text import printable

# What --status takes beyond the values the listed documents hold: the usual statuses of a
# decision record, and the states of a review.
REVIEW_STATES = ("open", "accepted", "rejected", "changes", "impasse", "unreviewed")


class Row:
    def __init__(self, path: str, number: str, title: str, status: str, review: str,
                 superseded: str) -> None:
        self.path = path
        self.number = number
        self.title = title
        self.status = status  # the document's own, as it states it
        self.review = review  # the ledger's state, or "unreviewed" (no ledger)
        self.superseded = superseded

    def cells(self) -> list[str]:
        return [self.number, self.title, self.status, self.review, self.superseded, self.path]

    def matches(self, wanted: str) -> bool:
        first = self.status.split()[0].lower() if self.status else ""
        return wanted in (first, self.review.lower())


def list_(status: str | None) -> int:
    here = Path.cwd()
    documents, ledgers = _documents(here)
    topics = [_topic_row(p) for p in find_ledgers(Path(".")) if p.resolve() not in ledgers]
    rows = documents + topics
    if status is not None:
        wanted = status.strip().lower()
        known = {*DOCUMENT_STATUSES, *REVIEW_STATES, *(r.status.split()[0].lower()
                                                      for r in rows if r.status)}
        if wanted not in known:
            raise CascadeError(f"--status {status}: not a status (known: "
                               f"{', '.join(sorted(known))})")
        rows = [r for r in rows if r.matches(wanted)]
        documents = [r for r in documents if r in rows]
        topics = [r for r in topics if r in rows]
    if not documents and not topics:
        print("No governed documents or discussions found below this folder"
              + (f" with status {status}" if status else "") + ".")
        return 0
    header = ["No.", "Title", "Status", "Review", "Superseded by", "Path"]
    _table([header] + [r.cells() for r in documents + topics])
    return 0


def _table(rows: list[list[str]]) -> None:
    rows = [[printable(c or "-") for c in row] for row in rows]  # titles come from files
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)) + "  " + row[-1])


def _documents(here: Path) -> tuple[list[Row], set[Path]]:
    """The governed documents below ``here`` (tracked, or new and not ignored), and the
    ledgers they have."""
    try:
        root = repo_root(here)
    except CascadeError:
        return [], set()
    rules = RuleSet(root)
    below = here.resolve().relative_to(root.resolve()).as_posix()
    out = git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    paths = sorted({p for p in out.decode("utf-8", "surrogateescape").split("\0") if p
                    and (below == "." or p.startswith(below + "/"))})
    rows: list[Row] = []
    ledgers: set[Path] = set()
    for rel in paths:
        rule = rules.governing(rel)
        if rule is None or not (root / rel).is_file():
            continue
        data = (root / rel).read_bytes()
        text = data.decode("utf-8", "replace")
        stated = find(text)
        if "{date}" in rule.discussion:  # the ledger's name has the day it began
            dated = sorted(root.glob(rule.ledger_path(rel, date="*")))
            ledger = dated[-1] if dated else root / rule.ledger_path(rel)
        else:
            ledger = root / rule.ledger_path(rel)
        review = "unreviewed"
        if ledger.is_file():
            ledgers.add(ledger.resolve())
            review = _review(ledger)
        rows.append(Row(display_path(root / rel), listed_number(rel), document_title(rel, data),
                        stated.value if stated else "", review, superseded_by(text) or ""))
    return rows, ledgers


def _review(ledger: Path) -> str:
    try:
        return open_discussion(ledger).status
    except CascadeError as exc:
        return f"error: {exc.message}"


def _topic_row(path: Path) -> Row:
    try:
        d = open_discussion(path)
        return Row(display_path(path), "", d.title, "", d.status, "")
    except CascadeError as exc:
        return Row(display_path(path), "", f"(error: {exc.message})", "", "", "")
