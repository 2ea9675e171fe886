"""What a speaker is shown of the run (a step's ``visibility``): a registry of functions of
the run, the step and the speaker, each returning the turns it sees, in ledger order. A
protocol names one per step (or per strategy phase); the engine calls it by name.

Traits: ``one_at_a_time`` -- the step's speakers speak in turn, each seeing the earlier
(sequential); ``no_summary`` -- the speaker sees only what the function gives, without the
summary of earlier rounds; ``responds`` -- the turn answers the one it is shown last (its
``responds_to`` reference); ``blind`` -- it sees nothing of the others (the prompt says so);
``comments`` -- it is shown the discussion itself (every comment, people's too, the older
ones summarised past the budget, and the open questions), as a phase's turn is;
``independent`` -- it shows a speaker none of the others' answers to the question at hand
(``answered_apart``: the one place that says which steps' speakers judge apart);
``anonymous`` -- it is shown the others' answers without names, labelled (a peer ranking:
cascade.protocol.ranking registers ``anonymous``); ``kept`` -- a strategy phase's visibility
does not override it (the members' other steps take the phase's).
"""
from __future__ import annotations

from typing import Any

import msgspec.structs

from cascade.protocol.behaviours import Registry
from cascade.protocol.packet import view

VISIBILITIES = Registry("visibility")


def shown(run, step, alias: str, visibility: str | None = None) -> list:
    """What ``alias`` is shown in ``step``: its visibility's turns (a phase may override the
    visibility), narrowed to the steps it ``sees`` when it names them."""
    name = visibility or step.visibility
    if visibility:
        step = msgspec.structs.replace(step, visibility=visibility)
    turns = VISIBILITIES.call(name, run, step, alias)
    if step.sees:  # only the turns of the steps it names
        turns = [t for t in turns if t.step in step.sees]
    return turns


def answered_apart(steps, step) -> bool:
    """Whether the speakers of ``step`` (of ``steps``, specialized for the discussion's
    options) answer the same question without seeing each other's replies: one wave (not
    ``one_at_a_time``) of a visibility ``independent``; a members' step counts when one of
    its strategy's phases does. Why it matters: docs/protocols.md ("Independence")."""
    names = [step.visibility]
    if (steps.strategy is not None and step.role == steps.member_role.id
            and not VISIBILITIES.has(step.visibility, "kept")):  # else the phases' count
        names += [p.visibility for p in steps.strategy.phases if p.visibility]
    return any(VISIBILITIES.has(n, "independent") and not VISIBILITIES.has(n, "one_at_a_time")
               for n in names)


def _fixed(run, turn) -> bool:
    step = run.steps.step(turn.step) or run.steps.steps[0]
    return run.steps.role(step.role).fixed


def _asked(run) -> list:
    """This round's question (its fixed-role turns) after the last round's synthesis."""
    before = [t for t in run.turns if t.round == run.round - 1 and _fixed(run, t)][-1:]
    return before + [t for t in run.turns if t.round == run.round and _fixed(run, t)]


@VISIBILITIES.register("blind", traits=("blind", "independent"))
def blind(run, step, alias: str) -> list:
    """Nothing of the others."""
    return []


@VISIBILITIES.register("discussion", traits=("comments", "no_summary", "independent"))
def discussion(run, step, alias: str) -> list:
    """No turn of a round: the discussion's comments themselves (the prompt shows them) -- a
    phase's view, whoever wrote them. Its wave is asked at once, so none of its speakers sees
    another's answer to this revision: independent."""
    return []


@VISIBILITIES.register("all")
def all_(run, step, alias: str) -> list:
    """This round's turns, less its own in this step."""
    return [t for t in run.turns if t.round == run.round
            and (t.step != step.id or t.alias != alias)]


@VISIBILITIES.register("history")
def history(run, step, alias: str) -> list:
    """Every round's turns, less its own in this step."""
    return [t for t in run.turns if t.step != step.id or t.alias != alias]


@VISIBILITIES.register("question", traits=("no_summary", "independent"))
def question(run, step, alias: str) -> list:
    """This round's question (its fixed-role turns) and the last round's synthesis -- a
    roundtable participant's view: none of the other participants' answers."""
    return _asked(run)


@VISIBILITIES.register("sequential", traits=("one_at_a_time",))
def sequential(run, step, alias: str) -> list:
    """The question, and the earlier speakers of this step."""
    return _asked(run) + [t for t in run.turns if t.round == run.round and t.step == step.id]


@VISIBILITIES.register("synthesis", traits=("responds", "independent"))
def synthesis(run, step, alias: str) -> list:
    """The last synthesis: the run's last fixed-role turn (a closing vote's view: none of
    the other voters' answers)."""
    return [t for t in run.turns if _fixed(run, t)][-1:]


@VISIBILITIES.register("key_points", traits=("responds",))
def key_points(run, step, alias: str) -> list:
    """The key points of this round's earlier steps -- every turn of the round before this
    step (the positions, the challenges) -- and the last synthesis last: what it answers."""
    return [t for t in run.turns if t.round == run.round and t.step != step.id]


@VISIBILITIES.register("previous")
def previous(run, step, alias: str) -> list:
    """The others' turns of the last round (a cross-rebuttal)."""
    return [t for t in run.turns if t.round == run.round - 1 and t.alias != alias]


@VISIBILITIES.register("prior")
def prior(run, step, alias: str) -> list:
    """Every turn of the last round, its own too (a rebuttal revisits its own position and
    answers the others')."""
    return [t for t in run.turns if t.round == run.round - 1]


@VISIBILITIES.register("thread", traits=("one_at_a_time",))
def thread(run, step, alias: str) -> list:
    """Every turn of the earlier rounds, and the earlier speakers of this step in this round
    (a sequential council's later rounds: the whole thread, not a summary of it)."""
    return [t for t in run.turns if t.round < run.round
            or (t.round == run.round and t.step == step.id)]


def group_of(run, alias: str) -> str:
    return next((r.group for r in run.steps.fixed_roles
                 if r.group and run.fixed.get(r.id) == alias), "")


def _packets(run) -> tuple[str, ...]:
    """The names of the run's bridge packet fields."""
    return tuple(f.name for s in run.steps.all_steps for f in s.fields if f.kind == "packet")


@VISIBILITIES.register("group", traits=("no_summary",))
def group(run, step, alias: str) -> list[Any]:
    """A fixed role's group: its turns of this round and the last, and the other groups'
    bridge packets of the last round -- the packets alone (council's D/P mode)."""
    mine = group_of(run, alias)
    if not mine:
        return []
    out = []
    for t in run.turns:
        if t.round not in (run.round - 1, run.round) or t.alias == alias and \
                t.round == run.round and t.step == step.id:
            continue
        if group_of(run, t.alias) == mine:
            out.append(t)
        elif t.round == run.round - 1:
            packet = view(t, _packets(run))
            if packet is not None:
                out.append(packet)
    return out
