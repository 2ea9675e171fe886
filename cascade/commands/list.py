"""``cascade list``: the governed documents below this folder, as ``adr list`` shows them, then
the discussions that belong to no document (topics), in a table that fits the terminal: a long
cell is cut short (``…``), the paths left out where they still do not fit (docs/cli.md)."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from msgspec import Struct

from cascade.commands._common import find_ledgers
from cascade.commands.status import knowing_authors
from cascade.base.docstatus import document_title, find, superseded_by
from cascade.base.errors import CascadeError, display_path
from cascade.base.gitio import git, repo_root
from cascade.check.governance import open_discussion
from cascade.config.adr_conventions import DOCUMENT_STATUSES, listed_number
from cascade.config.ruleset import RuleSet
from cascade.base.text import json_printable, printable

# What --status takes beyond the values the listed documents hold: the usual statuses of a
# decision record, and the states of a review.
REVIEW_STATES = ("open", "accepted", "rejected", "changes", "impasse", "unreviewed")
HEADER = ("No.", "Title", "Status", "Review", "Path")
_LINK = re.compile(r"!?\[([^\]]*)\]\(([^)]*)\)")
_NUMBER_THEN = r"0*(\d+)(?:\s*[.:)\]\-\u2013\u2014]|\s)\s*"  # "1. ", "0001: ", "7 - "
_SHORTEST = {"Title": 16, "Status": 10, "Review": 10}  # a cell cut no shorter than this


class Row(Struct, eq=False):  # compared and hashed by identity, as a plain class is
    path: str
    number: str
    title: str
    status: str  # the document's own, as it states it
    review: str  # the ledger's state, or "unreviewed" (no ledger)
    superseded: str
    source: str = ""  # the document, repository-relative (a topic: none)
    ledger: Path | None = None  # its ledger, when it has one
    rule: str = ""  # the name of the rule that governs it

    def shown_title(self) -> str:
        """The title without the number the No. column shows (adr-tools' ``1. Record ...``,
        ``ODH-ADR-0001: ...``)."""
        digits = re.search(r"\d+$", self.number)
        if not digits:
            return self.title
        prefixes = ["ADR", "RFC", re.escape(self.number[:digits.start()].rstrip("-_ "))]
        m = re.match(rf"\s*(?:(?:{'|'.join(p for p in prefixes if p)})[-_ ]?)?{_NUMBER_THEN}",
                     self.title, re.IGNORECASE)
        if m and int(m.group(1)) == int(digits.group()) and self.title[m.end():]:
            return self.title[m.end():]
        return self.title

    def shown_status(self) -> str:
        """The status as text: a markdown link shows its text; emphasis goes."""
        text = _LINK.sub(lambda m: m.group(1).strip() or m.group(2).strip(), self.status)
        return " ".join(text.replace("**", "").replace("__", "").split())

    def cells(self) -> list[str]:
        return [self.number, self.shown_title(), self.shown_status(), self.review, self.path]

    def record(self, kind: str) -> dict[str, str]:
        return {"number": self.number, "title": self.shown_title(),
                "status": self.shown_status(), "review": self.review,
                "superseded_by": self.superseded, "path": self.path, "kind": kind}

    def matches(self, wanted: str) -> bool:
        first = self.status.split()[0].lower() if self.status else ""
        return wanted in (first, self.review.lower())


def list_(status: str | None, fmt: str = "text") -> int:
    here = Path.cwd()
    documents, ledgers = governed_rows(here)
    topics = [_topic_row(p) for p in find_ledgers(Path(".")) if p.resolve() not in ledgers]
    if status is not None:
        wanted = status.strip().lower()
        known = {*DOCUMENT_STATUSES, *REVIEW_STATES, *(r.status.split()[0].lower()
                                                      for r in documents + topics if r.status)}
        if wanted not in known:
            raise CascadeError(f"--status {status}: not a status (known: "
                               f"{', '.join(sorted(known))})")
        documents = [r for r in documents if r.matches(wanted)]
        topics = [r for r in topics if r.matches(wanted)]
    if fmt == "json":
        records = ([r.record("document") for r in documents]
                   + [r.record("topic") for r in topics])
        print(json_printable(json.dumps(records, indent=2, ensure_ascii=False)))
        return 0
    if not documents and not topics:
        print("No governed documents or discussions found below this folder"
              + (f" with status {status}" if status else "") + ".")
        return 0
    _table([list(HEADER)] + [r.cells() for r in documents + topics])
    return 0


def _table(rows: list[list[str]]) -> None:
    """The rows in columns as wide as the terminal allows."""
    rows = [[printable(c or "-") for c in row] for row in rows]  # titles come from files
    columns = shutil.get_terminal_size().columns
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    widths = _fit(widths, columns, rows[0])
    if len(widths) < len(rows[0]):  # the paths do not fit
        rows = [r[:len(widths)] for r in rows]
    for row in rows:
        cells = [_cut(c, w) for c, w in zip(row, widths)]
        print("  ".join(c.ljust(w) for c, w in zip(cells[:-1], widths)) + "  " + cells[-1])
    if len(widths) < len(HEADER):
        print(f"(paths left out to fit {columns} columns: cascade list --format json)")


def _fit(natural: list[int], columns: int, header: list[str]) -> list[int]:
    """Column widths within ``columns``: the status, the title, the review cut down to their
    shortest, with the paths; else without them (the last column is not padded: it counts as
    it is)."""
    for keep in (len(natural), len(natural) - 1):
        widths = list(natural[:keep])
        over = sum(widths) + 2 * (keep - 1) - columns
        for name in ("Status", "Title", "Review"):
            i = header.index(name)
            cut = max(0, min(over, widths[i] - min(widths[i], _SHORTEST[name])))
            widths[i] -= cut
            over -= cut
        if over <= 0:
            break
    return widths


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[:max(width - 1, 0)] + "\u2026"


def governed_rows(here: Path, reviews: bool = True) -> tuple[list[Row], set[Path]]:
    """The governed documents below ``here`` (tracked, or new and not ignored), and the
    ledgers they have (``cascade site`` lists them as this does). ``reviews=False``: each
    row's review is left "" for a caller that reads the ledgers itself (the site, stats)."""
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
            review = _review(ledger) if reviews else ""
        rows.append(Row(display_path(root / rel), listed_number(rel), document_title(rel, data),
                        stated.value if stated else "", review, superseded_by(text) or "",
                        rel, ledger if ledger.is_file() else None, rule.name))
    return rows, ledgers


def _review(ledger: Path) -> str:
    try:
        return knowing_authors(open_discussion(ledger)).status  # as status says it
    except CascadeError as exc:
        return f"error: {exc.message}"


def _topic_row(path: Path) -> Row:
    try:
        d = knowing_authors(open_discussion(path))
        return Row(display_path(path), "", d.title, "", d.status, "")
    except CascadeError as exc:
        return Row(display_path(path), "", f"(error: {exc.message})", "", "", "")
