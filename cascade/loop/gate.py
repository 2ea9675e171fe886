"""The gate behind ``cascade hook``, once a commit does touch governed paths: the ledgers it
involves are found (discover.py) and checked (prepare.py); here the pending turns run, a
ledger at consensus records its outcome and the next stage is created; each is then decided
from its staged text (decide.py)."""
from __future__ import annotations

import datetime as _dt
import shlex
from pathlib import Path
from typing import TextIO

from msgspec.structs import replace

from cascade.base.atomic import atomic_write
from cascade.config import templates
from cascade.base.docstatus import document_title
from cascade.base.errors import CascadeError
from cascade.loop.closing import close as close_one
from cascade.loop.item import Item, Ran
from cascade.loop.staging import Stager
from cascade.protocol.about import WIDTH, about, impasse
from cascade.protocol.discussion import Discussion
from cascade.protocol.record import artifact_paths
from cascade.protocol.requests import due, next_wave
from cascade.run.run_result import outcome_text
from cascade.run.protocol_run import Stepped, run_all
from cascade.base.safepath import refuse_links
from cascade.base.text import printable
from cascade.turns.display import LineProgress, redaction_lines
from cascade.turns.independence import clashes, refusal
from cascade.turns.settings import Settings
from cascade.turns.tiers import first_model, models_for


def close(root: Path, item: Item, out: TextIO, stager: Stager) -> Item:
    """After the turns: a ledger at consensus in its last phase records the outcome, and the
    document's status moves where its rule says so (cascade.loop.closing) -- unless
    pre-commit stashed an edit of the document (restoring it over the move would fail).
    Returns the item, with the outcome recorded."""
    d = item.ran.discussion
    if d is not None and not item.problems and not item.ran.failures:
        rule = item.rule
        if rule is not None and item.doc and not stager.may_write(item.doc):
            rule = rule.replace(status=None)
        closed = close_one(root, d, rule, item.doc, item.doc_data)
        if closed is not None:
            d.save()
            print(f"cascade: {item.doc or item.ledger}: {closed.describe(item.doc)} "
                  f"({item.ledger})", file=out)
            also = (item.doc,) if closed.status and item.doc else ()
            return replace(item, ran=replace(item.ran, closed=closed,
                                             appended=item.ran.appended + 1,
                                             also_add=item.ran.also_add + also))
    return item


def on_consensus(root: Path, item: Item, out: TextIO) -> None:
    rule = item.rule
    if rule is None or rule.on_consensus is None or item.doc is None:
        return
    target = rule.expand(rule.on_consensus.path, item.doc, key="on_consensus")
    path = root / target
    if path.exists():
        return
    d = item.ran.discussion
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


def _names(d) -> str:
    """Who the wave of ``d`` asks, by name."""
    return ", ".join(d.personas.get(r.alias).name for r in next_wave(d))


def _independence(item: Item, d: Discussion, settings: Settings, out: TextIO) -> None:
    """Say each clash of roles meant to judge independently on one model family, a line
    each (cascade.turns.independence), when the revision's run begins; under a rule with
    ``distinct_models: true``, refuse to run the discussion: a configuration error, before
    any model call."""
    run = d.state.run
    if run.outcome is not None:
        return
    rule = item.rule
    model_of = first_model(d.personas, rule.model if rule else None,
                           rule.models if rule else None, settings)
    found = clashes(run.steps, list(run.members), dict(run.fixed), model_of)
    if found and rule is not None and rule.distinct_models:
        raise CascadeError(refusal(rule, found), rule.file, rule.line_of("distinct_models"))
    if run.turns or run.setup.turns:
        return  # said when this revision's run began: not again on every attempt
    for clash in found:
        print(printable(f"cascade: {item.ledger}: warning: {clash.warning()}"), file=out)


def check_models(root: Path, items: list[Item]) -> None:
    """Before anything is written (the items prepared, not saved): when a turn is due that
    no model can answer -- no model configured at all: no persona's or rule's ``model:``, no
    CASCADE_MODEL, no declared provider, no embedded model -- one line says so, and how to
    configure one, naming the document (exit 2): no ledger is left behind, nobody "asked"."""
    settings = None
    for item in items:
        d = item.ran.discussion
        if d is None or not due(d):
            continue
        settings = settings or Settings.from_env(root)
        rule = item.rule
        for request in next_wave(d):
            persona = d.personas.get(request.alias)
            if persona is None:
                continue  # an unknown persona: its turn says so
            try:
                models_for(persona, request.role, request.tier, rule.model if rule else None,
                           rule.models if rule else None, settings)
            except CascadeError as exc:
                raise CascadeError(exc.message, root / (item.doc or item.ledger)) from None


def run_turns(root: Path, items: list[Item], out: TextIO) -> list[Item]:
    """Run the turns due on each ledger: the items, with what their runs appended."""
    due_now: list[tuple[int, Stepped]] = []
    for k, item in enumerate(items):
        d = item.ran.discussion
        assert d is not None
        if not due(d):
            continue
        due_now.append((k, Stepped(d, item.doc_data, item.rule.model if item.rule else None,
                                   item.rule.models if item.rule else None,
                                   bool(item.rule and item.rule.auto))))
    if not due_now:
        return items
    settings = Settings.from_env(root)
    for k, s in due_now:  # before any model call: a rule that forbids a clash refuses
        _independence(items[k], s.discussion, settings, out)
    # a protocol of phases asks one wave (named); any other runs its steps to an outcome or
    # a stop (its round)
    once = [(k, s) for k, s in due_now if s.discussion.protocol.steps.shape.one_wave]
    names = "; ".join([f"{items[k].ledger}: {_names(s.discussion)}" for k, s in once]
                      + [f"{items[k].ledger}: {s.discussion.protocol.title}, round "
                         f"{s.discussion.state.run.round}" for k, s in due_now
                         if (k, s) not in once])
    print(f"cascade: asking {names}", file=out, flush=True)
    results = run_all([s for _, s in due_now], settings, LineProgress(out))
    done = list(zip(due_now, results))
    ran: dict[int, Ran] = {}
    for (k, s), result in done:
        item = items[k]
        for text in result.tables:
            print(text, file=out)
        for note in result.notes:
            print(f"cascade: {item.ledger}: {note}", file=out)
        also_add = list(item.ran.also_add)
        if result.record or result.artifacts:  # the record and artifacts beside the ledger:
            for path in artifact_paths(Path(item.ledger), s.discussion.protocol.steps):
                if (root / path).is_file() and path.as_posix() not in also_add:
                    also_add.append(path.as_posix())
        ran[k] = replace(item.ran, replies=len([o for o in result.outcomes if o.ok]),
                         appended=item.ran.appended + result.appended,
                         failures=tuple(f"{o.persona.name} ({o.error})" if o.status == "skipped"
                                        else o.persona.name for o in result.failures),
                         also_add=tuple(also_add), waiting=result.waiting or item.ran.waiting)
        _ask(item.ledger, s.discussion, result, out)
    for line in redaction_lines([o for _, result in done for o in result.outcomes]):
        print(f"cascade: {line}", file=out)
    return [replace(item, ran=ran[k]) if k in ran else item for k, item in enumerate(items)]
