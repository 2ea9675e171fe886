"""What to ask next: the requests of a step protocol's next wave (who speaks, in which role
and tier, shown which turns, with which summary of the earlier rounds and which direction),
and for any discussion who is due (a protocol of phases: its planner's answer, in its run)."""
from __future__ import annotations

import re

from cascade.base.markdown import sentence
from cascade.protocol import registry
from cascade.protocol.runstate import Request, Run
from cascade.protocol.spec import Step
from cascade.protocol.visibility import VISIBILITIES, shown


def summary(run: Run, round_: int) -> str:
    """The earlier rounds, in at most ``rounds.carry`` characters: each round's positions
    (each speaker's last declared position of the round, else its first step's first
    sentence), the synthesis's consensus statement and who rejected it, and why."""
    if round_ <= 1:
        return ""
    parts = []
    for r in range(1, round_):
        turns = [t for t in run.turns if t.round == r]
        lines = [f"Round {r}:"]
        first = run.steps.round_steps[0].id
        for t in turns:
            if t.step == first:
                declared = [p for x in turns if x.alias == t.alias
                            if (p := run.read(x, "position"))]
                lines.append(f"- {t.name}: {sentence(declared[-1] if declared else t.body)}")
        fixed = [t for t in turns if run.steps.role(_step_of(run, t).role).fixed]
        if fixed:
            lines.append(f"- Synthesis: {sentence(_consensus(fixed[-1].body))}")
        for t in turns:
            if t.fields.get("verdict") == "REJECT":
                lines.append(f"- {t.name} rejected it: {sentence(t.body)}")
            if t.fields.get("flagged") == "yes":
                lines.append(f"- Quality flagged ({t.fields.get('scores', '')}): "
                             f"{sentence(t.body)}")
        if r + 1 in run.steering.directions:
            lines.append(f"- Next: {run.steering.directions[r + 1]}")
        parts.append("\n".join(lines))
    text = "\n".join(parts)
    limit = run.steps.rounds.carry
    if len(text) > limit:  # the latest rounds matter most: keep the end
        text = "..." + text[-(limit - 3):]
    return text


def _consensus(body: str) -> str:
    m = re.search(r"consensus statement\W*\n+(.+)", body, re.I | re.S)
    return m.group(1) if m else body


def _direction(run: Run, fixed: bool) -> str:
    """What the wave is told to follow, each part saying who gave it: a person, --auto, the
    protocol's rule or schedule (a strategy's phase; for a fixed role, the open conflicts)."""
    direction, by = ((run.steering.direction, run.steering.direction_by) if not run.setup.done else
                     (run.steering.directions.get(run.round, ""),
                      run.steering.givers.get(run.round, "")))
    direction = f"From {by}: {direction}" if direction and by else direction
    if run.progress.after:
        return run.steering.conclusion  # it names who decided
    strategy = run.steps.strategy
    # a flow's phases are the members': a mode where no member speaks (dp) is told none
    if strategy is None or all(run.steps.role(s.role).fixed for s in run.steps.round_steps):
        return direction
    phase = run.phase
    number = strategy.phases.index(phase) + 1
    conflicts = registry.open_conflicts(run, run.round - 1) if fixed else []
    return "\n".join(x for x in (
        f"From the protocol's schedule (no person decided): {strategy.title} "
        f"{strategy.kind}, phase {number} of {len(strategy.phases)}: "
        f"{phase.title}" + (f" -- {phase.goal}" if phase.goal else ""),
        "From the protocol's record: open conflicts: " + ", ".join(conflicts)
        if conflicts else "", direction) if x)


def plan(run: Run) -> list[Request]:
    """The next wave: every speaker of the first unfinished step that has not spoken (one at
    a time for a ``sequential`` step). Nothing once the outcome is known."""
    step = run.step
    if step is None or run.outcome is not None or step.decision:
        return []  # a decision point is a person's: the runner asks, or waits
    role = run.steps.role(step.role)
    waiting = run.waiting[:1] if VISIBILITIES.has(step.visibility, "one_at_a_time") else list(
        run.waiting)
    strategy = run.steps.strategy
    # a roundtable's participants see the question and the last synthesis only: no summary;
    # a group sees only its own group and the packets that crossed: no summary either
    # a step that names what it sees (sees:) is shown that alone. A strategy's sequential
    # participation adds the earlier speakers to the step's declared view and keeps its
    # summary (six-hats' answers: none, as any roundtable answer; a sequential council's
    # advice: the earlier rounds, as blind advice has)
    declared = (run.terms.base or run.steps).step(step.id) or step
    only_last = VISIBILITIES.has(declared.visibility, "no_summary") or bool(step.sees)
    text = "" if only_last else summary(run, run.round + (1 if run.progress.after else 0))
    direction = _direction(run, role.fixed)
    out = []
    for alias in waiting:
        role = run.role_of(step, alias)
        target = None if step.target is None else registry.TARGETS.call(
            step.target, alias, run.of(run.round, run.steps.round_steps[0].id))
        phase = run.phase if strategy is not None and not role.fixed \
            and not run.progress.after else None
        keeps = VISIBILITIES.has(step.visibility, "kept")  # a phase does not override it
        seen = [] if not run.setup.done else shown(
            run, step, alias, phase.visibility if phase and not keeps else None)
        said = direction
        if strategy is not None and strategy.sides and not role.fixed and alias in run.members:
            side = strategy.side(run.members.index(alias), alias)
            by = ("a person, who put each participant on a side" if alias in dict(strategy.assigned)
                  else "the protocol, which assigns the sides in turn")
            side = f"From {by}: Your side: {side}."
            said = f"{direction}\n{side}" if direction else side
        out.append(Request(alias, role.id, step, run.round, run.steps.tier_of(role), seen, target,
                           "" if phase is not None and phase.visibility
                           and VISIBILITIES.has(phase.visibility, "blind")
                           and phase.at == "first" else text, said,
                           phase.words if phase is not None else step.range,
                           why=run.progress.asked_why.get(alias, "")))
    return out


def asked(run: Run, pending) -> list[Request]:
    """The requests for the personas a person named (cascade.protocol.pending.Pending), at
    the step the run is at, each told why it is asked and what the person asks of it."""
    step = run.step or run.steps.steps[0]
    role = run.steps.role(step.role)
    return [Request(p.persona.alias, role.id, step, run.round, role.tier,
                    shown(run, step, p.persona.alias, None), None, "", why=p.reason,
                    callout=p.request) for p in pending]


def next_wave(d) -> list[Request]:
    """Who speaks next in the discussion ``d``, whatever its protocol (``plan`` of its run;
    a protocol of phases: whoever its planner says is due). Empty: nobody."""
    return plan(d.state.run)


def due(d) -> bool:
    """Whether running ``d`` now would do anything (ask someone, answer a decision point, begin
    a round, write a resume context, record its outcome); nothing once a person decided."""
    if d.state.conclusion.decision is not None:
        return False  # a person decided: no more rounds
    run = d.state.run
    if run.outcome is not None:
        return d.status == "OPEN" and run.closing.recorded != run.outcome
    return bool(run.waiting) or run.pauses.pausing is not None or run.progress.new_round


def _step_of(run: Run, turn) -> Step:
    """The step a turn was given in (a step the steps do not have: their first)."""
    return run.steps.step(turn.step) or run.steps.steps[0]
