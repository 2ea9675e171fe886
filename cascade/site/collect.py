"""What the site shows, read as the commands read it: the governed documents as ``cascade
list`` finds them, each ledger's state as ``cascade status --json`` gives it (the gate's
verdict included), the drift ``cascade drift`` finds, the topic discussions and their records.
Nothing here re-derives a verdict."""
from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

import msgspec.structs
from msgspec import Struct, field

from cascade.base.errors import CascadeError
from cascade.base.gitio import git, git_or_none, index_blobs
from cascade.base.safepath import read_inside
from cascade.check.config import committed_config
from cascade.check.decision_drift import drifted
from cascade.check.gittree import Blobs, Tree
from cascade.check.governance import LedgerReader
from cascade.commands._common import find_ledgers
from cascade.commands.list import Row, governed_rows
from cascade.commands.status import knowing_authors, status_data
from cascade.config.ruleset import RuleSet
from cascade.ledger.records import SOURCE_REVISION, Event
from cascade.protocol.discussion import Discussion
from cascade.protocol.record import record_path, render_record

# The date a document states: front matter's ``date:``, adr-tools' ``Date: ...``, an RFC's
# ``- Start Date: ...``.
_DATE = re.compile(r"^[-*\s]*(?:start\s+)?date\s*:\s*\**\s*(\d{4}-\d{2}-\d{2})",
                   re.M | re.I)
_COMMENT = re.compile(r"<!--.*?-->\n?", re.S)


class Vote(Struct, frozen=True):
    """A vote as the ledger holds it, with the revision it reviewed."""

    author: str
    vote: str
    revision: str
    line: int


class Said(Struct, frozen=True):
    """A comment of the discussion; ``origin``: ``ai`` (a model's turn), ``decision`` (a
    person's decision), else a person."""

    author: str
    vote: str
    line: int
    body: str
    origin: str


class Review(Struct):
    """A ledger: the state ``cascade status --json`` gives, its votes and comments in ledger
    order, the record (markdown), or the error that stops it being read."""

    ledger: str
    data: dict[str, Any] = field(default_factory=dict)
    votes: list[Vote] = field(default_factory=list)
    record: str = ""
    error: str = ""
    comments: list[Said] = field(default_factory=list)
    opened: Discussion | None = None  # the discussion read (none: ``error``), for the stats


class Entry(Struct):
    """A page of the site: a governed decision (``source`` set) or a topic discussion."""

    slug: str
    number: str
    title: str
    status: str  # the document's own, as text
    review: str  # the ledger's state, or "unreviewed"
    superseded: str
    source: str  # the document, repository-relative; "" for a topic
    folder: str
    date: str
    text: str = ""  # the document
    discussion: Review | None = None
    drift: dict[str, Any] | None = None
    supersedes: list[str] = field(default_factory=list)  # the pages of those it supersedes
    superseded_slug: str = ""  # the page of the one that supersedes it
    rule: str = ""  # the name of the rule that governs it


def _slug(text: str, taken: set[str]) -> str:
    base = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:80] or "page"
    slug, n = base, 1
    while slug in taken:
        n += 1
        slug = f"{base}-{n}"
    taken.add(slug)
    return slug


def _read(root: Path, rel: str, what: str) -> tuple[str, bool]:
    """A file of the work tree as text, never through a symbolic link (docs/site.md: why),
    and whether it was read: one that was not is a line that says why."""
    try:
        return read_inside(root, rel, what).decode("utf-8", "replace"), True
    except CascadeError as exc:
        return f"*Not shown: {exc.message}*\n", False
    except OSError as exc:
        return f"*Not shown: {what} {rel} cannot be read ({exc.strerror})*\n", False


def added_dates(root: Path) -> dict[str, str]:
    """Each path's first commit date (YYYY-MM-DD), from one ``git log``."""
    out = git_or_none(root, "log", "--reverse", "--format=%x00%ad", "--date=short",
                      "--name-only", "--diff-filter=A", "--no-renames")
    dates: dict[str, str] = {}
    for chunk in (out or b"").decode("utf-8", "replace").split("\0")[1:]:
        lines = chunk.strip().splitlines()
        for path in lines[1:]:
            dates.setdefault(path.strip(), lines[0].strip())
    return dates


class Reading(Struct):
    """What every ledger of one build is read with (its rules read once), and the index's
    blobs of the governed documents: the gate's verdict is for the revision a commit holds."""

    reader: LedgerReader
    staged: dict[str, str]


def review(ledger: Path, root: Path, reading: Reading) -> Review:
    """The ledger's state as ``cascade status --json`` gives it, and its votes."""
    rel = ledger.resolve().relative_to(root.resolve()).as_posix()
    try:
        d = knowing_authors(reading.reader.open(ledger))
        data = status_data(d, reading.staged)
    except CascadeError as exc:
        return Review(rel, error=str(exc))
    votes = panel_votes(d.ledger.entries)
    record = ""
    path = record_path(ledger)
    if path.is_file() or path.is_symlink():
        record = _read(root, posixpath.join(posixpath.dirname(rel), path.name), "the record")[0]
    elif not d.source and d.state.run.outcome:  # a topic's record, derived as it is written
        record = render_record(d, d.state.run, "")
    said = [Said(c.author, c.vote or "", c.line, _COMMENT.sub("", c.body).strip(),
                 c.origin or "person") for c in d.ledger.comments]
    return Review(rel, data, votes, _COMMENT.sub("", record), comments=said, opened=d)


def panel_votes(entries) -> list[Vote]:
    """Every vote in ledger order, each with the revision it was given for: the one its stamp
    names, else the document's revision the ledger last recorded (``SOURCE-REVISION``)."""
    out, current = [], ""
    for entry in entries:
        if isinstance(entry, Event):
            if entry.kind == SOURCE_REVISION and entry.value.split():
                current = entry.value.split()[0]
        elif entry.vote:
            revision = str(entry.provenance.get("revision") or current)
            out.append(Vote(entry.author, entry.vote, revision[:12], entry.line))
    return out


def drift_by_document(root: Path) -> dict[str, dict[str, Any]]:
    """``cascade drift --json``'s decisions at HEAD, by document (none: no commit yet)."""
    head = git_or_none(root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    if not head:
        return {}
    tree = Tree(root, head.decode().strip(), Blobs(root))
    with committed_config(tree) as config_root:
        rules = RuleSet(root, reader=tree, config_root=config_root)
        return {d.doc: d.as_dict() for d in drifted(root, tree, rules)}


def _entry(row: Row, root: Path, dates: dict[str, str], taken: set[str],
           reading: Reading) -> Entry:
    text, readable = _read(root, row.source, "the document")
    if not readable:  # what ``list`` read from it (title, status) is not shown either
        row = msgspec.structs.replace(row, title=Path(row.source).stem, status="",
                                      superseded="")
    stated = _DATE.search(text)
    folder = posixpath.dirname(row.source) or "."
    reviewed = review(row.ledger, root, reading) if row.ledger else None
    # the timeline's review is the page's (status's, knowing who added each line), not a
    # second reading of the ledger
    state = row.review
    if reviewed is not None:
        state = reviewed.data.get("status", "") if reviewed.data else f"error: {reviewed.error}"
    return Entry(_slug(row.number or Path(row.source).stem, taken), row.number,
                 row.shown_title(), row.shown_status(), state, row.superseded, row.source,
                 folder, stated.group(1) if stated else dates.get(row.source, ""), text, reviewed,
                 rule=row.rule)


def collect(root: Path) -> list[Entry]:
    """Every governed decision of the repository, then every topic discussion."""
    rows, ledgers = governed_rows(root, reviews=False)  # each ledger is read once, here
    dates = added_dates(root)
    drift = drift_by_document(root)
    taken = {"index", "search", "stats"}
    reading = Reading(LedgerReader(root), index_blobs(root, [r.source for r in rows]))
    entries = [_entry(r, root, dates, taken, reading) for r in rows]
    for e in entries:
        e.drift = drift.get(e.source)
    by_path = {e.source: e for e in entries}
    for e in entries:  # the chain's other way: what each one supersedes
        target = _superseding(e, by_path)
        if target is not None:
            target.supersedes.append(e.slug)
            e.superseded_slug = target.slug
    for path in find_ledgers(root):
        if path.resolve() in ledgers:
            continue
        r = review(path, root, reading)
        entries.append(Entry(_slug("topic-" + Path(r.ledger).name.split(".")[0], taken), "",
                             r.data.get("title") or path.name, "", r.data.get("status", "error"),
                             "", "", posixpath.dirname(r.ledger) or ".", dates.get(r.ledger, ""),
                             discussion=r))
    return entries


def _superseding(e: Entry, by_path: dict[str, Entry]) -> Entry | None:
    """The decision that supersedes ``e``, found by what its status names (the link's text,
    else its target: cascade.base.docstatus.superseded_by): a path, else a number in its
    folder."""
    said = e.superseded.strip()
    if said.endswith(".md"):
        path = posixpath.normpath(posixpath.join(posixpath.dirname(e.source), said))
        if path in by_path:
            return by_path[path]
    digits = re.search(r"\d+", said)
    if digits:
        for other in by_path.values():
            n = re.search(r"\d+$", other.number)
            if n and int(n.group()) == int(digits.group()) and other.folder == e.folder:
                return other
    return None
