"""The next numbered document of a rule's folder, the way adr-tools' ``adr new``, MADR and
log4brains users expect (docs/cli.md, ``cascade new --rule``): in the fixed part of the
rule's first match pattern (``docs/adr`` for ``docs/adr/*.md``; area folders take an area
below it), one more than the highest leading number of the documents the rule governs there,
with the folder's most common prefix (``ADR-``, ``ODH-ADR-MS-``) in its width; none yet:
``0001``; documents but none numbered (``<slug>/index.md``): the slug alone; dated names
(log4brains' ``YYYYMMDD-``): today's date.
"""
from __future__ import annotations

import datetime as _dt
import os
import posixpath
import re
from pathlib import Path

import msgspec

from cascade.base.errors import CascadeError
from cascade.base.safepath import relative
from cascade.config.adr_conventions import LEADING_NUMBER
from cascade.config.rules import slug


class Place(msgspec.Struct, frozen=True):
    """Where a match pattern puts documents: ``folder`` (repository-relative), ``deep`` (area
    folders below it, ``**``), ``leaf`` (folder per document: ``<n>-<slug>/<leaf>``)."""

    folder: str
    deep: bool
    leaf: str | None
    ext: str

    def holds(self, folder: str) -> bool:
        return folder == self.folder or (self.deep and (not self.folder
                                                        or folder.startswith(self.folder + "/")))

    def document(self, folder: str, ident: str, title: str) -> str:
        """The path of a new document numbered ``ident`` in ``folder``."""
        name = f"{ident}-{slug(title)}" if ident else slug(title)
        doc = f"{folder}/{name}" if folder else name
        return f"{doc}/{self.leaf}" if self.leaf else doc + self.ext


class Entry(msgspec.Struct, frozen=True):
    """A governed document in the folder: its path, its shape, its leading number."""

    doc: str
    leaf: str | None
    prefix: str = ""
    digits: str = ""
    number: int | None = None


def entry(doc: str, name: str, leaf: str | None) -> Entry:
    m = LEADING_NUMBER.match(name)
    if m is None:
        return Entry(doc, leaf)
    return Entry(doc, leaf, m.group("prefix") or "", m.group("digits"), int(m.group("digits")))


def places(rule) -> list[Place]:
    out = []
    for pattern in rule.match:
        parts = pattern.strip("/").split("/")
        fixed = 0
        while fixed < len(parts) and not any(c in parts[fixed] for c in "*?["):
            fixed += 1
        if fixed == len(parts):  # one file, not a folder of them
            continue
        rest = parts[fixed:]
        deep = bool(rest) and rest[0] == "**"
        if deep:
            rest = rest[1:]
        if not rest or (len(rest) == 1 and rest[0] == "**"):
            leaf, ext = None, ".md"
        elif len(rest) == 1:
            leaf, ext = None, _extension(rest[0])
        elif len(rest) == 2 and not any(c in rest[1] for c in "*?["):
            leaf, ext = rest[1], ""
        else:
            continue
        folder = posixpath.join(rule.base, *parts[:fixed]) if fixed or rule.base else ""
        out.append(Place(posixpath.normpath(folder) if folder else "", deep, leaf, ext))
    return out


def _extension(segment: str) -> str:
    m = re.search(r"(\.[A-Za-z0-9]+)$", segment)
    return m.group(1) if m and not any(c in m.group(1) for c in "*?[") else ".md"


def target(rule, area: str | None) -> tuple[str, list[Place]]:
    """The folder a new document goes in (``area``: the ``--dir`` below the rule's), and the
    shapes it may take there (a flat ``*.md`` beside folder-per-ADR ``*/index.md``)."""
    found = places(rule)
    if not found:
        raise CascadeError(f"rule {rule.name!r} names no folder of documents to number (match: "
                           f"{', '.join(rule.match)})", rule.file, rule.line_of("match"))
    top = found[0].folder
    folder = top
    if area is not None:
        sub = relative(area)
        if sub is None:
            raise CascadeError(f"--dir {area!r} must be a folder below {top or 'the top'}/")
        if top and (sub == top or sub.startswith(top + "/")):
            sub = sub[len(top) + 1:]
        folder = posixpath.join(top, sub) if top and sub else (sub or top)
    return folder, [p for p in found if p.holds(folder)] or found[:1]


def scan(root: Path, rule, folder: str, shapes: list[Place]) -> list[Entry]:
    """The documents ``rule`` governs in ``folder``: files, and folders holding one."""
    leaves = [p.leaf for p in shapes if p.leaf]
    entries = []
    try:
        items = sorted(os.scandir(root / folder), key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError):
        items = []
    for item in items:
        if item.name.startswith("."):
            continue
        rel = posixpath.join(folder, item.name) if folder else item.name
        if item.is_dir(follow_symlinks=False):
            doc = next((f"{rel}/{leaf}" for leaf in leaves if rule.matches(f"{rel}/{leaf}")
                        and os.path.lexists(root / rel / leaf)), None)
            if doc is not None:
                entries.append(entry(doc, item.name, doc.rsplit("/", 1)[1]))
        elif rule.matches(rel):
            entries.append(entry(rel, item.name, None))
    return entries


def settle(shapes: list[Place], entries: list[Entry]) -> Place:
    """The shape a new document takes: the highest-numbered document's, else the most common,
    else the first (in the first's folder)."""
    first = shapes[0]
    if len({(p.leaf, p.ext) for p in shapes}) < 2 or not entries:
        return first
    numbered = [e for e in entries if e.number is not None]
    if numbered:
        leaf = max(numbered, key=lambda e: (e.number, len(e.digits))).leaf
    else:
        leaves = [e.leaf for e in entries]
        leaf = max(set(leaves), key=leaves.count)
    chosen = next((p for p in shapes if p.leaf == leaf), first)
    return msgspec.structs.replace(first, leaf=chosen.leaf, ext=chosen.ext)


def _is_date(digits: str) -> bool:
    try:
        _dt.datetime.strptime(digits, "%Y%m%d")
    except ValueError:
        return False
    return len(digits) == 8


def next_number(entries: list[Entry], date: str) -> tuple[str, str]:
    """(the new document's number as its name writes it, as its title writes it): one more
    than the highest of the folder's most common prefix (opendatahub's area folders mix
    ``ODH-ADR-MS-0005`` and ``ODH-ADR-MaaS-0001``), in its width."""
    numbered = [e for e in entries if e.number is not None]
    if not numbered:  # none yet: 0001; documents, none numbered (<slug>/index.md): no number
        return ("", "") if entries else ("0001", "1")
    if all(_is_date(e.digits) for e in numbered):  # log4brains: YYYYMMDD-slug.md
        stamp = date.replace("-", "")
        return numbered[-1].prefix + stamp, stamp
    top = max(numbered, key=lambda e: (e.number, len(e.digits)))
    prefixes = [e.prefix for e in numbered]
    prefix = max(dict.fromkeys(prefixes), key=lambda p: (prefixes.count(p), p == top.prefix))
    top = max((e for e in numbered if e.prefix == prefix), key=lambda e: (e.number, len(e.digits)))
    n = top.number + 1
    return f"{prefix}{n:0{len(top.digits)}d}", str(n)
