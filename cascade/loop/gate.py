"""The gate behind ``cascade hook``, once a commit does touch governed paths: create ledgers,
record source revisions, run the pending turns, and decide from the *staged* ledgers."""
from __future__ import annotations

import glob as _glob
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from cascade.errors import CascadeError
from cascade.ledger.discussion import Discussion
from cascade.loop.gitio import index_blobs, read_blobs
from cascade.loop.rules import Rule, RuleSet

_HEADING = re.compile(r"^#[ \t]+(.+?)[ \t#]*$", re.M)


@dataclass
class Item:
    """One involved ledger."""

    ledger: str  # repository-relative
    doc: str | None
    rule: Rule | None
    doc_blob: str | None = None  # the document's blob in the index git is using
    doc_data: bytes | None = None
    created: bool = False
    appended: int = 0  # blocks and events appended this run
    discussion: Discussion | None = None
    failures: list[str] = field(default_factory=list)
    verdict: str = ""
    passed: bool = False


def _find_ledger(root: Path, rule: Rule, doc: str) -> str:
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
    items: dict[str, Item] = {}
    for doc, rule in governed.items():
        ledger = _find_ledger(root, rule, doc)
        items.setdefault(ledger, Item(ledger, doc, rule))
    for ledger in ledgers:
        if ledger in items:
            continue
        path = root / ledger
        source = None
        if path.is_file():
            source = Discussion.load(path, root=root).source
        rule = rules.governing(source) if source and rules.files_for(source) else None
        items[ledger] = Item(ledger, source, rule)
    docs = [i.doc for i in items.values() if i.doc]
    blobs = index_blobs(root, docs)
    data = read_blobs(root, list(blobs.values()))
    for item in items.values():
        if item.doc and item.doc in blobs:
            item.doc_blob = blobs[item.doc]
            item.doc_data = data.get(item.doc_blob)
    return list(items.values())


def _title(doc: str, data: bytes | None) -> str:
    if data:
        m = _HEADING.search(data.decode("utf-8", "replace"))
        if m:
            return m.group(1)
    return Path(doc).stem.replace("-", " ").replace("_", " ")


def _create(root: Path, item: Item) -> Discussion:
    rule = item.rule
    assert rule is not None and item.doc is not None
    try:
        d = Discussion.create(_title(item.doc, item.doc_data), rule.template, path=root / item.ledger,
                              source=item.doc, participants=list(rule.participants),
                              protocol=rule.protocol, consensus=rule.consensus, root=root)
    except CascadeError as exc:  # name the rule that asked for it
        key = next((k for word, k in (("template", "template"), ("persona", "participants"),
                                      ("protocol", "protocol")) if word in exc.message), "name")
        raise CascadeError(f"rule {rule.name!r}: {exc.message}", rule.file,
                           rule.line_of(key)) from None
    d.save()
    return d


def prepare(root: Path, item: Item) -> None:
    """Create the ledger if missing; record a new source revision."""
    from cascade.ledger.model import SOURCE_REVISION, VOTE_RESET

    path = root / item.ledger
    if not path.exists():
        if item.rule is None or item.doc is None:
            raise CascadeError("staged ledger is missing from the working tree", path)
        _create(root, item)
        item.created = True
    d = Discussion.load(path, root=root)
    d.current_phase  # an unknown phase is a configuration error, before any call
    if item.doc_blob and d.source_revision != item.doc_blob:
        earlier = d.source_revision
        d.add_event(SOURCE_REVISION, item.doc_blob, path=item.doc)
        if earlier is not None and (item.rule is None or item.rule.revote_on_change):
            d.add_event(VOTE_RESET, "the document changed")
        d.save()
        item.appended += 1
    item.discussion = d


def decide(root: Path, items: list[Item]) -> None:
    """Decide each item from its staged ledger."""
    blobs = index_blobs(root, [i.ledger for i in items])
    texts = read_blobs(root, list(blobs.values()))
    for item in items:
        d = item.discussion
        assert d is not None
        add = f"git add {item.ledger}"
        if item.failures:
            item.verdict = f"{len(item.failures)} persona(s) failed (see above); commit again to retry"
            continue
        if item.created:
            item.verdict = f"new ledger with the panel's reviews: read it, reply, then {add}"
            continue
        if item.appended:
            item.verdict = f"{item.appended} new entries: read them (git diff {item.ledger}), reply, then {add}"
            continue
        if item.ledger not in blobs:
            item.verdict = f"ledger not staged: {add}"
            continue
        staged = texts.get(blobs[item.ledger], b"")
        if staged != (root / item.ledger).read_bytes():
            item.verdict = f"the ledger has unstaged changes: {add}"
            continue
        if item.doc_blob and d.source_revision != item.doc_blob:
            item.verdict = f"the ledger reviewed another revision of {item.doc}: {add}"
            continue
        result = d.consensus_result
        if result.reached and result.outcome == "READY":
            item.passed = True
            item.verdict = f"consensus READY ({result.reason})"
            continue
        if result.reached:
            item.verdict = f"consensus {result.outcome}: the panel rejects this ({result.reason})"
            continue
        reason = result.reason
        if result.missing:
            reason += f"; waiting for {', '.join(result.missing)}"
        item.verdict = reason


def _votes(d: Discussion) -> str:
    result = d.consensus_result
    text = " ".join(f"{v}:{n}" for v, n in result.counts.items() if n) or "-"
    if result.advisory:
        panel = {v: 0 for v in result.counts}
        for vote in result.advisory.values():
            panel[vote] += 1
        text += " (panel, advisory: " + " ".join(f"{v}:{n}" for v, n in panel.items() if n) + ")"
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


def on_consensus(root: Path, item: Item, out: TextIO) -> None:
    rule = item.rule
    if rule is None or rule.on_consensus is None or item.doc is None:
        return
    target = rule.expand(rule.on_consensus.path, item.doc, key="on_consensus")
    path = root / target
    if path.exists():
        return
    import datetime as _dt

    from cascade.atomic import atomic_write
    from cascade.config import templates

    d = item.discussion
    try:
        text = templates.render("documents", rule.on_consensus.template, root,
                                title=d.title if d else _title(item.doc, item.doc_data),
                                source=item.doc, ledger=item.ledger,
                                created=_dt.date.today().isoformat())
    except CascadeError as exc:
        raise CascadeError(f"rule {rule.name!r} on_consensus: {exc.message}", rule.file,
                           rule.line_of("on_consensus")) from None
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, text.encode("utf-8"))
    print(f"cascade: consensus on {item.doc}: created {target} from template "
          f"{rule.on_consensus.template!r}, the next stage (review it, then git add it)", file=out)


def run_turns(root: Path, items: list[Item], out: TextIO) -> None:
    from cascade.turns.display import LineProgress, failure_lines, redaction_lines
    from cascade.turns.pending import pending_turns
    from cascade.turns.runner import Job, run
    from cascade.turns.settings import Settings

    jobs: list[tuple[Item, Job]] = []
    for item in items:
        d = item.discussion
        assert d is not None
        pending = pending_turns(d)
        if pending:
            jobs.append((item, Job(d, pending, source_data=item.doc_data,
                                   rule_model=item.rule.model if item.rule else None)))
    if not jobs:
        return
    settings = Settings.from_env()
    names = "; ".join(f"{item.ledger}: {', '.join(p.persona.name for p in job.pending)}"
                      for item, job in jobs)
    print(f"cascade: asking {names}", file=out, flush=True)
    run([job for _, job in jobs], settings, LineProgress(out))
    outcomes = [o for _, job in jobs for o in job.outcomes]
    for line in redaction_lines(outcomes):
        print(f"cascade: {line}", file=out)
    for item, job in jobs:
        item.appended += sum(1 for o in job.outcomes if o.ok) + (1 if job.advanced_to else 0)
        item.failures = failure_lines([o for o in job.outcomes if not o.ok])
        for line in item.failures:
            print(line, file=out)
