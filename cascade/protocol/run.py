"""Run a protocol on one ledger: waves of turns (a blind step's speakers at once, a
sequential step's one at a time) until the protocol reaches its outcome, the run's budget
ends, or a persona fails; a protocol whose steps are phases (planner ``respond``) runs one
wave of whoever is concerned, then its phase's ``advance`` trigger. Each reply is appended
as a whole block the moment it arrives, stamped with its message id, step, round,
references and fields; a table follows a step that asks for one; the round and the outcome
are events. The ledger is the checkpoint: a run that stops anywhere resumes where the file
ends, asking no one twice (cascade.protocol.engine).
"""
from __future__ import annotations

import asyncio
import dataclasses
import time
from dataclasses import dataclass, field

from cascade.errors import CascadeError
from cascade.ledger.model import NEXT, OUTCOME, ROUND, SOURCE_REVISION, Comment, Event
from cascade.markdown import cell, sentence
from cascade.protocol.discussion import Discussion, is_transition
from cascade.protocol.engine import question
from cascade.protocol.fields import read_fields, sections
from cascade.protocol.registry import TRIGGERS
from cascade.protocol.requests import plan
from cascade.protocol.runstate import Request, Run
from cascade.protocol.visibility import VISIBILITIES
from cascade.revision import blob_id
from cascade.turns.cache import ReplyCache, cache_dir, prompt_key
from cascade.turns.replies import Reply, ReplyError, parse_reply
from cascade.turns.runner import (
    Call,
    Failed,
    Outcome,
    Progress,
    Shared,
    ask,
    ask_wave,
    record_failure,
)
from cascade.turns.settings import Settings
from cascade.turns.sources import SourceText, read_source
from cascade.turns.tiers import models_for

TOOL = "Cascade"  # the author of the blocks the tool writes itself (tables)


@dataclass
class Result:
    outcome: str | None = None  # READY | IMPASSE; None: not concluded (stopped, or waiting)
    round: int = 1
    outcomes: list[Outcome] = field(default_factory=list)
    stopped: str = ""  # why the run stopped before an outcome
    appended: int = 0
    tables: list[str] = field(default_factory=list)  # the tables written, as printed
    record: str | None = None  # the record file written at the conclusion (its path)
    waiting: str | None = None  # the open decision point's question, when the run waits
    notes: list[str] = field(default_factory=list)
    paused: int | None = None  # the round after which a person paused the discussion
    artifacts: list[str] = field(default_factory=list)  # the files written beside the ledger
    why: str = ""  # the outcome's explanation (its outcome rule's)
    advanced: str | None = None  # the phase a wave's advance trigger moved the discussion to

    @property
    def failures(self) -> list[Outcome]:
        return [o for o in self.outcomes if not o.ok]


def cited(request: Request, reply: Reply | None) -> tuple[list[str], list[str]]:
    """The typed references a reply cites in its ``refs`` fields, each one a message the
    persona was shown (its view and its target); (references, notes on the ones dropped)."""
    shown = {t.msg for t in request.shown} | ({request.target.msg} if request.target else set())
    extra = {str(k).lower(): v for k, v in (reply.extra if reply else {}).items()}
    refs, notes = [], []
    for f in request.step.fields:
        if not f.refs:
            continue
        value = extra.get(f.name.lower())
        ids = value if isinstance(value, list) else (
            [v for v in str(value).replace(",", " ").split()] if isinstance(value, str) else [])
        for msg in dict.fromkeys(str(i).strip() for i in ids if isinstance(i, (str, int))):
            if msg in shown:
                refs.append(f"{f.edge or f.name}:{msg}")
            elif msg:
                notes.append(f"{f.name} {msg[:40]!r} dropped: not a message it was shown")
    if len(refs) < request.step.min_refs:
        notes.append(f"cites {len(refs)} message(s) it was shown; the step asks for at least "
                     f"{request.step.min_refs}")
    return refs, notes


def _fields(request: Request, reply: Reply | None) -> tuple[dict[str, str], list[str]]:
    """The step's fields from a reply, each read by its kind (cascade.protocol.fields); a
    missing or invalid value gets the field's fallback (the cautious choice) and a note. A
    confirmation's vote becomes ``verdict``. References (``refs`` fields) are not among
    them: see ``cited``."""
    values, notes = read_fields(request.step.fields, reply)
    if request.step.confirm:
        values["verdict"] = values.pop("vote", "REJECT")
    return values, notes


def reply_budget(words: int) -> int:
    """Max tokens for a reply of at most ``words`` words in its comment: ~1.5 tokens a word
    and room for the JSON around it and its other fields."""
    return int(words * 1.5) + 200


def _refs(request: Request, citations: list[str] = ()) -> str | None:  # type: ignore[assignment]
    refs = list(citations)
    if request.target is not None:
        refs.append(f"counters:{request.target.msg}")
    if VISIBILITIES.has(request.step.visibility, "responds") and request.shown:
        refs.append(f"responds_to:{request.shown[-1].msg}")
    return ",".join(refs) or None


def table(run: Run, step_id: str, column: str, names: dict[str, str]) -> str:
    """The step's replies of the round as a markdown table: participant, the reply's first
    sentence (or the field named like the column), and its other fields (shift, verdict)."""

    turns = run.of(run.round, step_id)
    own = next((k for t in turns for k in t.fields if k.lower() == column.lower()), None)
    extra = sorted({k for t in turns for k in t.fields if k != own})
    head = ["Participant", column] + [_words(k) for k in extra]
    rows = [head, ["---"] * len(head)]
    for t in turns:
        first = t.fields.get(own) if own else None
        cells = [names.get(t.alias, t.name), sentence(first or t.body, 160)] + [
            sentence(t.fields.get(k, ""), 120) for k in extra]
        rows.append([c.replace("|", "\\|").replace("\n", " ") for c in cells])
    return "\n".join("| " + " | ".join(r) + " |" for r in rows)


def _words(name: str) -> str:
    """A field's name as a column title: ``wouldChangeIf`` -> ``Would change if``."""
    import re

    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name).replace("_", " ").split()
    return " ".join(words).capitalize() if words else name


async def run_protocol(d: Discussion, settings: Settings, progress: Progress | None = None,
                       *, pending=None, shared: Shared | None = None, **kwargs) -> Result:
    """Run ``d``'s protocol, its waves sharing their HTTP clients: a protocol whose steps
    are phases, one wave of whoever is concerned (``pending``: the personas named instead),
    then its phase's ``advance`` trigger (``_run_phase``); any other, its steps until it
    concludes or stops (``_run_protocol``). ``shared``: the budget and cap on calls in
    flight of a run over several ledgers."""
    from cascade.turns.sessions import session

    async with session():
        if d.protocol.stepped is None:
            return await _run_phase(d, settings, shared or Shared(settings, progress), pending,
                                    kwargs.get("source_data"), kwargs.get("rule_model"))
        return await _run_protocol(d, settings, progress, **kwargs)


async def _run_phase(d: Discussion, settings: Settings, shared: Shared, pending,
                     source_data: bytes | None, rule_model: str | None) -> Result:
    """One wave of a protocol whose steps are phases, then the phase's ``advance`` trigger.
    A reply the ledger could not take (a full disk) is raised once the wave is over."""
    from cascade.protocol.requests import next_wave

    result = Result()
    wave = next_wave(d) if pending is None else list(pending)
    if not wave:
        return result
    source = None
    if d.source:
        source = read_source(d.root, d.source, source_data, where=d.path, line=d.source_line)
    try:
        result.outcomes = await ask_wave(d, wave, settings, shared, source, rule_model)
    finally:
        shared.progress.close()
    result.appended = sum(1 for o in result.outcomes if o.ok)
    failed_write = next((o.os_error for o in result.outcomes if o.os_error is not None), None)
    if failed_write is not None:  # every other reply is written (whole blocks)
        raise failed_write
    result.advanced = _advance_phase(d, result.outcomes)
    result.appended += 1 if result.advanced else 0
    return result


def _advance_phase(d: Discussion, outcomes: list[Outcome]) -> str | None:
    """After a wave whose turns all succeeded, the phase's ``advance`` trigger: when it holds,
    a transition event; returns the phase entered, if any."""
    phase = d.protocol.phase(d.current_phase)
    if not outcomes or any(not o.ok for o in outcomes) or phase is None \
            or phase.advance is None or d.protocol.next_phase(phase.id) is None:
        return None
    spoke = {c.author for c in _comments_in_phase(d)}
    trigger = TRIGGERS.get(phase.advance)
    if trigger is None or not trigger(d, spoke, [o.persona.name for o in outcomes]):
        return None
    target = d.advance(trigger=phase.advance)
    try:
        d.save()
    except CascadeError:
        return None
    return target


def _comments_in_phase(d: Discussion) -> list[Comment]:
    """The comments since the last phase transition."""
    out: list[Comment] = []
    for entry in d.ledger.entries:
        if isinstance(entry, Event) and is_transition(entry):
            out = []
        elif isinstance(entry, Comment):
            out.append(entry)
    return out


async def _run_protocol(d: Discussion, settings: Settings, progress: Progress | None = None, *,
                       source_data: bytes | None = None, rule_model: str | None = None,
                       rule_models: dict | None = None, on_table=None, auto: bool = False,
                       ask=None) -> Result:
    """Run ``d``'s step protocol until it concludes or stops. Appends to the ledger. At a
    decision point: ``auto`` takes the recommended choice (a NEXT event says it was taken
    automatically); else ``ask(step, run) -> choice`` (a terminal) answers as the person;
    else the run stops there, waiting (``Result.waiting``)."""
    progress = progress or Progress()
    result = Result()
    shared = Shared(settings, progress)
    lock = asyncio.Lock()
    cache = ReplyCache(cache_dir(d.root))
    source: SourceText | None = None
    if d.source:
        source = read_source(d.root, d.source, source_data, where=d.path, line=d.source_line)
    revision = blob_id(source.data) if source is not None and source.data is not None else None
    imported = False
    noted: set[str] = set()
    # rounds.append: round -- a round reaches the ledger whole (seed 003's batch write): its
    # replies are held until its last step is done; a run that stops inside a round writes
    # none of it, and the next run gets those replies from the reply cache, asking no one.
    batch = d.state.run.steps.rounds.append == "round"
    written = 0  # result.appended when the ledger was last written (a batch)
    try:
        while True:
            registry = d.personas  # a generated panel's experts join once it is recorded
            names = {p.alias: p.name for p in registry}
            run = d.state.run
            result.round = run.round
            for note in run.notes:
                if note not in noted:
                    noted.add(note)
                    result.notes.append(note)
            if run.outcome is not None:
                result.outcome = run.outcome
                result.why = run.why
                if run.recorded != run.outcome:
                    import datetime as _dt

                    when = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
                    d.add_event(OUTCOME, run.outcome, round=str(run.round), at=when)
                    d.save()
                    result.appended += 1
                    result.record = write_record(d, d.state.run, when)
                break
            if run.pausing is not None:
                from cascade.protocol.artifacts import resume_context

                text = resume_context(d, run)
                d.add_comment(TOOL, f"**Resume context, after round {run.pausing}**\n\n{text}",
                              provenance={"step": "resume", "round": str(run.pausing)},
                              origin="tool")
                d.save()
                result.appended += 1
                result.paused = run.pausing
                result.stopped = (f"paused after round {run.pausing} (a person chose pause): "
                                  "the resume context is in the ledger")
                break
            if run.new_round and not _round_recorded(d, run.round):
                phase = run.phase
                d.add_event(ROUND, str(run.round), phase=phase.id if phase else None,
                            note=run.directions.get(run.round) or None)
                d.save()
                result.appended += 1
                continue
            if run.deciding:
                step = run.step
                assert step is not None
                if auto:
                    d.add_event(NEXT, step.recommended or step.choices[0], step=step.id,
                                round=str(run.round) if run.setup_done else "0", auto="true")
                    result.notes.append(f"{step.title}: took the recommended choice "
                                        f"{step.recommended} (--auto), recorded in the ledger")
                elif ask is not None:
                    from cascade.gitio import user_name

                    answer = " ".join(str(ask(step, run) or "").split())
                    if answer.split(" ")[0].lower() not in step.choices:
                        result.waiting = question(run)
                        break
                    d.add_comment(user_name(), f"NEXT: {answer}")
                else:
                    result.waiting = question(run)
                    break
                d.save()
                result.appended += 1
                continue
            requests = plan(run)
            if not requests:
                break
            if not imported:
                imported = True
                await _import_if_needed(requests, registry, rule_model, rule_models, settings)
            ids = [run.messages]  # the last message id's number: the wave's replies go on
            tasks = [_turn(d, req, registry.get(req.alias), settings, shared, lock, cache,
                           revision, rule_model, rule_models, source,
                           ids, batch) for req in requests]
            outcomes = await asyncio.gather(*tasks)
            progress.settle()  # the step's line stays; a table or the next step goes below
            result.outcomes += outcomes
            result.appended += sum(1 for o in outcomes if o.ok)
            failed = [o for o in outcomes if not o.ok]
            if failed:
                result.stopped = "; ".join(f"{o.persona.name}: {o.error}" for o in failed)
                failures = [o for o in failed if o.status == "failed"
                            and not o.error.startswith("not written")]
                if batch and failures and d.pending_text:
                    d.discard()  # the round is not written (see below): only why it stopped
                    result.appended = written
                    result.notes.append(_CUT_ROUND.format(round=result.round))
                for o in failures:  # a persona not asked within the budget did not fail
                    record_failure(d, o.persona, revision, o.error)
                break
            step, round_ = requests[0].step, requests[0].round
            done = d.state.run
            finished = not (done.step is not None and done.step.id == step.id
                            and done.round == round_)
            if step.table and finished:
                text = table(done, step.id, step.table, names)
                d.add_comment(TOOL, f"**{step.title}, round {round_}**\n\n{text}",
                              provenance={"step": step.id, "round": str(round_),
                                          "table": step.table}, origin="tool")
                if not batch:
                    d.save()
                result.appended += 1
                result.tables.append(text)
                if on_table is not None:
                    on_table(step, round_, text)
            if batch:
                done = d.state.run
                in_after = step.id in {x.id for x in done.steps.after}
                round_over = done.round != round_ or (done.after and not in_after)
                if (round_over or done.outcome is not None or done.deciding
                        or done.pausing is not None):
                    d.save()  # the round is complete: it reaches the ledger at once
                    written = result.appended
    finally:
        progress.close()
        if batch and d.pending_text:
            d.discard()  # a round cut short is not written; its replies are in the cache
            result.appended = written
            result.notes.append(_CUT_ROUND.format(round=result.round))
        if result.appended and d.protocol.stepped is not None and any(
                a != "argument-graph" for a in d.protocol.stepped.artifacts):
            from cascade.protocol.artifacts import write_artifacts

            try:
                result.artifacts = write_artifacts(d, d.state.run)
            except OSError as exc:
                result.notes.append(f"artifacts not written: {exc.strerror or exc}")
    return result


_CUT_ROUND = ("round {round} stopped before its end: nothing of it is written (a round is "
              "appended whole); its replies are cached, so the next run asks no one again")


def write_record(d: Discussion, run: Run, when: str) -> str:
    """Write ``x.record.md`` beside the ledger (atomically, never through a link)."""
    from cascade.atomic import atomic_write
    from cascade.errors import display_path
    from cascade.protocol.record import record_path, render_record
    from cascade.safepath import refuse_links

    path = record_path(d.path)
    try:
        rel = path.resolve().relative_to(d.root.resolve()).as_posix()
        refuse_links(d.root, rel, "the discussion record")
    except ValueError:
        pass  # a ledger outside any repository: its own folder
    atomic_write(path, render_record(d, run, when).encode("utf-8"))
    if "argument-graph" in run.steps.artifacts:
        from cascade.protocol.graph import graph_json
        from cascade.protocol.record import artifact_path

        atomic_write(artifact_path(d.path, "argument-graph"), graph_json(run).encode("utf-8"))
    return display_path(path)


def _round_recorded(d: Discussion, round_: int) -> bool:
    for event in reversed(d.events):
        if event.kind == ROUND:
            return event.value.split()[:1] == [str(round_)]
        if event.kind == SOURCE_REVISION:
            return False
    return False


async def _import_if_needed(requests, registry, rule_model, rule_models, settings) -> None:
    """Import litellm before the first wave when a model it asks first needs it; a fallback
    that needs it is imported by ``complete`` if it is ever reached (all ``openai/``: never)."""
    from cascade.turns.model import litellm_module, uses_litellm

    if any(uses_litellm(models_for(registry.get(r.alias), r.role, r.tier, rule_model,
                                   rule_models, settings)[0], settings) for r in requests):
        await asyncio.to_thread(litellm_module)


async def _turn(d: Discussion, request: Request, persona, settings: Settings, shared: Shared,
                lock: asyncio.Lock, cache: ReplyCache, revision: str | None, rule_model,
                rule_models,
                source, ids: list[int], batch: bool = False) -> Outcome:
    from cascade.protocol.prompt import build_step_prompt, reply_shape

    if persona is None:
        raise CascadeError(f"unknown persona {request.alias!r} for role {request.role!r}", d.path)
    model, *fallbacks = models_for(persona, request.role, request.tier, rule_model, rule_models,
                                   settings)
    if request.words is not None:  # a phase's word range: its reply's max tokens too
        settings = dataclasses.replace(settings, reply_tokens=reply_budget(request.words[1]))
    prompt = build_step_prompt(d, persona, request, source, settings.for_model(model))
    out = Outcome(persona, d.path, model=model, redactions=prompt.redactions, notes=prompt.notes)
    out.step = request.step.title  # type: ignore[attr-defined]
    out.round = request.round  # type: ignore[attr-defined]
    out.asks_vote = any(f.name in ("vote", "verdict")  # type: ignore[attr-defined]
                        for f in request.step.fields)
    started = time.monotonic()
    shared.progress.start(out)
    key = prompt_key(persona.alias, model, prompt.messages)
    hit = cache.get(key)
    reply: Reply | None = None
    try:
        if hit is not None:
            reply = parse_reply(hit["text"], reply_tokens=settings.reply_tokens)
            out.status, out.model = "cached", hit.get("model", model)
            out.prompt_tokens = hit.get("prompt_tokens") or 0
            out.completion_tokens = hit.get("completion_tokens") or 0
            out.cost = hit.get("cost")
        else:
            reply = await ask(Call(out, prompt.messages, key, fallbacks, reply_shape(request)),
                              model, settings, shared, cache)
            out.status = "ok"
    except Failed as failure:
        if request.step.fallback and not failure.skipped and str(failure).startswith(
                "unparseable"):  # the step's deterministic fallback stands in (seed 003)
            reply = Reply(request.step.fallback.replace("{topic}", d.title))
            out.status = "ok"
            out.notes = [*out.notes, f"{persona.name}: its reply could not be read ({failure}); "
                         "the step's fallback stands in"]
        else:
            out.status = "failed" if not failure.skipped else "skipped"
            out.error = str(failure)
    except ReplyError as exc:
        out.status, out.error = "failed", f"unparseable cached reply: {exc}"
    if reply is not None and request.step.fallback and not (reply.comment or "").strip():
        reply = Reply(request.step.fallback.replace("{topic}", d.title), reply.vote, None,
                      reply.extra, reply.cut)
        out.notes = [*out.notes, f"{persona.name}: an empty reply; the step's fallback stands in"]
    if reply is not None:
        fields, notes = _fields(request, reply)
        citations, dropped = cited(request, reply)
        verdict = fields.get("verdict")
        out.vote = verdict
        body = reply.comment if not reply.sentinel else "_No comment._"
        events: list = []
        if any(f.kind == "panel" for f in request.step.fields):
            body, events, panel_notes = _panel(d, request, reply, body)
            notes += panel_notes
            fields["panel"] = str(sum(1 for e in events if e[0] == "PERSONA"))
        body = _with_sections(request, body, fields, reply)
        out.notes = [*out.notes, *(f"{persona.name}: {n}" for n in notes + dropped)]
        async with lock:  # one append at a time: ids in the ledger's order, gapless
            number = ids[0] + 1
            provenance = {"model": out.model, "prompt_tokens": out.prompt_tokens or None,
                          "completion_tokens": out.completion_tokens or None,
                          "cost": f"{out.cost:.6f}" if out.cost else None,
                          "revision": revision, "seen": prompt.seen,
                          "msg": f"r{request.round}-msg-{number:03d}",
                          "step": request.step.id, "round": str(request.round),
                          "refs": _refs(request, citations), **fields}
            if reply.cut:
                provenance["cut"] = reply.cut
            vote = None
            if verdict is not None and persona.votes:
                vote = verdict if verdict in ("READY", "CHANGES", "REJECT") else (
                    "READY" if verdict == "ACCEPT" else "REJECT")
            try:
                d.add_comment(persona.name, body, vote, provenance=provenance, untrusted=True)
                for kind, value, event_fields in events:
                    d.add_event(kind, value, **event_fields)
                if not batch:  # else the round's end writes it (run_protocol)
                    d.save()
                ids[0] = number
            except CascadeError as exc:
                d.discard()
                out.status, out.error = "failed", f"not written: {exc}"
            except OSError as exc:
                d.discard()
                out.status, out.error = "failed", f"not written: {exc.strerror}"
                out.os_error = exc
    out.seconds = time.monotonic() - started
    shared.progress.finish(out)
    return out


def _with_sections(request: Request, body: str, fields: dict[str, str], reply: Reply) -> str:
    """The block's body with what the tool read from the structured fields a person should
    see: a shortlist as a table, a bridge packet as passed on (or why it was not)."""
    extra = {str(k).lower(): v for k, v in reply.extra.items()}
    shown = sections(request.step.fields, fields, extra)
    if not shown:
        return body
    return "\n\n".join(([body.strip()] if body.strip() else []) + shown)


def _panel(d: Discussion, request: Request, reply: Reply, comment: str):
    """A setup turn's proposed panel, checked (cascade.protocol.panel): the block's body (the
    reply's comment and the panel as a table), the events that record it, and notes. A
    proposal that cannot be used is replaced by the registry's personas picked by topic."""
    from cascade.config.personas import load_personas
    from cascade.protocol.panel import fallback_panel, panel_events, parse_panel

    run = d.state.run
    count = run.steps.participants
    registry = load_personas(d.root)
    fixed = set(run.fixed.values())
    field_ = next(f for f in request.step.fields if f.kind == "panel")
    extra = {str(k).lower(): v for k, v in reply.extra.items()}
    value = extra.get(field_.name.lower())
    if value is None and "experts" in extra:  # the panel's keys at the top level
        value = reply.extra
    taken = set(registry.by_alias) | fixed | {"person", TOOL.lower()}
    panel, notes = parse_panel(value, count.min, count.max, taken, d.title)
    if panel is None:
        panel = fallback_panel(d.title, registry, count.default, fixed)
        notes.append(f"the proposed panel could not be used; the panel is {len(panel.experts)} "
                     "of the registry's personas picked by topic words (modify it at the "
                     "confirmation)")
    lines = [comment.strip(), "", f"**Problem**: {panel.problem}"] if comment.strip() else [
        f"**Problem**: {panel.problem}"]
    if panel.scope:
        lines.append(f"**Scope**: {panel.scope}")
    if panel.success:
        lines.append(f"**Success criteria**: {panel.success}")
    lines += ["", "| Expert | Expertise | Thinking style | Stakes | Blind spots |",
              "|---|---|---|---|---|"]
    for e in panel.experts:
        cells = [e.name, ", ".join(e.expertise), e.thinking, e.stakes, ", ".join(e.blind)]
        name, expertise, thinking, stakes, blind = (cell(c, "-") for c in cells)
        lines.append(f"| {name} (@{e.id}) | {expertise} | {thinking} | {stakes} | {blind} |")
    lines += ["", "**Designed tensions**:", ""]
    lines += [f"- @{t.a} vs @{t.b}: {t.axis}" + (f" ({t.description})" if t.description else "")
              for t in panel.tensions]
    return "\n".join(lines), panel_events(panel), notes


def run(d: Discussion, settings: Settings, progress: Progress | None = None, **kwargs) -> Result:
    return asyncio.run(run_protocol(d, settings, progress, **kwargs))


def outcome_text(result: Result, topic: bool = False) -> str:
    """What a run came to, in one line: the outcome as its rule explains it; for a topic (no
    document to change), as the panel's answer."""
    if result.outcome is not None and topic:
        return (f"answered -- {result.why or result.outcome}"
                + ("" if result.outcome == "READY" else " -- a person decides (cascade decide)"))
    if result.outcome is not None:
        return (f"{result.outcome}: {result.why or 'concluded'}"
                + ("" if result.outcome == "READY" else
                   " -- a person decides, or the document changes"))
    if result.waiting:
        return f"waiting for a person: {result.waiting}"
    return f"stopped in round {result.round}: {result.stopped or 'waiting'}"


@dataclass
class Stepped:
    """A discussion to run, with what its rule says (``pending``: for a protocol whose steps
    are phases, the personas to ask instead of whoever is concerned)."""

    discussion: Discussion
    source_data: bytes | None = None
    rule_model: str | None = None
    rule_models: dict | None = None
    auto: bool = False
    pending: list | None = None


def run_all(stepped: list[Stepped], settings: Settings, progress: Progress) -> list[Result]:
    """One run of everything due, concurrently; returns each discussion's result, in order.
    The waves of the protocols whose steps are phases share one budget and cap on calls in
    flight. When one fails, the others finish first (their blocks are whole); then the first
    failure is raised."""
    async def each():
        shared = Shared(settings, progress)
        results = await asyncio.gather(*(
            run_protocol(s.discussion, settings, progress, source_data=s.source_data,
                         rule_model=s.rule_model, rule_models=s.rule_models, auto=s.auto,
                         pending=s.pending, shared=shared) for s in stepped),
            return_exceptions=True)
        failed = next((r for r in results if isinstance(r, BaseException)), None)
        if failed is not None:
            raise failed
        return list(results)

    return asyncio.run(each())
