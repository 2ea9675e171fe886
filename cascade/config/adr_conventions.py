"""The ADR tools' conventions, as data: where each ecosystem keeps its decision records, how
it names and numbers them, its template, the form its records state their status in
(``CONVENTIONS``), and the status words they use -- for ``cascade init``
(cascade.config.layout), ``cascade new`` (cascade.config.adr_numbering, adr_template),
``cascade list`` and the hook's status moves (cascade.loop.closing). Reading and rewriting a
status in each form is cascade.base.docstatus.
"""
from __future__ import annotations

import re

import msgspec


class Convention(msgspec.Struct, frozen=True):
    """One ecosystem's way with decision records."""

    name: str
    folders: tuple[str, ...]  # where its records usually are: cascade init looks there
    names: tuple[str, ...]  # its file names, e.g.
    templates: tuple[str, ...]  # its template, relative to the records' folder (or a glob)
    status: str  # the cascade.base.docstatus form its template states the status in


# The order is the order things are looked for in: the folders (the first found is rule
# ``adr``), then the templates.
CONVENTIONS = (
    Convention("adr-tools", ("doc/adr",), ("0001-title.md",),
               ("templates/template.md", "template.md"), "section"),
    Convention("log4brains (MADR 2)", ("docs/adr",), ("20240131-title.md",), ("template.md",),
               "bullet"),
    Convention("MADR 3+", ("docs/decisions",), ("0001-title.md",),
               ("adr-template.md", "templates/adr-template.md"), "front-matter"),
    Convention("Nygard", ("docs/architecture/decisions", "doc/architecture/decisions"),
               ("0001-title.md", "adr-001.md"), (), "section"),
    Convention("folder per ADR (joelparkerhenderson)", (), ("0001-title/index.md",),
               ("template/index.md",), "section"),
    Convention("opendatahub", (), ("ODH-ADR-0001-title.md", "ODH-ADR-MS-0001-title.md"),
               ("*0000-*template*.md", "*0000-*template*/index.md"), "row"),
)
KNOWN_DIRS = tuple(dict.fromkeys(f for c in CONVENTIONS for f in c.folders))
_ALL_TEMPLATES = tuple(dict.fromkeys(t for c in CONVENTIONS for t in c.templates))
TEMPLATE_FILES = tuple(t for t in _ALL_TEMPLATES if "*" not in t)
TEMPLATE_GLOBS = tuple(t for t in _ALL_TEMPLATES if "*" in t)
ADR_DIR_FILE = ".adr-dir"  # adr-tools: names the records' folder
LOG4BRAINS_FILE = ".log4brains.yml"  # log4brains: project.adrFolder, project.packages[].adrFolder

# A decision record's status words, by where it stands. Still open (the hook moves only these
# at consensus; a new record says the first, in its template's case):
OPEN_STATUSES = ("proposed", "draft", "open", "pending", "rfc", "wip", "in review",
                 "under review", "in progress")
PROPOSED = OPEN_STATUSES[0].capitalize()
# Decided: taken (READY) or turned down (REJECT); a folder's own word is kept (Approved).
OUTCOME_STATUSES = {"READY": ("accepted", "approved", "adopted", "agreed"),
                    "REJECT": ("rejected", "declined", "refused", "denied")}
DOCUMENT_STATUSES = (PROPOSED.lower(), OUTCOME_STATUSES["READY"][0],
                     OUTCOME_STATUSES["REJECT"][0], "deprecated", "superseded")

# File names. Three readings, each for its use:
# - a numbered decision, as cascade init finds folders of them: 0001-title.md,
#   adr-001-title.md, ODH-ADR-0001-title.md (three to five digits), log4brains'
#   20201002-title.md (a date, its number);
NUMBERED_FILE = re.compile(r"^(?:[A-Za-z]+-)*(?:\d{3,5}|(?:19|20)\d\d(?:0[1-9]|1[0-2])"
                           r"(?:0[1-9]|[12]\d|3[01]))(?:[-_ .][^/]*)?\.md$", re.IGNORECASE)
DATED_POST = re.compile(r"^\d{4}-\d{2}-\d{2}")  # a dated post (2024-01-31-title.md), not one
# - the leading number cascade new counts from, after a prefix of words (``ADR-``,
#   ``ODH-ADR-MS-``) when it has three digits or more (``notes-2.md`` is not numbered);
LEADING_NUMBER = re.compile(r"^(?P<prefix>(?:[A-Za-z]+[-_])+(?=\d{3})|adr[-_]?)?(?P<digits>\d+)"
                            r"(?=$|[-_. ])", re.IGNORECASE)
# - the number cascade list shows: the leading number with its prefix (opendatahub's areas each
#   number from 0001: ``ODH-ADR-DSP-0001``), else three to five digits anywhere in the name.
_LISTED_NUMBER = re.compile(r"(?<![0-9])([0-9]{3,5})(?![0-9])")


def listed_number(path: str) -> str:
    """The number ``cascade list`` shows for the document at ``path`` (a folder-per-ADR
    ``index.md``: its folder's), with the prefix its name gives it, or ""."""
    name = path.rsplit("/", 2)[-2] if path.endswith("/index.md") else path.rsplit("/", 1)[-1]
    m = LEADING_NUMBER.match(name)
    if m is not None and (m.group("prefix") or len(m.group("digits")) >= 3):
        return (m.group("prefix") or "") + m.group("digits")
    m = _LISTED_NUMBER.search(name)
    return m.group(1) if m else ""
