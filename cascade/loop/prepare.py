"""Before the turns: a staged ledger must only append to the committed one
(``check_staged``); a missing ledger is created, the rule's settings and the document's
revision are recorded (``prepare``)."""
from __future__ import annotations

import shlex
from pathlib import Path
from typing import TextIO

from msgspec.structs import replace

from cascade.check.appendonly import EDITS, first_edit, is_append
from cascade.check.merge import merge_problem
from cascade.base.docstatus import document_title
from cascade.base.errors import CascadeError, display_path
from cascade.base.gitio import git, index_blobs, merge_head, read_blobs, version_at
from cascade.ledger.meaning import changed_by_append, merge_lost
from cascade.ledger.records import PHASE_TRANSITION, SETTINGS, SOURCE_REVISION
from cascade.ledger.parse import parse
from cascade.check.governance import participants_of
from cascade.loop.item import Item
from cascade.protocol.authority import settings_fields
from cascade.protocol.state import block_id
from cascade.protocol.discussion import Discussion
from cascade.protocol.loader import load_protocol
from cascade.protocol.revisions import KINDS, NEW, record_revision
from cascade.protocol.setting import setting_of
from cascade.turns.redact import repository_patterns
from cascade.turns.settings import Settings


def create_ledger(root: Path, item: Item, save: bool = True) -> Discussion:
    """The rule's new ledger for ``item``'s document; written unless ``save`` is false (the
    gate writes it once it knows its turns can be asked)."""
    rule = item.rule
    assert rule is not None and item.doc is not None
    path = root / item.ledger
    try:
        steps = load_protocol(rule.protocol, root, where=rule.file).steps
        d = Discussion.create(document_title(item.doc, item.doc_data), rule.template, path=path,
                              source=item.doc, participants=list(participants_of(rule, steps)),
                              protocol=rule.protocol, consensus=rule.consensus,
                              setting=setting_of(root),
                              extra={**{k.title(): v for k, v in rule.options},
                                     **({"Rounds": str(rule.rounds)} if rule.rounds else {})}
                              or None)
    except CascadeError as exc:
        if exc.path not in (None, display_path(path)):
            raise  # a broken persona, protocol or template file: it names itself
        # The rule's own reference (an unknown template, persona or protocol, bad consensus
        # settings): name the rule that asked for it, at the line of that key.
        key = next((k for words, k in (("template", "template"), ("persona", "participants"),
                                       ("protocol", "protocol"), ("consensus", "consensus"))
                    if words in exc.message), "name")
        raise CascadeError(f"rule {rule.name!r}: {exc.message}", rule.file,
                           rule.line_of(key)) from None
    if save:
        d.save()
    return d


def check_settings(root: Path) -> None:
    """The model settings (the environment's, the providers files') and the repository's
    secret patterns, read before anything is written: a bad providers or pattern file, or a
    bad variable, stops the gate with its file and line (exit 2), not after a ledger was
    created."""
    Settings.from_env(root)
    repository_patterns(root)


def check_staged(root: Path, items: list[Item]) -> list[Item]:
    """Before any model call: each staged ledger must only append to the committed one (the
    rule ``check`` applies), carry no block under a persona's name that cascade did not write,
    and not end inside an open code fence. A problem blocks the commit, with file:line: the
    items, with the problems found."""
    staged = index_blobs(root, [i.ledger for i in items])
    texts = read_blobs(root, list(staged.values()))
    merging = merge_head(root)
    out = []
    for item in items:
        blob = staged.get(item.ledger)
        found = [] if blob is None else _staged_problems(root, item, blob, texts.get(blob, b""),
                                                         merging)
        out.append(replace(item, problems=item.problems + tuple(found)) if found else item)
    return out


def _staged_problems(root: Path, item: Item, blob: str, new: bytes,
                     merging: str | None) -> list[str]:
    problems: list[str] = []
    old = version_at(root, item.ledger)
    new_ledger = parse(new.decode("utf-8", "replace"), details=False)
    if old is not None:
        found = None
        if merging:
            theirs = version_at(root, item.ledger, merging)
            parents = [("HEAD", old)] + ([("MERGE_HEAD", theirs)] if theirs is not None else [])
            found = merge_problem(parents, new) or merge_lost(
                [(name, parse(data.decode("utf-8", "replace"), details=False))
                 for name, data in parents], new_ledger)
        elif not is_append(old, new):
            head_blob = git(root, "rev-parse", f"HEAD:{item.ledger}").decode().strip()
            line, kind = first_edit(root, head_blob, blob, old)
            found = (line, EDITS[kind])
        else:
            found = changed_by_append(parse(old.decode("utf-8", "replace"), details=False),
                                      new_ledger)
        if found:
            line, reason = found
            restore = f"git checkout HEAD -- {shlex.quote(item.ledger)}"
            return [f"{item.ledger}:{line}: {reason} (staged): a ledger only grows; "
                    + f"restore it with {restore}, then append"]
    fence = new_ledger.open_fence
    if fence:
        line = new_ledger.open_fence_line
        problems.append(f"{item.ledger}:{line}: unclosed code fence {fence}: close it "
                        "(anything appended would land inside it)")
    head_lines = 0 if old is None else old.count(b"\n") + (0 if old.endswith(b"\n") else 1)
    d = Discussion(root / item.ledger, new.decode("utf-8", "replace"), setting_of(root),
                   authority=item.authority, details=False)
    for forged in d.state.forged:
        if forged.line > head_lines:
            problems.append(
                f"{item.ledger}:{forged.line}: a block under {forged.author}'s name that "
                f"cascade did not write ({forged.reason}): it would not count; remove it")
    for event in d.state.unfounded:
        if event.line > head_lines:
            problems.append(
                f"{item.ledger}:{event.line}: a {event.kind} event that does not hold "
                f"({event.reason}): it would be ignored; remove it")
    return problems


def prepare(root: Path, item: Item, out: TextIO) -> Item:
    """Create the ledger if missing; record the rule's settings where the header differs;
    record a new revision of the document (keeping the votes people cast in this commit).
    Returns the item with what was done (``Ran``); nothing is written yet (the discussion's
    ``save()`` writes it, a new ledger whole)."""
    path = root / item.ledger
    created = not path.exists()
    appended, carried = 0, ""
    if created:
        if item.rule is None or item.doc is None:
            raise CascadeError("staged ledger is missing from the working tree", path)
        d = Discussion(path, create_ledger(root, item, save=False).file.text, setting_of(root),
                       authority=item.authority)
        d.file.exists = False  # written whole by its first save
    else:
        d = Discussion.load(path, setting_of(root), authority=item.authority)
    differs = d.header_differences()
    if differs and item.authority is not None:
        d.add_event(SETTINGS, "", rule=item.rule.name if item.rule else None,
                    **settings_fields(item.authority))
        if "protocol" in differs:  # the rule's protocol starts at its first phase
            d.add_event(PHASE_TRANSITION, f"{_recorded_phase(d)} → {d.protocol.first_phase}")
        print(f"cascade: {item.ledger}: its header differs from {item.authority.where} in "
              f"{', '.join(differs)}: the rule decides; recorded its settings", file=out)
        appended += 1
    d.current_phase  # an unknown phase is a configuration error, before any call
    if item.doc and item.doc_data is not None:
        seen = [e.line for e in d.events if e.kind == SOURCE_REVISION
                and e.value.split()[:1] == [item.doc_blob]]
        kind = record_revision(d, item.doc, item.doc_data,
                               revote=item.rule is None or item.rule.revote_on_change,
                               keep=lambda: _votes_cast_in_this_commit(root, item, d))
        if kind in KINDS:
            carried = KINDS[kind]
            print(f"cascade: {item.doc}: {KINDS[kind]}: recorded the revision in "
                  f"{item.ledger}; the review holds, nobody is asked", file=out)
        if kind == NEW and seen:
            print(f"cascade: {item.doc}: back to the text of an earlier revision ({item.ledger}"
                  f" line {seen[-1]}), recorded before cascade kept its core: the panel is "
                  "asked again", file=out)
        appended += 1 if kind else 0
    return replace(item, ran=replace(item.ran, discussion=d, created=created,
                                     appended=item.ran.appended + appended, carried=carried))


def _recorded_phase(d: Discussion) -> str:
    phase = d.header.phase or "start"
    for event in d.events:
        if event.kind == PHASE_TRANSITION and event.fields.get("to"):
            phase = event.fields["to"]
    return phase


def _votes_cast_in_this_commit(root: Path, item: Item, d: Discussion) -> list[str]:
    """People's votes added since the last commit: cast for the revision being committed."""
    old = version_at(root, item.ledger)
    head_lines = 0 if old is None else old.count(b"\n") + (0 if old.endswith(b"\n") else 1)
    registry = d.personas
    return [block_id(c) for c in d.current_comments()
            if c.vote and c.line > head_lines and registry.of_author(c.author) is None
            and c.origin is None]
