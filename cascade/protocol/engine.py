"""Where a step protocol's discussion stands, derived from its ledger alone, and what comes
next. Pure: no model, no file writes -- the hook, ``check``, ``status``, ``plan`` and the
runner (cascade.run.protocol_run) all read the same ``Run`` (its records:
cascade.protocol.runstate; the next wave it asks for: cascade.protocol.requests).

A turn is a block cascade wrote for a persona, stamped with its message id (docs/protocols.md,
"Replies and decision points"). A new revision of the document (not one that keeps its
review) starts the protocol again at round 1; message ids go on counting. A stopped run
resumes where the file ends: the next wave is whoever has not spoken in the first unfinished
step. A generated panel's setup steps run once per discussion (cascade.protocol.setup); a
protocol's ``after`` steps run once when its rounds end, and its outcome rule reads them.
"""
from __future__ import annotations

from cascade.ledger.records import NEXT, OUTCOME, SOURCE_REVISION, Comment, Event
from cascade.ledger.provenance import verify
from cascade.protocol import registry
from cascade.protocol.ballot import counted as counted_ballot
from cascade.protocol.behaviours import Exit
from cascade.protocol.context import first_listed
from cascade.protocol.findings import counted
from cascade.protocol.options import specialize
from cascade.protocol.runstate import (
    MSG,
    Answer,
    Basis,
    Draft,
    Run,
    Turn,
    draft,
    given_by,
    next_lines,
    refs_of,
)
from cascade.protocol.setup import walk_setup
from cascade.protocol.spec import Step, Steps


def members_of(steps: Steps, participants) -> tuple[list[str], dict[str, str]]:
    """The deliberating members (the participants less the fixed roles' personas), and those."""
    fixed = {r.id: r.persona for r in steps.fixed_roles}
    taken = set(fixed.values())
    return [a for a in participants if a not in taken], fixed  # type: ignore[misc]


def derive(ledger, steps: Steps, basis: Basis) -> Run:
    """The run of a parsed ledger under a step protocol, on ``basis``. The discussion's options
    are applied here (``options.specialize``); a generated panel's members replace the
    basis's."""
    base = steps
    steps = specialize(base, basis.options)
    if not basis.document:
        steps = registry.on_topic(steps)
    run = draft(steps, list(basis.members), {r.id: r.persona for r in steps.fixed_roles}
                if steps.setup else dict(basis.fixed), base=base, mode=steps.mode,
                consensus=basis.consensus, cap=basis.options.rounds)
    setup_ids = {s.id for s in steps.setup}
    for entry in ledger.entries:
        if entry.line in basis.skip:
            continue
        if isinstance(entry, Event):
            _take_event(run, entry, entry.line in basis.carried, setup_ids)
        elif entry.origin == "tool":
            _take_tool_block(run, entry)
        elif entry.origin is None and basis.personas.of_author(entry.author) is None:
            for choice, text in next_lines(entry.body):  # a person answers a decision point
                answer = Answer(choice, text, entry.author, entry.line)
                run.decisions.answers.append(answer)
                if setup_ids:
                    run.setup.answers.append(answer)
        else:
            number, turn = _turn_of(entry, basis.personas, basis.verified)
            run.messages = max(run.messages, number)
            if turn is None:
                continue
            if turn.step not in setup_ids and basis.reviewed is not None \
                    and turn.revision not in basis.reviewed:
                continue  # a turn for another text of the document is not this run's
            if "verdict" in turn.fields:  # what its findings let it count as (the policy)
                weighed = counted(turn.fields["verdict"], entry.provenance, basis.policy)
                turn.fields["verdict"] = _accepting(steps, turn) if weighed.advisory else \
                    weighed.vote
            (run.setup.turns if turn.step in setup_ids else run.turns).append(turn)
    if steps.setup and not walk_setup(run, ledger):
        return Run.from_draft(run)
    run.terms.names = {p.alias: p.name for p in basis.personas}
    if steps.phased:
        _planned(run, ledger, basis)
    else:
        _progress(run)
    return Run.from_draft(run)


def _accepting(steps: Steps, turn: Turn) -> str:
    """The verdict a turn counts as when its block is advisory (``require_location``): its
    step's accepting choice, so it does not block, as an advisory vote in a review does not."""
    step = steps.step(turn.step)
    choices = next((f.choices or () for f in step.fields if f.name in ("verdict", "vote")),
                   ()) if step is not None else ()
    return "ACCEPT" if "ACCEPT" in choices else "READY"


def _planned(run: Draft, ledger, basis: Basis) -> None:
    """A protocol of phases: its step is the phase the discussion is in; who it waits for,
    and why each is asked, is its registered planner's answer; in a phase that takes votes,
    its verdict is its outcome rule's over the ballot (cascade.protocol.ballot)."""
    steps = run.steps
    run.step = steps.step(basis.phase or "") or steps.steps[0]
    wave = registry.PLANNERS[steps.planner](run, ledger, basis)
    run.waiting = [p.persona.alias for p in wave]
    run.progress.asked_why = {p.persona.alias: p.reason for p in wave}
    if basis.ballot is not None and run.step.confirm:  # a phase that takes votes
        run.verdict = counted_ballot(steps, basis.ballot, basis.consensus)


def last_message(ledger, personas) -> int:
    """The number of the last message id the ledger's turns use (0: none yet): the next
    turn's id goes on from it, whatever the protocol."""
    return max((_turn_of(e, personas)[0] for e in ledger.entries if isinstance(e, Comment)),
               default=0)


def _take_event(run: Draft, entry: Event, carried: bool, setup_ids: set[str]) -> None:
    """A new revision of the text (one that does not keep its review) starts again; a NEXT
    event answers a decision point; an OUTCOME records the outcome."""
    if entry.kind == SOURCE_REVISION and not carried:
        run.turns, run.closing.recorded, run.decisions.answers = [], None, []
        run.pauses.resumed, run.pauses.resume_texts = set(), {}
    elif entry.kind == NEXT:
        words = entry.value.split()
        if words:
            answer = Answer(words[0].lower(), "", "cascade --auto", entry.line,
                            entry.fields.get("auto") == "true", entry.fields.get("step"),
                            _number(entry.fields.get("round", "0")) or 0)
            (run.setup.answers if answer.step in setup_ids
             else run.decisions.answers).append(answer)
    elif entry.kind == OUTCOME:
        words = entry.value.split()
        run.closing.recorded = words[0].upper() if words else None


def _take_tool_block(run: Draft, entry: Comment) -> None:
    """A block cascade wrote for itself: a pause's resume context marks its round resumed."""
    if entry.provenance.get("step") == "resume":
        round_ = _number(entry.provenance.get("round", "0"))
        if round_ is not None:
            run.pauses.resumed.add(round_)
            run.pauses.resume_texts[round_] = entry.body


_NOT_FIELDS = frozenset({"msg", "round", "step", "refs", "sig", "model", "cost", "cut",
                         "prompt_tokens", "completion_tokens", "revision", "seen", "n",
                         "ledger"})


def _turn_of(entry: Comment, personas,
             verified: frozenset[int] | None = None) -> tuple[int, Turn | None]:
    """The message number a block takes (0: none) and the turn it is, when cascade wrote it
    for a persona (a message id, a stamp that verifies, the persona's own name, a round).
    ``verified``: the lines whose stamp the caller verified (None: verified here)."""
    msg = entry.provenance.get("msg", "")
    m = MSG.match(msg)
    if not m or entry.origin != "ai" or not (entry.line in verified if verified is not None
                                             else verify(entry) is None):
        return 0, None
    persona = personas.of_author(entry.author)
    if persona is None or persona.name != entry.author:
        return 0, None
    round_ = _number(entry.provenance.get("round", "0"))
    if round_ is None:
        return int(m.group(2)), None
    stamp, number = entry.provenance, int(m.group(2))
    fields = {k: v for k, v in stamp.items() if k not in _NOT_FIELDS}
    return number, Turn(persona.alias, persona.name, stamp.get("step", ""), round_, msg, number,
                        entry.body.strip(), fields, refs_of(stamp.get("refs", "")), entry.line,
                        stamp.get("revision"), stamp.get("seen"))


def _number(value: str) -> int | None:
    try:
        return int(value)
    except ValueError:
        return None


def _progress(run: Draft) -> None:
    """The round, the first unfinished step and who it waits for; the outcome once a round's
    last step is done (or, with ``after`` steps, once they are)."""
    steps = run.steps
    round_ = 1
    while True:
        run.round = round_
        order = steps.round_steps
        if round_ > 1 and _paused(run, round_ - 1):  # a resumed pause: its reopening first
            order = steps.resume + order
        index = 0
        while index < len(order):
            step = order[index]
            if step.when is not None:
                why = registry.CONDITIONS[step.when](run, round_)
                if not why:
                    index += 1
                    continue
                run.decisions.because = why if isinstance(why, str) else None
            if step.decision:
                answer = _answer(run, round_, order, index)
                if answer is None:
                    run.step, run.waiting = step, ["person"]
                    run.progress.new_round = False
                    return
                run.decisions.chosen[(round_, step.id)] = answer
                target = dict(step.goto).get(answer.choice)
                index = next(i for i, s in enumerate(order) if s.id == target) if target \
                    else index + 1
                continue
            spoken = {t.alias for t in run.of(round_, step.id)}
            waiting = [a for a in _speakers(run, step, round_) if a not in spoken]
            if waiting:
                run.step, run.waiting = step, waiting
                # a round begins with its event; round 1 too when it has a phase to record
                run.progress.new_round = (round_ > 1 or run.phase is not None) and not any(
                    t.round == round_ for t in run.turns)
                return
            _reopened(run, round_, step)
            index += 1
        confirm = next((s for s in steps.round_steps if s.confirm), None)
        run.closing.verdicts = _verdicts(run, confirm, round_) if confirm else {}
        exit_ = registry.EXITS.call(steps.rounds.exit, run, round_)
        _next_round(run, round_, exit_)
        enough = round_ >= steps.rounds.min or registry.EXITS.has(steps.rounds.exit,
                                                                  "own_minimum")
        if round_ >= steps.rounds.max or (exit_.ends and enough):
            _after(run, round_, exit_)
            return
        chosen = _round_choice(run, round_)
        if chosen is not None:
            run.steering.directions[round_ + 1] = chosen
            run.steering.givers[round_ + 1] = given_by(
                run.decisions.chosen[(round_, run.decision_step().id)])
        if _paused(run, round_) and round_ not in run.pauses.resumed:
            if not _waits(run, run.steps.pause, round_):  # its resume context written: stop
                run.round, run.step, run.waiting, run.pauses.pausing = round_, None, [], round_
            return
        round_ += 1


def _waits(run: Draft, steps, round_: int) -> bool:
    """Whether one of ``steps`` (a pause's, the after steps) still waits for someone in
    ``round_``: then the run is at the first such step, waiting for them."""
    for step in steps:
        spoken = {t.alias for t in run.of(round_, step.id)}
        waiting = [a for a in run.speakers(step) if a not in spoken]
        if waiting:
            run.round, run.step, run.waiting = round_, step, waiting
            return True
    return False


def _reopened(run: Draft, round_: int, step: Step) -> None:
    """A resume step done: what it reads as ``direction`` is the round's direction."""
    if step in run.steps.resume:
        said = next((run.read(t, "direction") for t in run.of(round_, step.id)
                     if run.read(t, "direction")), "")
        if said:
            run.steering.directions[round_] = said


def _speakers(run: Draft, step: Step, round_: int) -> list[str]:
    """Who speaks in ``step`` of ``round_``: its speakers, narrowed by the step's registered
    ``speakers`` rule (a facilitator's question put to some of the members)."""
    everyone = run.speakers(step)
    if step.speakers is None:
        return everyone
    chosen = set(registry.SPEAKERS.call(step.speakers, run, step, round_))
    return [a for a in everyone if a in chosen]


def _verdicts(run: Draft, step: Step, round_: int) -> dict[str, str]:
    """Each speaker's verdict in a confirming step. A confirmation counts only from a turn
    that saw the whole document (fail closed): one that saw part is PARTIAL."""
    return {t.alias: t.fields.get("verdict", "REJECT") if t.seen in (None, "all") else "PARTIAL"
            for t in run.of(round_, step.id)}


def _next_round(run: Draft, round_: int, exit_: Exit) -> None:
    """What the exit rule said of the next round: its phase, its direction, the conclusion a
    person gave, the rounds escalations stay quiet, the probing round given."""
    run.closing.exit = exit_
    if exit_.phase is not None:
        run.steering.phase_of[round_ + 1] = exit_.phase
    if exit_.direction:
        run.steering.directions[round_ + 1] = exit_.direction
        run.steering.givers[round_ + 1] = given_by(None)
    if exit_.conclusion:
        run.steering.conclusion = exit_.conclusion
    if exit_.quiet_until is not None:
        run.steering.quiet_until = exit_.quiet_until
    run.steering.probed = run.steering.probed or exit_.probed


def _after(run: Draft, round_: int, exit_: Exit) -> None:
    """The rounds are over: the after steps, in order, then the outcome rule; an outcome
    other than READY first runs the protocol's ``on_impasse`` step (its recommendation)."""
    run.progress.after = bool(run.steps.after)
    if _waits(run, run.steps.after, round_):  # run.round is round_ already
        return
    confirm = next((s for s in run.steps.after if s.confirm), None)
    if confirm is not None:
        run.closing.verdicts = _verdicts(run, confirm, round_)
    verdict = registry.OUTCOMES.call(run.steps.outcome, run, round_, exit_)
    last = run.steps.step(run.steps.rounds.on_impasse) if run.steps.rounds.on_impasse else None
    if last is not None and verdict.outcome != "READY" and _waits(run, (last,), round_):
        return  # the recommendation comes before the impasse is the outcome
    run.verdict, run.closing.verdicts = verdict, dict(verdict.counted)
    run.outcome = verdict.outcome
    run.step, run.waiting = None, []


def _round_choice(run: Draft, round_: int) -> str | None:
    """What the round's decision point chose, as the next round's direction: the choice and
    the person's text; ``follow`` spelled out as the recommendation it follows."""
    step = run.decision_step()
    answer = run.decisions.chosen.get((round_, step.id)) if step is not None else None
    if answer is None:
        return None
    fills = dict(step.fills)
    if answer.choice == "follow":
        rec = run.recommendation(round_)
        point = first_listed(run, round_, fills[rec]) if rec in fills else ""
        return (f"follow the recommendation: {rec}" + (f": {point}" if point else "")
                if rec else "follow the recommendation")
    text = answer.text or (first_listed(run, round_, fills[answer.choice])
                           if answer.choice in fills else "")
    return f"{answer.choice}: {text}" if text else answer.choice


def _paused(run: Draft, round_: int) -> bool:
    step = run.decision_step()
    answer = run.decisions.chosen.get((round_, step.id)) if step is not None else None
    return answer is not None and answer.choice == "pause"


def _answer(run: Draft, round_: int, order, index: int) -> Answer | None:
    """The answer to the decision point ``order[index]`` of ``round_``: the NEXT event that
    names it, else the first unused person's NEXT line with one of its choices, written after
    the point was reached."""
    step = order[index]
    for a in run.decisions.answers:
        if not a.used and a.step == step.id and a.round == round_:
            a.used = True
            return a
    earlier = {s.id for s in order[:index]}
    reached = max([t.line for t in run.turns if t.round == round_ and t.step in earlier]
                  + [a.line for (r, _), a in run.decisions.chosen.items() if r == round_]
                  + [t.line for t in run.turns if t.round < round_], default=0)
    for a in run.decisions.answers:
        if not a.used and a.step is None and a.line > reached and a.choice in step.choices:
            a.used = True
            return a
    return None


def question(run: Run) -> str:
    """A decision point's question in one line, with how to answer it."""
    step = run.step
    assert step is not None
    when = "before round 1" if not run.setup.done else f"round {run.round}"
    why = f" Why: {run.decisions.because}." if run.decisions.because else ""
    return (f"{step.question}{why} ({when}; answer in the ledger with a line NEXT: "
            f"{'|'.join(step.choices)}; recommended: {step.recommended})")


def call_counts(steps: Steps, members: int) -> tuple[int, int, int]:
    """The calls a round makes (each step's speakers), those made once (in the setup and after
    the rounds), and the most a run can make: every round, the step after the last round
    without consensus, and those made once."""
    def calls(group) -> int:
        return sum(len(s.speaking) if steps.role(s.role).fixed else members for s in group
                   if not s.decision)
    per_round = calls(steps.round_steps)
    once = calls(steps.setup) + calls(steps.after)
    most = per_round * steps.rounds.max + (1 if steps.rounds.on_impasse else 0) + once
    return per_round, once, most
