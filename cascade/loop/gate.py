"""The gate behind ``cascade hook``, once a commit does touch governed paths: check the staged
ledgers, create missing ones, record the rule's settings and the document's revision, run the
pending turns, and decide from the *staged* ledgers with the verdict ``check`` and ``status``
use (cascade.protocol.state.gate)."""
from __future__ import annotations

import datetime as _dt
import glob as _glob
import os
import shlex
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TextIO

from cascade.atomic import atomic_write
from cascade.check.appendonly import first_edit, is_append
from cascade.check.merge import merge_problem
from cascade.config import templates
from cascade.config.rules import Rule
from cascade.docstatus import document_title
from cascade.errors import CascadeError, display_path
from cascade.gitio import (
    SYMLINK_MODE,
    git,
    index_blobs,
    index_entries,
    merge_head,
    read_blobs,
    tracked,
    version_at,
)
from cascade.ledger.meaning import changed_by_append, merge_lost
from cascade.ledger.model import PHASE_TRANSITION, SETTINGS, SOURCE_REVISION
from cascade.ledger.parse import parse
from cascade.loop import attribution
from cascade.loop.closing import close as close_one
from cascade.loop.governance import authority as rule_authority
from cascade.loop.governance import check_shared_ledgers, ledger_rule, participants_of
from cascade.loop.rules import RuleSet
from cascade.loop.staging import Stager
from cascade.protocol.about import WIDTH, about, impasse
from cascade.protocol.authority import Authority, settings_fields
from cascade.protocol.derived import block_id
from cascade.protocol.discussion import Discussion
from cascade.protocol.loader import load_protocol
from cascade.protocol.record import artifact_paths
from cascade.protocol.requests import due, next_wave
from cascade.protocol.result import outcome_text
from cascade.protocol.revisions import KINDS, NEW, record_revision
from cascade.protocol.run import Stepped, run_all
from cascade.protocol.verdict import gate
from cascade.safepath import first_link, refuse_links
from cascade.text import printable
from cascade.turns.display import LineProgress, redaction_lines
from cascade.turns.settings import Settings


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


def find_ledger(root: Path, rule: Rule, doc: str) -> str:
    if "{date}" not in rule.discussion:
        return rule.ledger_path(doc)
    pattern = rule.ledger_path(doc, date="*")
    for match in sorted(_glob.glob(str(root / pattern))):
        try:
            d = Discussion.load(match, root=root)
            if d.source == doc:
                return Path(match).relative_to(root).as_posix()
        except CascadeError:
            continue
    return rule.ledger_path(doc)


def discover(root: Path, governed: dict[str, Rule], ledgers: list[str], rules: RuleSet) -> list[Item]:
    check_shared_ledgers(governed, tracked(root), rules)
    items: dict[str, Item] = {}
    for doc, rule in governed.items():
        ledger = find_ledger(root, rule, doc)
        items.setdefault(ledger, Item(ledger, doc, rule, rule_authority(rule, root)))
    linked: dict[str, str] = {}
    for ledger in ledgers:
        if ledger in items:
            continue
        path = root / ledger
        source = None
        link = first_link(root, ledger)
        if link is not None:
            linked[ledger] = link
        elif path.is_file():
            source = Discussion.load(path, root=root).source
        rule = ledger_rule(rules, ledger, source)
        items[ledger] = Item(ledger, source if rule else None, rule,
                             rule_authority(rule, root) if rule else None)
    homeless = [i for i in items.values() if i.doc and i.ledger not in ledgers
                and not (root / i.ledger).exists()]
    if homeless:
        _follow_renames(root, homeless, items, rules)
    docs = [i.doc for i in items.values() if i.doc]
    entries = index_entries(root, docs)
    data = read_blobs(root, [blob for _mode, blob in entries.values()])
    for item in items.values():
        link = linked.get(item.ledger) or first_link(root, item.ledger)
        if link is not None:
            item.problems.append(_link_problem(item.ledger, link, "the ledger"))
        if item.doc and item.doc in entries:
            mode, item.doc_blob = entries[item.doc]
            if mode == SYMLINK_MODE:
                item.problems.append(_link_problem(item.doc, item.doc, "the document"))
            else:
                item.doc_data = data.get(item.doc_blob)
    return list(items.values())


def _staged_renames(root: Path) -> dict[str, str]:
    """The renames this commit stages, new path -> old path (git's own detection)."""
    out = git(root, "diff-index", "--cached", "-M", "-z", "--name-status", "HEAD", check=False)
    fields = out.decode("utf-8", "surrogateescape").split("\0")
    renames, i = {}, 0
    while i < len(fields) - 1:
        status = fields[i]
        if status.startswith(("R", "C")):
            if status.startswith("R"):
                renames[fields[i + 2]] = fields[i + 1]
            i += 3
        else:
            i += 2
    return renames


def _follow_renames(root: Path, homeless: list[Item], items: dict[str, Item],
                    rules: RuleSet) -> None:
    """A document whose ledger does not exist yet, renamed in this commit from one whose
    ledger does: its discussion is that ledger (the hook appends there and asks for the
    ``git mv``), not a new one."""
    renames = _staged_renames(root)
    for item in homeless:
        old = renames.get(item.doc or "")
        rule = rules.governing(old) if old else None
        if old is None or rule is None:
            continue
        ledger = find_ledger(root, rule, old)
        if ledger == item.ledger or first_link(root, ledger) is not None:
            continue
        try:
            # its source is the old path, or already the new one (an earlier attempt of this
            # rename recorded it there)
            if not (root / ledger).is_file() or \
                    Discussion.load(root / ledger, root=root).source not in (old, item.doc):
                continue
        except CascadeError:
            continue
        del items[item.ledger]
        other = items.pop(ledger, None)  # the old ledger, staged in this commit too
        item.renamed_from, item.move_to, item.ledger = old, item.ledger, ledger
        items[ledger] = item
        if other is not None and other.problems:
            item.problems += other.problems


def _link_problem(path: str, link: str, what: str) -> str:
    through = "is" if link == path else f"passes through {link}, which is"
    return (f"{path}:1: {what} {through} a symbolic link: cascade never follows one (commit "
            "the file itself)")


def create_ledger(root: Path, item: Item) -> Discussion:
    rule = item.rule
    assert rule is not None and item.doc is not None
    path = root / item.ledger
    try:
        steps = load_protocol(rule.protocol, root, where=rule.file).stepped
        d = Discussion.create(document_title(item.doc, item.doc_data), rule.template, path=path,
                              source=item.doc, participants=list(participants_of(rule, steps)),
                              protocol=rule.protocol, consensus=rule.consensus, root=root,
                              extra={k: v for k, v in (
                                  ("Mode", rule.mode), ("Strategy", rule.strategy),
                                  ("Flow", rule.flow), ("Tier", rule.tier),
                                  ("Rounds", str(rule.rounds) if rule.rounds else None)) if v}
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
    d.save()
    return d


def check_staged(root: Path, items: list[Item]) -> None:
    """Before any model call: each staged ledger must only append to the committed one (the
    rule ``check`` applies), carry no block under a persona's name that cascade did not write,
    and not end inside an open code fence. A problem blocks the commit, with file:line."""
    staged = index_blobs(root, [i.ledger for i in items])
    texts = read_blobs(root, list(staged.values()))
    merging = merge_head(root)
    for item in items:
        blob = staged.get(item.ledger)
        if blob is None:
            continue
        new = texts.get(blob, b"")
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
                found = (line, {"edited": "ledger text edited", "removed": "ledger text removed",
                                "inserted": "text inserted into the ledger's earlier text"}[kind])
            else:
                found = changed_by_append(parse(old.decode("utf-8", "replace"), details=False),
                                          new_ledger)
            if found:
                line, reason = found
                item.problems.append(
                    f"{item.ledger}:{line}: {reason} (staged): a ledger only grows; restore it "
                    f"with git checkout HEAD -- {shlex.quote(item.ledger)}, then append")
                continue
        fence = getattr(new_ledger, "open_fence", None)
        if fence:
            item.problems.append(f"{item.ledger}:{new_ledger.open_fence_line}: unclosed code fence "  # type: ignore[attr-defined]
                                 f"{fence}: close it (anything appended would land inside it)")
        head_lines = 0 if old is None else old.count(b"\n") + (0 if old.endswith(b"\n") else 1)
        d = Discussion(root / item.ledger, new.decode("utf-8", "replace"), root=root,
                       authority=item.authority, details=False)
        for forged in d.state.forged:
            if forged.line > head_lines:
                item.problems.append(
                    f"{item.ledger}:{forged.line}: a block under {forged.author}'s name that "
                    f"cascade did not write ({forged.reason}): it would not count; remove it")
        for event in d.state.unfounded:
            if event.line > head_lines:
                item.problems.append(
                    f"{item.ledger}:{event.line}: a {event.kind} event that does not hold "
                    f"({event.reason}): it would be ignored; remove it")


def prepare(root: Path, item: Item, out: TextIO) -> None:
    """Create the ledger if missing; record the rule's settings where the header differs;
    record a new revision of the document (keeping the votes people cast in this commit)."""
    path = root / item.ledger
    if not path.exists():
        if item.rule is None or item.doc is None:
            raise CascadeError("staged ledger is missing from the working tree", path)
        create_ledger(root, item)
        item.created = True
    d = Discussion.load(path, root=root, authority=item.authority)
    differs = d.header_differences()
    if differs and item.authority is not None:
        d.add_event(SETTINGS, "", rule=item.rule.name if item.rule else None,
                    **settings_fields(item.authority))
        if "protocol" in differs:  # the rule's protocol starts at its first phase
            d.add_event(PHASE_TRANSITION, f"{_recorded_phase(d)} → {d.protocol.first_phase}")
        print(f"cascade: {item.ledger}: its header differs from {item.authority.where} in "
              f"{', '.join(differs)}: the rule decides; recorded its settings", file=out)
        item.appended += 1
    d.current_phase  # an unknown phase is a configuration error, before any call
    if item.doc and item.doc_data is not None:
        seen = [e.line for e in d.events if e.kind == SOURCE_REVISION
                and e.value.split()[:1] == [item.doc_blob]]
        kind = record_revision(d, item.doc, item.doc_data,
                               revote=item.rule is None or item.rule.revote_on_change,
                               keep=lambda: _votes_cast_in_this_commit(root, item, d))
        if kind in KINDS:
            item.carried = KINDS[kind]
            print(f"cascade: {item.doc}: {KINDS[kind]}: recorded the revision in "
                  f"{item.ledger}; the review holds, nobody is asked", file=out)
        if kind and kind == NEW and seen:
            print(f"cascade: {item.doc}: back to the text of an earlier revision ({item.ledger}"
                  f" line {seen[-1]}), recorded before cascade kept its core: the panel is "
                  "asked again", file=out)
        item.appended += 1 if kind else 0
    d.save()
    item.discussion = d


def _recorded_phase(d: Discussion) -> str:
    phase = d.header.phase or "start"
    for event in d.events:
        if event.kind == "PHASE-TRANSITION" and event.fields.get("to"):
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


def next_step(item: Item, index_file: str | None = None) -> str:
    """The exact command that stages the ledger and commits again, for the way this commit
    was made: git names its index file by the form of `git commit` (FACTS: `index.lock` for
    -a, `next-index-*.lock` for `git commit <path>`). A bare `git add <ledger>` after
    `git commit -a` would land a ledger-only commit under the document's message."""
    ledger = " ".join(shlex.quote(p) for p in [*([] if item.ledger_staged else
                                                 [item.move_to or item.ledger]), *item.also_add])
    move = (f"git mv {shlex.quote(item.ledger)} {shlex.quote(item.move_to)} && "
            if item.move_to else "")
    name = Path(index_file if index_file is not None
                else os.environ.get("GIT_INDEX_FILE", "")).name
    if name == "index.lock":
        return f"{move}git add {ledger} && git commit -a"
    if name.startswith("next-index"):
        paths = " ".join(shlex.quote(p) for p in (item.renamed_from, item.doc,
                                                   item.move_to and item.ledger,
                                                   item.move_to or item.ledger) if p)
        return f"{move}git add {ledger} && git commit {paths}"
    return f"{move}git add {ledger}"


def decide(root: Path, items: list[Item]) -> None:
    """Decide each item from its staged ledger."""
    blobs = index_blobs(root, [i.ledger for i in items])
    texts = read_blobs(root, list(blobs.values()))
    for item in items:
        add = next_step(item)
        if item.problems:
            item.verdict = item.problems[0].split(": ", 1)[1]
            continue
        d = item.discussion
        if d is None:
            item.verdict = "not reviewed: fix the problem above first (no model was asked)"
            continue
        if item.failures:
            item.verdict = (f"{', '.join(item.failures)} failed (see above); their votes do "
                            "not count: commit again to retry")
            continue
        if item.staged:
            _decide_staged(root, item, texts.get(blobs.get(item.ledger, ""), b""))
            continue
        if item.move_to:
            item.verdict = (f"renamed from {shlex.quote(item.renamed_from or '')}: its discussion"
                            f" follows it (recorded in {shlex.quote(item.ledger)}): {add}")
            continue
        if item.created:
            item.verdict = f"new ledger with the panel's reviews: read it, reply, then {add}"
            continue
        if item.waiting:
            item.verdict = (f"waiting for a person: {item.waiting}; answer it, then {add}"
                            if item.appended else f"waiting for a person: {item.waiting}")
            continue
        if item.closed is not None and not item.replies:
            item.verdict = f"{item.closed.describe(item.doc)}: {add}"  # type: ignore[attr-defined]
            continue
        if item.appended and item.carried and not item.replies:
            item.verdict = f"{item.carried}: the revision is recorded, nobody was asked: {add}"
            continue
        if item.appended:
            entries = ("1 new entry: read it" if item.appended == 1
                       else f"{item.appended} new entries: read them")
            item.verdict = (f"{entries} (git diff "
                            f"{shlex.quote(item.ledger)}), reply, then {add}")
            continue
        if item.ledger not in blobs:
            item.verdict = f"ledger not staged: {add}"
            continue
        staged = texts.get(blobs[item.ledger], b"")
        if staged != (root / item.ledger).read_bytes():
            item.verdict = f"the ledger has unstaged changes: {add}"
            continue
        verdict = _staged_verdict(root, item, staged)
        item.passed = verdict.ok
        item.verdict = verdict.reason
        if verdict.blocked_by_votes and item.doc:
            item.verdict += (f"; ways out: answer in the ledger, ask one persona with "
                             f"@alias, or cascade decide {shlex.quote(item.doc)} READY "
                             "--reason '...'")


def _staged_verdict(root: Path, item: Item, staged: bytes):
    """The gate's verdict (cascade.protocol.verdict) on the staged ledger ``staged``, its
    people known by the commits that added their lines."""
    staged_d = Discussion(root / item.ledger, staged.decode("utf-8", "replace"), root=root,
                          authority=item.authority)
    staged_d = attribution.knowing_authors(root, item.ledger, staged_d)
    return gate(staged_d.state, item.doc_blob, item.doc, item.doc_data)


def _decide_staged(root: Path, item: Item, staged: bytes) -> None:
    """The hook staged what it wrote: the staged ledger decides, in this very commit. Blocked,
    the verdict says in one line why and what to do; after `git commit -a` or `git commit
    <path>` git drops the index the ledger was staged in, so that includes the `git add`."""
    name = Path(os.environ.get("GIT_INDEX_FILE", "")).name
    dropped = name == "index.lock" or name.startswith("next-index")
    ledger = shlex.quote(item.ledger)
    if dropped:
        unstaged = replace(item, ledger_staged=False,
                           also_add=[p for p in item.staged_paths if p != item.ledger])
        again = f"then {next_step(unstaged)}"
        read = f"read the replies in {ledger}"
    else:
        again, read = "commit again", f"read the replies (staged: git diff --cached {ledger})"
    if item.waiting:
        where = f"({ledger}{'' if dropped else ', staged'})"
        item.verdict = (f"waiting for a person: {item.waiting}; answer it in the ledger "
                        f"{where}, {again}")
        return
    verdict = _staged_verdict(root, item, staged)
    item.passed = verdict.ok
    item.verdict = verdict.reason
    if verdict.ok:
        return
    if item.appended:
        item.verdict += f": {read}, answer in the ledger, {again}"
    elif dropped:
        item.verdict += f": {again.removeprefix('then ')}"
    if verdict.blocked_by_votes and item.doc:
        item.verdict += (f"; or ask one persona with @alias, or cascade decide "
                         f"{shlex.quote(item.doc)} READY --reason '...'" if item.appended else
                         f"; ways out: answer in the ledger, ask one persona with @alias, or "
                         f"cascade decide {shlex.quote(item.doc)} READY --reason '...'")


def _votes(d: Discussion) -> str:
    result = d.consensus_result
    text = " ".join(f"{v}:{n}" for v, n in result.counts.items() if n) or "-"
    if result.advisory:
        panel = {v: 0 for v in result.counts}
        for vote in result.advisory.values():
            panel[vote] += 1
        text += " (advisory: " + " ".join(f"{v}:{n}" for v, n in panel.items() if n) + ")"
    if d.decision is not None:
        text += f" (decided {d.decision.vote})"
    return text


def status_table(items: list[Item]) -> str:
    rows = [("ledger", "phase", "votes", "status")]
    for item in items:
        d = item.discussion
        rows.append((item.ledger, d.phase if d else "-", _votes(d) if d else "-",
                     ("ok: " if item.passed else "blocked: ") + item.verdict))
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r[:3], widths)) + "  " + r[3]
                     for r in rows)


def close(root: Path, items: list[Item], out: TextIO, stager: Stager | None = None) -> None:
    """After the turns: a ledger at consensus in its last phase records the outcome, and the
    document's status moves where its rule says so (cascade.loop.closing) -- unless
    pre-commit stashed an edit of the document (restoring it over the move would fail)."""
    for item in items:
        d = item.discussion
        if d is None or item.problems or item.failures:
            continue
        rule = item.rule
        if rule is not None and item.doc and stager is not None and not stager.may_write(item.doc):
            rule = rule.replace(status=None)
        closed = close_one(root, d, rule, item.doc, item.doc_data)
        if closed is None:
            continue
        d.save()
        item.closed = closed
        item.appended += 1
        if closed.status and item.doc:
            item.also_add.append(item.doc)
        print(f"cascade: {item.doc or item.ledger}: {closed.describe(item.doc)} "
              f"({item.ledger})", file=out)


def on_consensus(root: Path, item: Item, out: TextIO) -> None:
    rule = item.rule
    if rule is None or rule.on_consensus is None or item.doc is None:
        return
    target = rule.expand(rule.on_consensus.path, item.doc, key="on_consensus")
    path = root / target
    if path.exists():
        return
    d = item.discussion
    try:
        text = templates.render("documents", rule.on_consensus.template, root,
                                title=d.title if d else document_title(item.doc, item.doc_data),
                                source=item.doc, ledger=item.ledger,
                                created=_dt.date.today().isoformat())
    except CascadeError as exc:
        if exc.path is not None:
            raise  # the template file itself is wrong: it names itself
        raise CascadeError(f"rule {rule.name!r} on_consensus: {exc.message}", rule.file,
                           rule.line_of("on_consensus")) from None
    refuse_links(root, target, "the on_consensus document", where=rule.file,
                 line=rule.line_of("on_consensus"))
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, text.encode("utf-8"))
    print(f"cascade: consensus on {item.doc}: created {target} from template "
          f"{rule.on_consensus.template!r}, the next stage (review it, then git add "
          f"{shlex.quote(target)})", file=out)


def _ask(ledger: str, d: Discussion, result, out: TextIO) -> None:
    """What a person must answer after a step protocol's run, and what it is about, a line
    an item: the open decision point (cascade.protocol.about), or at an impasse what the
    protocol recommends."""
    recommends = impasse(d.state.run) if result.outcome == "IMPASSE" else []
    if recommends:  # a person decides: what the protocol recommends, first
        print(printable(f"cascade: {ledger}: {outcome_text(result)}"), file=out)
        for line in recommends:
            print(printable(f"  {line}"), file=out)
    if result.waiting:
        print(f"cascade: {ledger}: waiting for a person: {result.waiting}", file=out)
        told = about(d.state.run, d.personas)
        for line in told.lines(WIDTH)[1:] if told is not None else []:
            print(printable(line), file=out)


def run_turns(root: Path, items: list[Item], out: TextIO) -> None:
    due_now: list[tuple[Item, Stepped]] = []
    for item in items:
        d = item.discussion
        assert d is not None
        if not due(d):
            continue
        # a protocol whose steps are phases asks one wave (its planner's); any other runs its
        # steps to an outcome or a stop
        wave = next_wave(d) if d.protocol.stepped is None else None
        due_now.append((item, Stepped(d, item.doc_data, item.rule.model if item.rule else None,
                                      item.rule.models if item.rule else None,
                                      bool(item.rule and item.rule.auto), wave)))
    if not due_now:
        return
    settings = Settings.from_env()
    waves = [(i, s) for i, s in due_now if s.pending is not None]
    names = "; ".join([f"{item.ledger}: {', '.join(p.persona.name for p in s.pending or [])}"
                       for item, s in waves]
                      + [f"{item.ledger}: {s.discussion.protocol.title}, round "
                         f"{s.discussion.state.run.round}" for item, s in due_now
                         if s.pending is None])
    print(f"cascade: asking {names}", file=out, flush=True)
    results = run_all([s for _, s in due_now], settings, LineProgress(out))
    done = list(zip(due_now, results))
    for (item, s), result in done:
        if s.pending is not None:
            continue
        item.replies = len([o for o in result.outcomes if o.ok])
        item.appended += result.appended
        item.failures = [f"{o.persona.name} ({o.error})" if o.status == "skipped"
                         else o.persona.name for o in result.failures]
        for text in result.tables:
            print(text, file=out)
        for note in result.notes:
            print(f"cascade: {item.ledger}: {note}", file=out)
        if result.record or result.artifacts:  # the record and artifacts beside the ledger:
            for path in artifact_paths(Path(item.ledger), s.discussion.protocol.steps):
                if (root / path).is_file() and path.as_posix() not in item.also_add:
                    item.also_add.append(path.as_posix())
        item.waiting = result.waiting or item.waiting
        _ask(item.ledger, s.discussion, result, out)
    outcomes = ([o for (_, s), result in done if s.pending is not None for o in result.outcomes]
                + [o for (_, s), result in done if s.pending is None for o in result.outcomes])
    for line in redaction_lines(outcomes):
        print(f"cascade: {line}", file=out)
    for (item, s), result in done:
        if s.pending is None:
            continue
        item.replies = sum(1 for o in result.outcomes if o.ok)
        item.appended += item.replies + (1 if result.advanced else 0)
        item.failures = [o.persona.name for o in result.outcomes if not o.ok]
