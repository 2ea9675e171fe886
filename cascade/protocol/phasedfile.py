"""A protocol whose steps are phases, read from its file: a registered ``planner``
(``respond``: whoever is concerned speaks), one role from the rule's participants, and steps
entered in order, each asking a vote, moved on by its registered ``advance`` trigger or by a
person; the outcome counts thresholds. The phased discussion design's own form (``phases:``)
is read here too, and only here (``seed_phases``). Both forms: docs/configuration.md."""
from __future__ import annotations

from pathlib import Path

from cascade.config.schema import Bad, Key, flag, raw, read, word
from cascade.config.yamlio import LineDict, items_with_lines
from cascade.base.errors import CascadeError
from cascade.protocol import registry
from cascade.protocol.fields import ballot, parse_field
from cascade.protocol.spec import Count, Role, Rounds, Shape, Step, Steps

# A protocol whose steps are phases (a registered planner): what its planner and phases
# honour, nothing more (a key accepted and then ignored would be a silent promise).
PHASED_KEYS = {"name", "title", "description", "planner", "roles", "rounds", "outcome", "steps"}
_PHASED_ROLE = {"id": Key(raw, required=True), "title": Key(raw), "from": Key(raw, required=True)}
PHASED_VOTE = ("READY", "CHANGES", "REJECT")  # what a phase's reply votes
_ONE_ROLE = "a protocol whose planner is respond has one role: {id: participant, from: participants}"


def _positive(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise Bad("a positive whole number")
    return value


PHASED_ROUNDS = {"max": Key(_positive, 3, label="rounds max")}
PHASE_STEP = {
    "id": Key(word("a string"), required=True, label="step 'id'"),
    "role": Key(raw, required=True), "title": Key(raw), "instructions": Key(raw),
    "fields": Key(raw), "confirm": Key(flag, False, label="step {id!r}: confirm"),
    "advance": Key(raw),
}


def phased_steps(data: LineDict, path: Path) -> Steps:
    """Steps that are phases, in order: ``confirm: true`` -- its votes count (else they are
    advisory); ``advance``: the registered trigger that moves it on by itself (none: a person
    advances). Each participant's latest vote counts, by the outcome rule ``thresholds``."""
    planner = data["planner"]
    if planner not in registry.PLANNERS:
        raise CascadeError(f"unknown planner {planner!r} (known: "
                           f"{', '.join(sorted(registry.PLANNERS))})", path,
                           data.line_of("planner"))
    role = _phased_role(data, path)
    top = _most_rounds(data, path)
    outcome = data.get("outcome", "thresholds")
    if outcome != "thresholds":
        raise CascadeError(f"a protocol whose planner is respond counts each participant's "
                           f"latest vote: its outcome is thresholds, not {outcome!r}", path,
                           data.line_of("outcome"))
    raw_steps = data["steps"]
    if not isinstance(raw_steps, list) or not raw_steps:
        raise CascadeError("protocol 'steps' must be a non-empty list", path,
                           data.line_of("steps"))
    steps: list[Step] = []
    for item, line in items_with_lines(raw_steps, data.line_of("steps")):
        step = _phase_step(item, read(item, PHASE_STEP, path, "step", line), role.id, path)
        if any(s.id == step.id for s in steps):
            raise CascadeError(f"duplicate step id {step.id!r}", path, item.line_of("id"))
        steps.append(step)
    if steps[-1].advance is not None:
        raise CascadeError(f"step {steps[-1].id!r} is the last: there is no step to advance to",
                           path, data.line_of("steps"))
    return _phased(role, steps, top, str(planner), path,
                   data.line_of("rounds") or data.line_of("steps"))


def _phased(role: Role, steps: list[Step], top: int, planner: str, path: Path,
            line: int | None) -> Steps:
    """The steps of a protocol of phases, its rounds and its outcome (thresholds)."""
    return Steps((role,), tuple(steps),
                 Rounds(1, top, registry.EXITS.ref("all_accept", path, line), 1000),
                 Count(1, 8, 2), registry.OUTCOMES.ref("thresholds", path, line),
                 planner=planner, shape=Shape.of(registry.PLANNERS.behaviour(planner).traits))


# The phased discussion design's own form: ``phases:``, each phase as the design lists it
# (its phase file: id, title, instructions, voting_mode, auto_trigger, next).
SEED_KEYS = {"name", "title", "description", "rounds", "max_rounds", "phases"}
SEED_PHASE = {
    "id": Key(word("a string"), required=True, label="phase 'id'"),
    "title": Key(raw), "instructions": Key(raw),
    "voting_mode": Key(flag, False, label="phase {id!r}: voting_mode"),
    "auto_trigger": Key(raw), "next": Key(raw),
}
_SEED_ROLE = Role("participant", "Participant", None, "fast")
_SEED_FIELDS = {"vote": list(PHASED_VOTE), "findings": "findings"}


def seed_phases(data: LineDict, path: Path) -> Steps:
    """``phases:`` as the design writes them, read as steps that are phases (planner
    ``respond``, the rule's participants): ``voting_mode`` -> ``confirm``, ``auto_trigger`` ->
    ``advance``, ``next`` -> the order. What the engine cannot honour is an error naming the
    line."""
    raw_phases = data["phases"]
    if not isinstance(raw_phases, list) or not raw_phases:
        raise CascadeError("protocol 'phases' must be a non-empty list", path,
                           data.line_of("phases"))
    top = _most_rounds(data, path)
    items = list(items_with_lines(raw_phases, data.line_of("phases")))
    phases = {}  # id -> (item, read phase, the phase after it)
    for index, (item, line) in enumerate(items):
        p = read(item, SEED_PHASE, path, "phase", line)
        if p["id"] in phases:
            raise CascadeError(f"duplicate phase id {p['id']!r}", path, item.line_of("id"))
        following = items[index + 1][0] if index + 1 < len(items) else None
        listed_next = following.get("id") if isinstance(following, dict) else None
        phases[p["id"]] = (item, p, p["next"] if "next" in item else listed_next)
    order = _seed_order(phases, path)
    steps = []
    for pid in order:
        item, p, after = phases[pid]
        trigger = p["auto_trigger"]
        if trigger is not None and trigger not in registry.TRIGGERS:
            raise CascadeError(f"phase {pid!r}: auto_trigger {trigger!r} is not one this tool "
                               f"has (allowed: {', '.join(registry.TRIGGERS)}, or null: a "
                               "person advances)", path, item.line_of("auto_trigger"))
        if after is None and trigger is not None:
            raise CascadeError(f"phase {pid!r} is the last (next: null): there is no phase for "
                               f"its auto_trigger to advance to", path,
                               item.line_of("auto_trigger"))
        s = {"id": pid, "role": _SEED_ROLE.id, "title": p["title"],
             "instructions": p["instructions"], "fields": _SEED_FIELDS,
             "confirm": p["voting_mode"], "advance": trigger}
        steps.append(_phase_step(item, s, _SEED_ROLE.id, path))
    if not any(s.confirm for s in steps):
        raise CascadeError("no phase has 'voting_mode: true': no vote would ever count", path,
                           data.line_of("phases"))
    return _phased(_SEED_ROLE, steps, top, "respond", path, data.line_of("phases"))


def _most_rounds(data: LineDict, path: Path) -> int:
    """The most rounds: ``rounds: {max: N}``, or ``max_rounds: N`` as this tool's files once
    wrote it in the design's form (3 when neither is given)."""
    if "max_rounds" not in data:
        return read(data.get("rounds") or {}, PHASED_ROUNDS, path, "rounds",
                    data.line_of("rounds"))["max"]
    if "rounds" in data:
        raise CascadeError("'max_rounds' and 'rounds' say the same: give one", path,
                           data.line_of("max_rounds"))
    return read({"max": data["max_rounds"]}, PHASED_ROUNDS, path, "max_rounds",
                data.line_of("max_rounds"))["max"]


def _seed_order(phases: dict, path: Path) -> list[str]:
    """The phases in the order their ``next`` runs them, from the first listed: every phase
    once, one after another (the engine enters phases in one order)."""
    order: list[str] = []
    pid = next(iter(phases))
    while pid is not None:
        item, _, after = phases[pid]
        order.append(pid)
        if after is not None and (not isinstance(after, str) or after not in phases):
            raise CascadeError(f"phase {pid!r}: next {after!r} is no phase (phases: "
                               f"{', '.join(phases)}; null: the last)", path, item.line_of("next"))
        if after in order:
            raise CascadeError(f"phase {pid!r}: next {after!r} comes back to an earlier phase: "
                               "the phases run once each, one after another", path,
                               item.line_of("next"))
        pid = after
    left = [p for p in phases if p not in order]
    if left:
        item = phases[left[0]][0]
        raise CascadeError(f"phase {left[0]!r} is never reached: no phase's next leads to it "
                           f"from {order[0]!r}", path, item.line_of("id"))
    return order


def _phase_step(item: LineDict, s: dict, role: str, path: Path) -> Step:
    """One step of a phased protocol: it asks a vote; the phase after it: its place."""
    sid, at = s["id"], item.line_of
    if s["role"] != role:
        raise CascadeError(f"step {sid!r}: unknown role {s['role']!r} (roles: {role})", path,
                           at("role"))
    fields = s["fields"]
    if not isinstance(fields, dict) or list(fields)[:1] != ["vote"] or \
            fields["vote"] != list(PHASED_VOTE) or set(fields) - {"vote", "findings"}:
        raise CascadeError(f"step {sid!r}: a respond protocol's step asks a vote: fields: "
                           f"{{vote: [{', '.join(PHASED_VOTE)}]}} (and may ask findings: "
                           "findings)", path, at("fields") or at("id"))
    extra = tuple(parse_field(name, spec, sid, path, at("fields") or at("id"))
                  for name, spec in fields.items() if name != "vote")
    trigger = s["advance"]
    if trigger is not None and trigger not in registry.TRIGGERS:
        raise CascadeError(f"step {sid!r}: unknown advance {trigger!r} (allowed: "
                           f"{', '.join(registry.TRIGGERS)}, or none: a person advances)", path,
                           at("advance"))
    vote = ballot(PHASED_VOTE)
    return Step(sid, str(s["title"] or sid), role, "discussion",
                str(s["instructions"] or "").strip(), 250, (vote, *extra), None, None, s["confirm"],
                advance=trigger)


def _phased_role(data: LineDict, path: Path) -> Role:
    """The one role of a phased protocol: the rule's participants."""
    roles = data.get("roles")
    line = data.line_of("roles") if "roles" in data else data.line_of("steps")
    if not isinstance(roles, list) or len(roles) != 1:
        raise CascadeError(_ONE_ROLE, path, line)
    role = read(roles[0], _PHASED_ROLE, path, "role", line)
    if not isinstance(role["id"], str) or role["from"] != "participants":
        raise CascadeError(_ONE_ROLE, path, roles[0].line_of("from") or line)
    return Role(role["id"], str(role["title"] or role["id"]), None, "fast")
