"""Run a protocol on one ledger: waves of turns until the protocol reaches its outcome, the
run's budget ends, or a persona fails. Each reply is appended as a whole block the moment it
arrives; a table follows a step that asks for one; the round and the outcome are events. The
ledger is the checkpoint: a run that stops anywhere resumes where the file ends, asking no
one twice (cascade.protocol.engine).
"""
from __future__ import annotations

import asyncio
from typing import Any

from msgspec import Struct, field

from cascade.base.errors import CascadeError
from cascade.base.gitio import next_author
from cascade.ledger.records import NEXT, OUTCOME, ROUND, SOURCE_REVISION, Comment, Event
from cascade.protocol.artifacts import resume_context, write_artifacts
from cascade.run.reply_blocks import TOOL, record_time, table, write_record
from cascade.protocol.discussion import Discussion, is_transition
from cascade.protocol.engine import question
from cascade.protocol.registry import TRIGGERS
from cascade.protocol.requests import asked, plan
from cascade.run.run_result import Result
from cascade.protocol.runstate import Run
from cascade.run.step_turn import Wave, import_models, turns
from cascade.base.revision import blob_id
from cascade.turns.cache import ReplyCache, cache_dir
from cascade.turns.asking import Outcome, Progress, Shared, record_failure
from cascade.turns.sessions import session
from cascade.turns.settings import Settings
from cascade.turns.sources import read_source


async def run_protocol(d: Discussion, settings: Settings, progress: Progress | None = None,
                       *, pending=None, shared: Shared | None = None,
                       source_data: bytes | None = None, rule_model: str | None = None,
                       rule_models: dict | None = None, on_table=None, auto: bool = False,
                       ask=None) -> Result:  # long: the run's keyword options, passed on
    """Run ``d``'s protocol until it concludes or stops; appends to the ledger. ``pending``:
    the personas a person named, asked instead of whoever is due (one wave); ``shared``: the
    budget and cap on calls in flight of a run over several ledgers. A protocol of phases
    runs one wave of whoever is due, then the phase's ``advance`` trigger. At a decision
    point: ``auto`` takes the recommended choice (recorded as automatic); else ``ask(step,
    run) -> choice`` answers as the person; else the run stops, waiting (``Result.waiting``)."""
    async with session():
        shared = shared or Shared(settings, progress or Progress())
        source = (read_source(d.root, d.source, source_data, where=d.path, line=d.source_line)
                  if d.source else None)
        revision = blob_id(source.data) if source is not None and source.data is not None else None
        # rounds.append: round -- a round reaches the ledger whole (docs/protocols.md)
        run = d.state.run
        wave = Wave(d, settings, shared, asyncio.Lock(), ReplyCache(cache_dir(d.root)),
                    revision, rule_model, rule_models, source, [0],
                    run.steps.rounds.append == "round")
        only = asked(run, pending) if pending is not None else None
        loop = _Loop(wave, Result(), on_table, auto, ask, only=only,
                     once=only is not None or run.steps.shape.one_wave)
        try:
            while await loop.step():
                pass
        finally:
            shared.progress.close()
            loop.close()
        return loop.result


def _comments_in_phase(d: Discussion) -> list[Comment]:
    """The comments since the last phase transition."""
    out: list[Comment] = []
    for entry in d.ledger.entries:
        if isinstance(entry, Event) and is_transition(entry):
            out = []
        elif isinstance(entry, Comment):
            out.append(entry)
    return out


class _Loop(Struct):
    """One run of a step protocol, a move at a time (``step``)."""

    wave: Wave
    result: Result
    on_table: Any = None
    auto: bool = False
    ask: Any = None
    imported: bool = False
    noted: set[str] = field(default_factory=set)
    written: int = 0  # result.appended when the ledger was last written (a batch)
    only: list | None = None  # the requests a person named: asked instead of the plan's
    once: bool = False  # one wave, then the run stops (a protocol of phases; names given)

    async def step(self) -> bool:
        """One move; False: the run stops here."""
        d, result = self.wave.d, self.result
        run = d.state.run
        result.round = run.round
        for note in run.setup.notes:
            if note not in self.noted:
                self.noted.add(note)
                result.notes.append(note)
        said = d.state.conclusion
        if said.decision is not None:  # a person decided: no more rounds, nothing to record
            result.outcome, result.why, result.decided = said.outcome, said.why, True
            return False
        if run.outcome is not None:
            self._conclude(run)
            return False
        if run.pauses.pausing is not None:
            self._pause(run)
            return False
        if run.progress.new_round and not _round_recorded(d, run.round):
            phase = run.phase
            d.add_event(ROUND, str(run.round), phase=phase.id if phase else None,
                        note=run.steering.directions.get(run.round) or None)
            d.save()
            result.appended += 1
            return True
        if run.deciding:
            return self._decide(run)
        return await self._ask(run)

    def _conclude(self, run: Run) -> None:
        d, result = self.wave.d, self.result
        result.outcome, result.why = run.outcome, run.why
        if run.closing.recorded != run.outcome:
            when = record_time()
            d.add_event(OUTCOME, run.outcome, round=str(run.round), at=when,
                        note=run.steering.conclusion or None)  # how the rounds ended, when said
            d.save()
            result.appended += 1
            result.record = write_record(d, d.state.run, when)

    def _pause(self, run: Run) -> None:
        d, result = self.wave.d, self.result
        text = resume_context(d, run)
        d.add_comment(TOOL, f"**Resume context, after round {run.pauses.pausing}**\n\n{text}",
                      provenance={"step": "resume", "round": str(run.pauses.pausing)},
                      origin="tool")
        d.save()
        result.appended += 1
        result.paused = run.pauses.pausing
        result.stopped = (f"paused after round {run.pauses.pausing} (a person chose pause): the "
                          "resume context is in the ledger")

    def _decide(self, run: Run) -> bool:
        """A decision point: the recommended choice (--auto), a person's answer at the
        terminal, or a stop, waiting."""
        d, result, step = self.wave.d, self.result, run.step
        assert step is not None
        if self.auto:
            d.add_event(NEXT, step.recommended or step.choices[0], step=step.id,
                        round=str(run.round) if run.setup.done else "0", auto="true")
            result.notes.append(f"{step.title}: took the recommended choice "
                                f"{step.recommended} (--auto), recorded in the ledger")
        elif self.ask is None:  # no one to ask: the run waits for a person
            result.waiting = question(run)
            return False
        else:  # a person's answer at the terminal
            answer = " ".join(str(self.ask(step, run) or "").split())
            if answer.split(" ")[0].lower() not in step.choices:
                result.waiting = question(run)
                return False
            d.add_comment(next_author(d.path.parent).name, f"NEXT: {answer}")
        d.save()
        result.appended += 1
        return True

    async def _ask(self, run: Run) -> bool:
        """The next wave: each reply appended as it comes; a failure stops the run."""
        wave, result = self.wave, self.result
        requests, self.only = (self.only, []) if self.only is not None else (plan(run), None)
        if not requests:
            return False
        registry = wave.d.personas  # a generated panel's experts join once it is recorded
        if not self.imported:
            self.imported = True
            await import_models(requests, registry, wave.rule_model, wave.rule_models,
                                wave.settings)
        wave.ids[0] = run.messages  # the last message id's number: the wave's replies go on
        outcomes = await turns(wave, requests, registry)
        wave.shared.progress.settle()  # the step's line stays; a table or the next step below
        result.outcomes += outcomes
        result.appended += sum(1 for o in outcomes if o.ok)
        failed = [o for o in outcomes if not o.ok]
        if failed:
            self._failed(failed)
        failed_write = next((o.os_error for o in outcomes if o.os_error is not None), None)
        if failed_write is not None:  # every other reply is written (whole blocks)
            raise failed_write
        if failed:
            return False
        self._after_wave(requests[0].step, requests[0].round,
                         {p.alias: p.name for p in registry})
        if self.once:
            self._advance(requests[0].step, outcomes)
        return not self.once

    def _advance(self, step, outcomes: list[Outcome]) -> None:
        """After a wave whose turns all succeeded, its step's ``advance`` trigger (a phase
        that moves on by itself): when it holds, a transition event."""
        d, result = self.wave.d, self.result
        if step.advance is None or d.protocol.next_phase(step.id) is None:
            return
        spoke = {c.author for c in _comments_in_phase(d)}
        if not TRIGGERS[step.advance](d, spoke, [o.persona.name for o in outcomes]):
            return
        target = d.advance(trigger=step.advance)
        try:
            d.save()
        except CascadeError:
            return
        result.advanced = target
        result.appended += 1

    def _failed(self, failed: list[Outcome]) -> None:
        wave, result = self.wave, self.result
        result.stopped = "; ".join(f"{o.persona.name}: {o.error}" for o in failed)
        # a persona not asked within the budget did not fail -- except in a wave of
        # whoever is due (a protocol of phases), where it is recorded, so the gate says why
        recorded = ("failed", "skipped") if self.once else ("failed",)
        failures = [o for o in failed if o.status in recorded
                    and not o.error.startswith("not written")]
        if failures:
            self._drop_round()  # only why it stopped is written
        for o in failures:
            record_failure(wave.d, o.persona, wave.revision, o.error)

    def _after_wave(self, step, round_: int, names: dict[str, str]) -> None:
        """The step's table once it is done; in a batch, the round written once complete."""
        d, result, batch = self.wave.d, self.result, self.wave.batch
        done = d.state.run
        finished = not (done.step is not None and done.step.id == step.id
                        and done.round == round_)
        if step.table and finished:
            text = table(done, step.id, step.table, names, round_)
            d.add_comment(TOOL, f"**{step.title}, round {round_}**\n\n{text}",
                          provenance={"step": step.id, "round": str(round_),
                                      "table": step.table}, origin="tool")
            if not batch:
                d.save()
            result.appended += 1
            result.tables.append(text)
            if self.on_table is not None:
                self.on_table(step, round_, text)
        if batch:
            done = d.state.run
            in_after = step.id in {x.id for x in done.steps.after}
            round_over = done.round != round_ or (done.progress.after and not in_after)
            if (round_over or done.outcome is not None or done.deciding
                    or done.pauses.pausing is not None):
                d.save()  # the round is complete: it reaches the ledger at once
                self.written = result.appended

    def _drop_round(self) -> None:
        """A round cut short is not written (a round is appended whole)."""
        d, result = self.wave.d, self.result
        if self.wave.batch and d.pending_text:
            d.discard()
            result.appended = self.written
            result.notes.append(f"round {result.round} stopped before its end: nothing of it "
                                "is written (a round is appended whole); its replies are "
                                "cached, so the next run asks no one again")

    def close(self) -> None:
        """The round cut short dropped; the artifacts written when anything was appended."""
        d, result = self.wave.d, self.result
        self._drop_round()
        if result.appended and any(a != "argument-graph" for a in d.protocol.steps.artifacts):
            try:
                result.artifacts = write_artifacts(d, d.state.run)
            except OSError as exc:
                result.notes.append(f"artifacts not written: {exc.strerror or exc}")


def _round_recorded(d: Discussion, round_: int) -> bool:
    for event in reversed(d.events):
        if event.kind == ROUND:
            return event.value.split()[:1] == [str(round_)]
        if event.kind == SOURCE_REVISION:
            return False
    return False


def run(d: Discussion, settings: Settings, progress: Progress | None = None, rule=None,
        **kwargs) -> Result:
    """``run_protocol``, to its end, with the models ``rule`` (``d``'s rule, or None) gives."""
    if rule is not None:
        kwargs.update(rule_model=rule.model, rule_models=rule.models)
    return asyncio.run(run_protocol(d, settings, progress, **kwargs))


class Stepped(Struct):
    """A discussion to run, with what its rule says."""

    discussion: Discussion
    source_data: bytes | None = None
    rule_model: str | None = None
    rule_models: dict | None = None
    auto: bool = False


def run_all(stepped: list[Stepped], settings: Settings, progress: Progress) -> list[Result]:
    """One run of everything due, concurrently, sharing one budget and cap on calls in flight;
    each discussion's result, in order. When one fails, the others finish first (their blocks
    are whole); then the first failure is raised."""
    async def each():
        shared = Shared(settings, progress)
        results = await asyncio.gather(*(
            run_protocol(s.discussion, settings, progress, source_data=s.source_data,
                         rule_model=s.rule_model, rule_models=s.rule_models, auto=s.auto,
                         shared=shared) for s in stepped),
            return_exceptions=True)
        failed = next((r for r in results if isinstance(r, BaseException)), None)
        if failed is not None:
            raise failed
        return list(results)

    return asyncio.run(each())
