"""``cascade new``: a discussion ledger from a template; with ``--rule NAME``, the next
numbered document of that rule's folder (cascade.config.adr_numbering, adr_template) and its
ledger, created as the hook creates one (cascade.loop.prepare). ``--supersedes`` changes only
the old document's status, and its ledger records the new text as keeping its review
(cascade.protocol.revisions). What each option does: docs/cli.md.
"""
from __future__ import annotations

import contextlib
import datetime as _dt
import os
import posixpath
import shlex
from pathlib import Path
from typing import NamedTuple

from cascade.base import docstatus
from cascade.base.atomic import atomic_write
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
from cascade.base.resources import find_root
from cascade.base.revision import blob_id
from cascade.base.safepath import read_inside, refuse_links, refuse_outside
from cascade.config.adr_conventions import LOG4BRAINS_FILE
from cascade.config.layout import log4brains_folders
from cascade.config.yamlio import load_yaml
from cascade.config.adr_numbering import Entry, Place, next_number, scan, settle, target
from cascade.config.adr_template import decode, fill, heading, superseded_status
from cascade.config.adr_template import find_template as _template  # the name tests import
from cascade.base.text import printable


class LedgerOptions(NamedTuple):
    """How ``cascade new`` without ``--rule`` makes a ledger (None, "": the default)."""
    template: str | None = None
    source: str | None = None
    participants: list[str] | None = None
    protocol: str | None = None
    output: str | None = None
    context: str = ""


def new(title: str, options: LedgerOptions, *, rule: str | None = None,
        supersedes: str | None = None, area: str | None = None) -> int:
    if rule is not None:
        if given := [f"--{name}" for name, value in options._asdict().items() if value]:
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

def new_numbered(title: str, rule_name: str, supersedes: str | None = None,
                 area: str | None = None) -> int:
    title = " ".join(title.split())
    if not title or printable(title) != title:
        raise CascadeError("the title must be printable text, not empty")
    root = repo_root(Path.cwd())
    rules = RuleSet(root)
    rule = _named_rule(rules, root, rule_name)
    folder, shapes = target(rule, area)
    if folder:
        refuse_links(root, folder, "the document folder")
    entries = scan(root, rule, folder, shapes)
    place = settle(shapes, entries)
    date = _dt.date.today().isoformat()
    ident, number = next_number(entries, date)
    doc = refuse_links(root, place.document(folder, ident, title), "the new document")
    governing = rules.governing(doc)
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
                with contextlib.suppress(OSError):
                    os.unlink(root / made)
        raise
    _report(root, rule, doc, ledger, template_from, old)
    return 0


def _named_rule(rules, root: Path, name: str):
    """The rule ``name`` in force in the current folder, else the only one of that name."""
    here = Path.cwd().relative_to(root).as_posix() if Path.cwd() != root else ""
    in_force = {rule.name: rule for folder in rules.files_for(f"{here}/x" if here else "x")
                for rule in rules.rules_in(folder)}  # a nearer file's rule replaces a farther
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


# ---- --supersedes ---------------------------------------------------------------------------

def _old_document(root: Path, ref: str, entries: list[Entry], place: Place,
                  folder: str) -> str:
    """The document ``--supersedes`` names: a number in the folder, a path, or a log4brains
    slug (``20201002-title``, a package's ``core/20201002-title``)."""
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
    if not os.path.lexists(root / rel):
        by_slug = _slug_document(root, ref.strip().strip("/"), entries)
        if by_slug is None:
            raise CascadeError(f"--supersedes {ref}: no document numbered, named or at that "
                               "path", root / rel)
        rel = by_slug
    if (root / rel).is_dir():
        leaf = place.leaf or "index.md"
        rel = refuse_links(root, f"{rel}/{leaf}", "the superseded document")
    if not (root / rel).is_file():
        raise CascadeError("--supersedes: no such file", root / rel)
    return rel


def _slug_document(root: Path, ref: str, entries: list[Entry]) -> str | None:
    """The document a log4brains slug names: its file name without ``.md`` (a folder-per-ADR
    document: its folder's name) in this folder, or ``<package>/<slug>`` in the ``adrFolder``
    of that package in .log4brains.yml."""
    name = ref[:-3] if ref.endswith(".md") else ref
    for e in entries:
        stem = e.doc.rsplit("/", 2)[-2] if e.leaf else posixpath.splitext(e.doc)[0]
        if stem.rsplit("/", 1)[-1] == name:
            return e.doc
    package, _, rest = name.partition("/")
    config = root / LOG4BRAINS_FILE
    if not rest or not config.is_file():
        return None
    for folder, named in log4brains_folders(load_yaml(config)):
        doc = f"{folder}/{rest}.md"
        if named == package and (root / doc).is_file():
            return refuse_links(root, doc, "the superseded document")
    return None


class _Supersede:
    """The superseded document: its status changed, nothing else, and its ledger told."""

    def __init__(self, root: Path, rules, doc: str) -> None:
        self.root, self.doc, self.written = root, doc, False
        self.data = read_inside(root, doc, "the superseded document")
        staged = index_blobs(root, [doc]).get(doc)
        if staged is not None and staged != blob_id(self.data):
            raise CascadeError("has unstaged changes: stage or stash them first (cascade new "
                               "changes only its status, and would mix the two)", root / doc)
        self.text = decode(self.data, root / doc)
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
        self.rule = rules.governing(doc)
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
        self.line = superseded_status(self.status, new_text, ident, forward)
        self.new_data = docstatus.set_status(self.text, self.line).encode("utf-8")
        return docstatus.add_status_line(new_text, f"Supersedes [{self.title}]({back})")

    def write(self) -> None:
        """Its new status, and the revision in its ledger: recorded with the ledger's lock
        held, after what another writer appended (cascade.ledger.lock)."""
        ledgers = [self.root / self.ledger] if self.discussion is not None and self.ledger else []
        path = self.root / self.doc
        with ledger_lock(*ledgers, holder="cascade new"):
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
