"""A protocol whose steps are phases, read from its file: a registered ``planner``
(``respond``: whoever is concerned speaks), one role from the rule's participants, and steps
entered in order, each asking a vote (``confirm: true``: its votes count), moved on by its
registered ``advance`` trigger or by a person; the outcome counts thresholds."""
from __future__ import annotations

from pathlib import Path

from cascade.config.schema import Bad, Key, flag, raw, read, word
from cascade.config.yamlio import LineDict, check_keys, items_with_lines
from cascade.base.errors import CascadeError
from cascade.protocol import registry
from cascade.protocol.fields import ballot, parse_field
from cascade.protocol.spec import Count, Role, Rounds, Shape, Step, Steps

# A protocol whose steps are phases (a registered planner): what its planner and phases
# honour, nothing more (a key accepted and then ignored would be a silent promise).
PHASED_KEYS = {"name", "title", "description", "planner", "roles", "rounds", "outcome", "steps"}
_PHASED_ROLE_KEYS = {"id", "title", "from"}
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
    top = read(data.get("rounds") or {}, PHASED_ROUNDS, path, "rounds",
               data.line_of("rounds"))["max"]
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
    line = data.line_of("rounds") or data.line_of("steps")
    return Steps((role,), tuple(steps),
                 Rounds(1, top, registry.EXITS.ref("all_accept", path, line), 1000),
                 Count(1, 8, 2), registry.OUTCOMES.ref(outcome, path, line),
                 planner=str(planner),
                 shape=Shape.of(registry.PLANNERS.behaviour(str(planner)).traits))


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
    role = check_keys(roles[0], path, _PHASED_ROLE_KEYS, {"id", "from"}, "role", line)
    if not isinstance(role["id"], str) or role["from"] != "participants":
        raise CascadeError(_ONE_ROLE, path, role.line_of("from") or line)
    return Role(role["id"], str(role.get("title") or role["id"]), None, "fast")
