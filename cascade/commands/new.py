"""``cascade new``: a discussion ledger from a template; with ``--rule``, the next numbered
(Over 400 lines: the numbering, templates and status lines of each ADR convention it
follows -- adr-tools, MADR, log4brains, folder per ADR -- are read together.)
document of that rule's folder, and its ledger, the way adr-tools' ``adr new`` (``-s N``),
MADR and log4brains users expect.

With ``--rule NAME``:

- the rule: the one named NAME in force in the current folder (rule files cascade from the
  top of the repository down), else the only rule of that name in any rule file;
- the folder: the fixed part of the rule's first match pattern (relative to its rule file),
  e.g. ``docs/adr`` for ``docs/adr/*.md``; area folders (``docs/adr/**/*.md``) take
  ``--dir AREA`` below it, else the folder itself;
- the number: one more than the highest leading number of the documents the rule governs in
  that folder (``0007-x.md``, ``7-x.md``, ``ADR-007-x.md``, opendatahub's
  ``ODH-ADR-MS-0007-x.md``, folder-per-ADR ``0007-x/index.md``) with the folder's most common
  prefix, keeping its width; none yet: ``0001``. Dated names (log4brains' ``YYYYMMDD-``)
  get today's date;
- the text: the repository's own template (adr-tools' ``templates/template.md`` or
  ``template.md``, MADR's ``adr-template.md``, ``*0000-*template*.md`` as opendatahub's
  ``ODH-ADR-0000-template.md``) in that folder or the rule's, else
  ``templates/documents/adr.md`` (a Nygard ADR; ``.cascade/templates/documents/adr.md``
  overrides it). Filled with plain replacements (adr-tools' ``NUMBER``, ``TITLE``, ``DATE``,
  ``STATUS``; the first heading, front matter ``title:``/``date:``/``nav_order:``, a ``Date:``
  bullet or table row), status ``Proposed`` in the template's case; a template that states
  no status gets one (MADR: ``status: proposed`` in the front matter). No Jinja2 for the
  document;
- the ledger: created as the hook creates a missing one (cascade.loop.gate), at the rule's
  ``discussion:`` path, with the rule's template, participants, protocol and consensus.

``--supersedes N`` (a number in that folder, or a path) changes only the old document's status
(cascade.base.docstatus): adr-tools' ``Superseded by [4. Title](0004-title.md)`` in a ``## Status``
section (and ``Supersedes [...]`` in the new one's), MADR's ``superseded by [ADR-0004](...)``
in front matter or a ``Status:`` bullet; the old ledger, if there is one, records the new
text as carrying its review (cascade.protocol.revisions).
"""
from __future__ import annotations

import datetime as _dt
import os
import posixpath
import re
import shlex
from pathlib import Path
from typing import NamedTuple

from cascade.base import docstatus
from cascade.base.atomic import atomic_write
from cascade.config.rules import slug
from cascade.base.errors import CascadeError, display_path
from cascade.base.gitio import git, index_blobs, repo_root
from cascade.loop.discover import find_ledger
from cascade.check.governance import authority
from cascade.loop.item import Item
from cascade.ledger.lock import ledger_lock
from cascade.loop.prepare import create_ledger
from cascade.config.ruleset import RULES_FILE, RuleSet
from cascade.protocol.discussion import Discussion
from cascade.protocol.revisions import KINDS, NEW, record_revision
from cascade.protocol.setting import setting_of
from cascade.base.resources import find_root, search_path
from cascade.base.revision import blob_id
from cascade.base.safepath import read_inside, refuse_links, refuse_outside, relative
from cascade.base.text import printable


class LedgerOptions(NamedTuple):
    """How ``cascade new`` without ``--rule`` makes a ledger, by option name (None, "": the
    default)."""
    template: str | None = None
    source: str | None = None
    participants: list[str] | None = None
    protocol: str | None = None
    output: str | None = None
    context: str = ""


def new(title: str, options: LedgerOptions, *, rule: str | None = None,
        supersedes: str | None = None, area: str | None = None) -> int:
    if rule is not None:
        given = [f"--{name}" for name, value in options._asdict().items() if value]
        if given:
            raise CascadeError(f"{', '.join(given)}: not with --rule (the rule decides them)")
        return new_numbered(title, rule, supersedes, area)
    if supersedes is not None or area is not None:
        raise CascadeError("--supersedes and --dir need --rule")
    return _new_ledger(title, options)


def _new_ledger(title: str, options: LedgerOptions) -> int:
    root = find_root()
    output, source = options.output, options.source
    if output is not None:
        refuse_outside(root, output, "the ledger")
    if source:
        source = refuse_links(root, source, "--source")
    d = Discussion.create(title, options.template or "feature", options.context, path=output,
                          source=source, participants=options.participants,
                          protocol=options.protocol)
    if source and not (d.root / source).exists():
        print(f"warning: {source}: no such file yet")
    d.save()
    print(f"Created: {display_path(d.path)}")
    return 0


# ---- cascade new TITLE --rule NAME ----------------------------------------------------------

# A leading number, after a prefix of words (``ADR-``, opendatahub's ``ODH-ADR-MS-``) when
# the number has three digits or more (``notes-2.md`` is not numbered).
_NUMBERED = re.compile(r"^(?P<prefix>(?:[A-Za-z]+[-_])+(?=\d{3})|adr[-_]?)?(?P<digits>\d+)"
                       r"(?=$|[-_. ])", re.IGNORECASE)
_TOKEN = re.compile(r"\{\{[ \t]*(NUMBER|TITLE|DATE|STATUS)[ \t]*\}\}|\b(NUMBER|TITLE|DATE|STATUS)\b")
_H1 = re.compile(r"^#[ \t]+(.*?)[ \t#]*$")
_FRONT_KEY = r"^({key}[ \t]*:[ \t]*)(.*?)[ \t]*$"
_DATE_BULLET = re.compile(r"^([*-][ \t]+(?:\*\*)?date(?:\*\*)?[ \t]*:(?:\*\*)?[ \t]*)(.*?)[ \t]*$", re.IGNORECASE)
_DATE_LINE = re.compile(r"^(date[ \t]*:[ \t]*)([\[{].*|.*YYYY.*)$", re.IGNORECASE)
_DATE_ROW = re.compile(r"^([ \t]*\|[ \t]*(?:\*\*)?date(?:\*\*)?[ \t]*\|[ \t]*)([^|]*?)([ \t]*\|.*)$",
                       re.IGNORECASE)  # a metadata table's row (opendatahub): | Date | insert date |
_MADR = re.compile(r"^##[ \t]+Context and Problem Statement", re.IGNORECASE | re.MULTILINE)  # in every MADR
_COMMENTED_STATUS = re.compile(r"^#[ \t]*status[ \t]*:", re.IGNORECASE)  # MADR 4's docs/decisions
_FENCE = re.compile(r"^[ \t]{0,3}(```|~~~)")
# In the target folder, then the rule's: adr-tools, log4brains, MADR, a numbered template.
_TEMPLATES = ("templates/template.md", "template.md", "adr-template.md",
              "templates/adr-template.md", "template/index.md")
STATUS = "Proposed"


class _Place:
    """Where a match pattern puts documents: ``folder`` (repository-relative), ``deep`` (area
    folders below it, ``**``), ``leaf`` (folder per document: ``<n>-<slug>/<leaf>``)."""

    def __init__(self, folder: str, deep: bool, leaf: str | None, ext: str) -> None:
        self.folder, self.deep, self.leaf, self.ext = folder, deep, leaf, ext

    def holds(self, folder: str) -> bool:
        return folder == self.folder or (self.deep and (not self.folder
                                                        or folder.startswith(self.folder + "/")))


class _Entry:
    """A governed document in the folder: its path, its shape, its leading number."""

    def __init__(self, doc: str, name: str, leaf: str | None) -> None:
        self.doc, self.leaf = doc, leaf
        m = _NUMBERED.match(name)
        self.prefix = (m.group("prefix") or "") if m else ""
        self.digits = m.group("digits") if m else ""
        self.number = int(self.digits) if m else None


def new_numbered(title: str, rule_name: str, supersedes: str | None = None,
                 area: str | None = None) -> int:
    title = " ".join(title.split())
    if not title or printable(title) != title:
        raise CascadeError("the title must be printable text, not empty")
    root = repo_root(Path.cwd())
    rules = RuleSet(root)
    rule = _named_rule(rules, root, rule_name)
    folder, place = _target(rule, area)
    if folder:
        refuse_links(root, folder, "the document folder")
    entries = _scan(root, rule, folder, place)
    date = _dt.date.today().isoformat()
    ident, number = _next_number(entries, date)
    name = f"{ident}-{slug(title)}"
    doc = f"{folder}/{name}" if folder else name
    doc = f"{doc}/{place.leaf}" if place.leaf else doc + place.ext
    doc = refuse_links(root, doc, "the new document")
    governing = rules.governing(doc) if rules.files_for(doc) else None
    if governing is None or governing.name != rule.name:
        by = f"rule {governing.name!r} ({governing.where(root)})" if governing else "no rule"
        raise CascadeError(f"{doc} would be governed by {by}, not by rule {rule.name!r}"
                           + (" (area folders: --dir AREA)" if area is None else ""),
                           rule.file, rule.line_of("match"))
    rule = governing
    if os.path.lexists(root / doc):
        raise CascadeError("already exists: cascade new never overwrites a file", root / doc)
    ledger = refuse_links(root, rule.ledger_path(doc), "the ledger")
    if os.path.lexists(root / ledger):
        raise CascadeError("already exists: cascade new never overwrites a file", root / ledger)
    rule_authority = authority(rule, root)  # unknown personas or protocol: at the rule's line

    template, template_from = _template(root, [folder, place.folder])
    text = fill(template, number=number, title=title, date=date)
    old = None
    if supersedes is not None:
        old = _Supersede(root, rules, _old_document(root, supersedes, entries, place, folder))
        text = old.link_new(doc, text, ident)
    data = text.encode("utf-8")

    item = Item(ledger, doc, rule, rule_authority, doc_data=data)
    create_ledger(root, item)  # the ledger first: a template or persona problem writes nothing
    try:
        (root / doc).parent.mkdir(parents=True, exist_ok=True)
        refuse_links(root, doc, "the new document")
        atomic_write(root / doc, data)
        if old is not None:
            old.write()
    except BaseException:  # nothing half-made: the new files go unless the old one changed
        if old is None or not old.written:
            for made in (doc, ledger):
                try:
                    os.unlink(root / made)
                except OSError:
                    pass
        raise
    _report(root, rule, doc, ledger, template_from, old)
    return 0


def _named_rule(rules, root: Path, name: str):
    here = Path.cwd().relative_to(root).as_posix() if Path.cwd() != root else ""
    in_force = {}
    for folder in rules.files_for(f"{here}/x" if here else "x"):
        for rule in rules.rules_in(folder):
            in_force[rule.name] = rule
    if name in in_force:
        return in_force[name]
    out = git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    folders = sorted({posixpath.dirname(p) for p in out.decode("utf-8", "surrogateescape")
                      .split("\0") if posixpath.basename(p) == RULES_FILE})
    every = [r for f in folders if rules.reader.is_file(posixpath.join(f, RULES_FILE))
             for r in rules.rules_in(f)]
    found = {(str(r.file), r.base): r for r in every if r.name == name}
    if len(found) == 1:
        return next(iter(found.values()))
    where = root / (posixpath.join(folders[0], RULES_FILE) if folders else RULES_FILE)
    if found:
        places = ", ".join(r.where(root) for r in found.values())
        raise CascadeError(f"rule {name!r} is defined in {places}: run cascade new from the "
                           "folder of the one you mean", where)
    if not every and not in_force:
        raise CascadeError(f"no rule {name!r}: this repository has no rules (cascade init "
                           "writes them)", where)
    known = sorted({r.name for r in every} | set(in_force))
    raise CascadeError(f"no rule {name!r} (known: {', '.join(known)})", where)


def _places(rule) -> list[_Place]:
    places = []
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
        places.append(_Place(posixpath.normpath(folder) if folder else "", deep, leaf, ext))
    return places


def _extension(segment: str) -> str:
    m = re.search(r"(\.[A-Za-z0-9]+)$", segment)
    return m.group(1) if m and not any(c in m.group(1) for c in "*?[") else ".md"


def _target(rule, area: str | None) -> tuple[str, _Shapes]:
    """The folder a new document goes in, and the shape it takes there."""
    places = _places(rule)
    if not places:
        raise CascadeError(f"rule {rule.name!r} names no folder of documents to number (match: "
                           f"{', '.join(rule.match)})", rule.file, rule.line_of("match"))
    top = places[0].folder
    folder = top
    if area is not None:
        sub = relative(area)
        if sub is None:
            raise CascadeError(f"--dir {area!r} must be a folder below {top or 'the top'}/")
        if top and (sub == top or sub.startswith(top + "/")):
            sub = sub[len(top) + 1:]
        folder = posixpath.join(top, sub) if top and sub else (sub or top)
    shapes = [p for p in places if p.holds(folder)] or places[:1]
    return folder, _Shapes(shapes)


class _Shapes(_Place):
    """The shapes a folder allows (a flat ``*.md`` beside folder-per-ADR ``*/index.md``):
    the one of the highest-numbered document is used, else the most common, else the first."""

    def __init__(self, shapes: list[_Place]) -> None:
        first = shapes[0]
        super().__init__(first.folder, first.deep, first.leaf, first.ext)
        self.shapes = shapes

    def settle(self, entries: list[_Entry]) -> None:
        if len({(p.leaf, p.ext) for p in self.shapes}) < 2 or not entries:
            return
        numbered = [e for e in entries if e.number is not None]
        if numbered:
            leaf = max(numbered, key=lambda e: (e.number, len(e.digits))).leaf
        else:
            leaves = [e.leaf for e in entries]
            leaf = max(set(leaves), key=leaves.count)
        chosen = next((p for p in self.shapes if p.leaf == leaf), self.shapes[0])
        self.leaf, self.ext = chosen.leaf, chosen.ext


def _scan(root: Path, rule, folder: str, place: _Shapes) -> list[_Entry]:
    """The documents ``rule`` governs in ``folder``: files, and folders holding one."""
    leaves = [p.leaf for p in place.shapes if p.leaf]
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
                entries.append(_Entry(doc, item.name, doc.rsplit("/", 1)[1]))
        elif rule.matches(rel):
            entries.append(_Entry(rel, item.name, None))
    place.settle(entries)
    return entries


def _is_date(digits: str) -> bool:
    try:
        _dt.datetime.strptime(digits, "%Y%m%d")
    except ValueError:
        return False
    return len(digits) == 8


def _next_number(entries: list[_Entry], date: str) -> tuple[str, str]:
    """(the new document's number as its name writes it, as its title writes it): one more
    than the highest of the folder's most common prefix (opendatahub's area folders mix
    ``ODH-ADR-MS-0005`` and ``ODH-ADR-MaaS-0001``), in its width."""
    numbered = [e for e in entries if e.number is not None]
    if not numbered:
        return "0001", "1"
    if all(_is_date(e.digits) for e in numbered):  # log4brains: YYYYMMDD-slug.md
        stamp = date.replace("-", "")
        return numbered[-1].prefix + stamp, stamp
    top = max(numbered, key=lambda e: (e.number, len(e.digits)))
    prefixes = [e.prefix for e in numbered]
    prefix = max(dict.fromkeys(prefixes), key=lambda p: (prefixes.count(p), p == top.prefix))
    top = max((e for e in numbered if e.prefix == prefix), key=lambda e: (e.number, len(e.digits)))
    n = top.number + 1
    return f"{prefix}{n:0{len(top.digits)}d}", str(n)


def _template(root: Path, folders: list[str]) -> tuple[str, str]:
    """The repository's own template for a new document (or the built-in one), and where it
    came from."""
    for folder in dict.fromkeys(folders):
        base = root / folder
        names = list(_TEMPLATES) + sorted(
            p.relative_to(base).as_posix() for pattern in ("*0000-*template*.md",
                                                           "*0000-*template*/index.md")
            for p in base.glob(pattern))
        for name in names:
            rel = posixpath.join(folder, name) if folder else name
            if os.path.lexists(root / rel) and not (root / rel).is_dir():
                return _decode(read_inside(root, rel, "the template"), root / rel), rel
    for folder in search_path("templates", root):
        path = folder / "documents" / "adr.md"
        if path.is_file():
            try:
                rel = path.relative_to(root).as_posix()
                data = read_inside(root, rel, "the template")
            except ValueError:  # bundled
                data = path.read_bytes()
                return _decode(data, path), "the built-in ADR template"
            return _decode(data, path), rel
    raise CascadeError("no ADR template: templates/documents/adr.md is missing")


def _decode(data: bytes, path: Path) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CascadeError(f"not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset "
                           f"{exc.start})", path) from None


# ---- filling a template (plain replacements: no Jinja2) -----------------------------------

def fill(text: str, *, number: str, title: str, date: str, status: str = STATUS) -> str:
    """A template with its placeholders filled: adr-tools' tokens, else the first heading and
    front matter ``title:``; the status in the template's own case; the date."""
    values = {"NUMBER": number, "TITLE": title, "DATE": date, "STATUS": status}
    seen: set[str] = set()

    def token(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(2)
        seen.add(name)
        return values[name]

    text = _TOKEN.sub(token, text)
    if "TITLE" not in seen:
        text = _set_title(text, title)
    if number.isdigit():  # MADR's own docs order their pages by number (Just the Docs)
        text = _set_front(text, "nav_order", number)
    found = docstatus.find(text)
    if found is not None:
        text = docstatus.set_status(text, docstatus.matching_case(status, _bare(found.value)))
    else:
        text = _add_status(text, status)
    return _set_date(text, date)


def _add_status(text: str, status: str) -> str:
    """A template with front matter, or MADR's, that states no status gets one, so the review
    can move it (a rule's ``status:``) and a later document can supersede it: ``status:
    proposed`` in the front matter, in place of a commented-out ``# status:`` line (MADR 4's
    own ``docs/decisions``); MADR's minimal template gets front matter for it. Other
    templates are left as they are."""
    lines = text.split("\n")
    cr = "\r" if lines[0].endswith("\r") else ""
    front = _front_end(lines)
    line = f"status: {status.lower()}{cr}"
    if front > 0:
        at = next((i for i in range(1, front) if _COMMENTED_STATUS.match(lines[i])), None)
        if at is None:
            lines.insert(1, line)
        else:
            lines[at] = line
    elif _MADR.search(text):
        lines[0:0] = ["---" + cr, line, "---" + cr]
    return "\n".join(lines)


def _bare(value: str) -> str:
    """A status placeholder without its brackets: ``{proposed | accepted}`` -> ``proposed ...``."""
    return value.lstrip("{[(\"' \t")


def _front_end(lines: list[str]) -> int:
    """The index of the line closing the leading front matter, or -1 when there is none."""
    if lines and lines[0].strip() == "---":
        for i in range(1, len(lines)):
            if lines[i].strip() in ("---", "..."):
                return i
    return -1


def _replace(line: str, pattern: re.Pattern[str], value: str) -> str:
    """``line`` (maybe ending in ``\\r``) with its value replaced, keeping quotes."""
    end = "\r" if line.endswith("\r") else ""
    m = pattern.match(line.rstrip("\r"))
    assert m is not None
    old = m.group(2)
    quote = old[0] if old[:1] in ("'", '"') and old[-1:] == old[:1] and len(old) > 1 else ""
    return f"{m.group(1)}{quote}{value}{quote}{end}"


def _set_front(text: str, name: str, value: str) -> str:
    """``text`` with its front matter's key ``name`` (if it has one) saying ``value``."""
    lines = text.split("\n")
    key = re.compile(_FRONT_KEY.format(key=name), re.IGNORECASE)
    for i in range(1, _front_end(lines)):
        if key.match(lines[i].rstrip("\r")):
            lines[i] = _replace(lines[i], key, value)
            return "\n".join(lines)
    return text


def _set_title(text: str, title: str) -> str:
    text = _set_front(text, "title", title)
    lines = text.split("\n")
    front = _front_end(lines)
    fenced = False
    for i in range(front + 1, len(lines)):
        if _FENCE.match(lines[i]):
            fenced = not fenced
        elif not fenced and _H1.match(lines[i].rstrip("\r")):
            lines[i] = f"# {title}" + ("\r" if lines[i].endswith("\r") else "")
            return "\n".join(lines)
    if front < 0:
        return "\n".join([f"# {title}", ""] + lines)
    return "\n".join(lines[:front + 1] + ["", f"# {title}"] + lines[front + 1:])


def _set_date(text: str, date: str) -> str:
    lines = text.split("\n")
    front = _front_end(lines)
    key = re.compile(_FRONT_KEY.format(key="date"), re.IGNORECASE)
    for i in range(1, front):
        if key.match(lines[i].rstrip("\r")):
            lines[i] = _replace(lines[i], key, date)
            return "\n".join(lines)
    fenced = False
    for i in range(front + 1, len(lines)):
        if _FENCE.match(lines[i]):
            fenced = not fenced
            continue
        for pattern in (_DATE_BULLET, _DATE_LINE):
            if not fenced and pattern.match(lines[i].rstrip("\r")):
                lines[i] = _replace(lines[i], pattern, date)
                return "\n".join(lines)
        row = None if fenced else _DATE_ROW.match(lines[i].rstrip("\r"))
        if row:
            lines[i] = row.group(1) + date + row.group(3) + ("\r" if lines[i].endswith("\r") else "")
            return "\n".join(lines)
    return text


def heading(text: str, fallback: str) -> str:
    """A document's title as adr-tools links to it: its first ``# `` heading (after any front
    matter), e.g. ``9. Use MySQL``."""
    lines = text.split("\n")
    fenced = False
    for line in lines[_front_end(lines) + 1:]:
        if _FENCE.match(line):
            fenced = not fenced
            continue
        m = None if fenced else _H1.match(line.rstrip("\r"))
        if m and m.group(1):
            return m.group(1)
    return fallback


# ---- --supersedes ---------------------------------------------------------------------------

def _old_document(root: Path, ref: str, entries: list[_Entry], place: _Place,
                  folder: str) -> str:
    if ref.strip().isdigit():
        n = int(ref)
        hits = [e for e in entries if e.number == n]
        where = root / folder
        if not hits:
            raise CascadeError(f"--supersedes {ref}: no document numbered {n} here (give its "
                               "path)", where)
        if len(hits) > 1:
            raise CascadeError(f"--supersedes {ref}: {hits[0].doc} and {hits[1].doc} are both "
                               f"numbered {n} (give the path)", where)
        return hits[0].doc
    rel = Path(os.path.relpath(os.path.abspath(ref), root)).as_posix()
    rel = refuse_links(root, rel, "the superseded document")
    if (root / rel).is_dir():
        leaf = place.leaf or "index.md"
        rel = refuse_links(root, f"{rel}/{leaf}", "the superseded document")
    if not (root / rel).is_file():
        raise CascadeError("--supersedes: no such file", root / rel)
    return rel


class _Supersede:
    """The superseded document: its status changed, nothing else, and its ledger told."""

    def __init__(self, root: Path, rules, doc: str) -> None:
        self.root, self.doc, self.written = root, doc, False
        self.data = read_inside(root, doc, "the superseded document")
        staged = index_blobs(root, [doc]).get(doc)
        if staged is not None and staged != blob_id(self.data):
            raise CascadeError("has unstaged changes: stage or stash them first (cascade new "
                               "changes only its status, and would mix the two)", root / doc)
        self.text = _decode(self.data, root / doc)
        self.status = docstatus.find(self.text)
        if self.status is None:
            raise CascadeError("states no status (no '## Status' section, 'status:' front "
                               "matter or 'Status:' bullet): cannot mark it superseded",
                               root / doc)
        self.title = heading(self.text, Path(doc).stem)
        self.new_data = b""
        self.line = ""
        self.recorded: str | None = None
        # Its ledger, if it has one (a document adopted before cascade has none: none is made).
        self.rule = rules.governing(doc) if rules.files_for(doc) else None
        self.ledger: str | None = None
        self.discussion: Discussion | None = None
        if self.rule is not None:
            self.ledger = refuse_links(root, find_ledger(root, self.rule, doc), "the ledger")
            if (root / self.ledger).is_file():
                self.discussion = Discussion.load(root / self.ledger, setting_of(root))

    def link_new(self, new_doc: str, new_text: str, ident: str) -> str:
        """The new document's text with a ``Supersedes`` line (a ``## Status`` section only);
        prepares the old one's ``Superseded by``."""
        back = posixpath.relpath(self.doc, posixpath.dirname(new_doc) or ".")
        forward = posixpath.relpath(new_doc, posixpath.dirname(self.doc) or ".")
        word = docstatus.matching_case("Superseded by", _bare(self.status.value))
        if self.status.form == "section":  # adr-tools: the heading as the link text
            self.line = f"{word} [{heading(new_text, ident)}]({forward})"
        else:  # MADR: superseded by [ADR-0005](0005-example.md)
            label = ident if not ident[:1].isdigit() else f"ADR-{ident}"
            self.line = f"{word} [{label}]({forward})"
        self.new_data = docstatus.set_status(self.text, self.line).encode("utf-8")
        return docstatus.add_status_line(new_text, f"Supersedes [{self.title}]({back})")

    def write(self) -> None:
        """Its new status, and the revision in its ledger: recorded with the ledger's lock
        held, after what another writer appended (cascade.ledger.lock)."""
        ledgers = [self.root / self.ledger] if self.discussion is not None and self.ledger else []
        with ledger_lock(*ledgers, holder="cascade new"):
            self._write()

    def _write(self) -> None:
        path = self.root / self.doc
        if read_inside(self.root, self.doc, "the superseded document") != self.data:
            raise CascadeError("changed while cascade new ran: not writing", path)
        atomic_write(path, self.new_data, path.stat().st_mode)
        self.written = True
        if self.discussion is not None and self.rule is not None:
            self.discussion.refresh()
            self.recorded = record_revision(self.discussion, self.doc, self.new_data,
                                            revote=self.rule.revote_on_change)
            self.discussion.save()


def _report(root: Path, rule, doc: str, ledger: str, template_from: str,
            old: _Supersede | None) -> None:
    here = Path.cwd()

    def shown(rel: str) -> str:
        return os.path.relpath(root / rel, here)

    print(printable(f"Created: {shown(doc)} (from {template_from})"))
    print(printable(f"Created: {shown(ledger)} (rule {rule.name!r}, {rule.where(root)})"))
    paths = [doc, ledger]
    if old is not None:
        print(printable(f"Superseded: {shown(old.doc)}: status now {old.line!r}"))
        paths.append(old.doc)
        if old.rule is None:
            print(printable(f"  {shown(old.doc)}: no rule governs it; nobody reviews it"))
        elif old.discussion is None or old.ledger is None:
            print(printable(f"  {shown(old.doc)} has no ledger (adopted before cascade): the "
                            "hook reviews it as a changed document when you commit"))
        else:
            paths.append(old.ledger)
            if old.recorded in KINDS:
                said = f"{KINDS[old.recorded]}: the review holds, nobody is asked"
            elif old.recorded == NEW:
                said = "a new revision: the panel is asked when you commit"
            else:
                said = "this text is recorded already"
            print(printable(f"  {shown(old.ledger)}: {said}"))
    command = " ".join(shlex.quote(shown(p)) for p in paths)
    print(printable(f"next: write the decision in {shown(doc)}, then: git add {command} && "
                    "git commit"))
