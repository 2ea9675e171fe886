"""Discussion protocols as data: the phases a discussion moves through.

A protocol is a YAML file (bundled in protocols/, or a repository's .cascade/protocols/);
advancing a phase is an appended ledger event. A protocol whose ``planner`` is ``respond``
(``review``, ``phased``: whoever is concerned speaks, seed 002) is written as steps like any
other -- each step a phase, entered in order, by its registered ``advance`` trigger or by a
person -- and read here into its phases; the older form, ``phases:`` with ``next`` and
``auto_trigger``, is read as before. A step protocol's roles, steps and rounds are parsed by
cascade.protocol.spec.
"""
from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from cascade.config.yamlio import LineDict, check_keys, items_with_lines, load_yaml
from cascade.errors import CascadeError
from cascade.resources import search_path

if TYPE_CHECKING:
    from cascade.protocol.spec import Steps

DEFAULT_PROTOCOL = "phased"  # for `cascade new`
HEADERLESS_PROTOCOL = "review"  # for a hand-written ledger with no header: votes count at once

def _triggers() -> tuple[str | None, ...]:
    from cascade.protocol.registry import TRIGGERS  # the registered behaviours: one list

    return (None, *TRIGGERS)
_PROTOCOL_KEYS = {"name", "title", "description", "phases", "max_rounds", "roles", "steps",
                  "rounds", "participants", "outcome", "planner", "artifacts", "modes", "setup",
                  "after", "strategies", "flows", "tiers"}
_PHASE_KEYS = {"id", "title", "instructions", "voting_mode", "auto_trigger", "next"}
# A respond protocol written as steps: what its planner and phases honour, nothing more (a
# key accepted and then ignored would be a silent promise).
_RESPOND_KEYS = {"name", "title", "description", "planner", "roles", "rounds", "outcome",
                 "steps"}
_RESPOND_ROLE_KEYS = {"id", "title", "from"}
_RESPOND_STEP_KEYS = {"id", "title", "role", "instructions", "fields", "confirm", "advance"}
RESPOND_VOTE = ("READY", "CHANGES", "REJECT")  # what a respond step's reply votes


@dataclass(frozen=True)
class Phase:
    id: str
    title: str
    instructions: str
    voting_mode: bool
    auto_trigger: str | None
    next: str | None


@dataclass(frozen=True)
class Protocol:
    name: str
    title: str
    description: str
    phases: tuple[Phase, ...]
    max_rounds: int
    path: Path
    steps: Steps | None = None  # a step protocol's roles, steps and rounds (cascade.protocol)
    planner: str = "respond"  # a protocol of phases: who speaks (cascade.protocol.registry)

    @property
    def first(self) -> Phase:
        return self.phases[0]

    def get(self, phase_id: str) -> Phase | None:
        for phase in self.phases:
            if phase.id == phase_id:
                return phase
        return None

    def phase_ids(self) -> list[str]:
        return [p.id for p in self.phases]


def load_protocol_file(path: Path) -> Protocol:
    raw = load_yaml(path)
    stepped = isinstance(raw, dict) and "steps" in raw
    respond = stepped and raw.get("planner") == "respond"
    data = check_keys(raw, path, _RESPOND_KEYS if respond else _PROTOCOL_KEYS,
                      {"name", "steps" if stepped else "phases"}, "protocol")
    name = data["name"]
    if not isinstance(name, str):
        raise CascadeError("protocol 'name' must be a string", path, data.line_of("name"))
    if respond:
        return _respond_protocol(data, name, path)
    if stepped:
        return _step_protocol(data, name, path)
    phases_data = data["phases"]
    if not isinstance(phases_data, list) or not phases_data:
        raise CascadeError("protocol 'phases' must be a non-empty list", path, data.line_of("phases"))
    phases: list[Phase] = []
    items: list[LineDict] = []
    for item, item_line in items_with_lines(phases_data, data.line_of("phases")):
        ph = check_keys(item, path, _PHASE_KEYS, {"id"}, "phase", item_line)
        line = ph.line if isinstance(ph, LineDict) else item_line
        if not isinstance(ph["id"], str):
            raise CascadeError("phase 'id' must be a string", path, ph.line_of("id"))
        if any(p.id == ph["id"] for p in phases):
            raise CascadeError(f"duplicate phase id {ph['id']!r}", path, line)
        trigger = ph.get("auto_trigger")
        if trigger not in _triggers():
            allowed = ", ".join(t for t in _triggers() if t)
            raise CascadeError(f"unknown auto_trigger {trigger!r} (allowed: {allowed} or null)",
                               path, ph.line_of("auto_trigger"))
        voting = ph.get("voting_mode", False)
        if not isinstance(voting, bool):
            raise CascadeError("voting_mode must be true or false", path, ph.line_of("voting_mode"))
        nxt = ph.get("next")
        if nxt is not None and not isinstance(nxt, str):
            raise CascadeError(f"phase {ph['id']!r}: next must be a phase id or null (the last "
                               "phase)", path, ph.line_of("next"))
        phases.append(Phase(ph["id"], str(ph.get("title") or ph["id"]),
                            str(ph.get("instructions") or "").strip(), voting, trigger, nxt))
        items.append(ph)
    ids = {p.id for p in phases}
    for item, phase in zip(items, phases):
        if phase.next is not None and phase.next not in ids:
            raise CascadeError(f"phase {phase.id!r} names an unknown next phase {phase.next!r}",
                               path, item.line_of("next"))
    _check_chains(phases, items, path)
    max_rounds = data.get("max_rounds", 3)
    if not isinstance(max_rounds, int) or isinstance(max_rounds, bool) or max_rounds < 1:
        raise CascadeError("max_rounds must be a positive whole number", path,
                           data.line_of("max_rounds"))
    if name != path.stem:  # a ledger records the name, and a name is looked up as a file name
        raise CascadeError(f"protocol name {name!r} does not match the file name {path.name!r}",
                           path, data.line_of("name"))
    from cascade.protocol.registry import PLANNERS

    planner = data.get("planner", "respond")
    if planner not in PLANNERS:
        raise CascadeError(f"unknown planner {planner!r} (known: {', '.join(sorted(PLANNERS))})",
                           path, data.line_of("planner"))
    return Protocol(name, str(data.get("title") or name),
                    str(data.get("description") or "").strip(), tuple(phases), max_rounds, path,
                    planner=planner)


def _step_protocol(data: LineDict, name: str, path: Path) -> Protocol:
    """A protocol of roles, steps and rounds: its one phase is the whole discussion."""
    from cascade.protocol.spec import parse_steps

    if "phases" in data:
        raise CascadeError("a protocol has either 'phases' or 'steps', not both", path,
                           data.line_of("phases"))
    if name != path.stem:
        raise CascadeError(f"protocol name {name!r} does not match the file name {path.name!r}",
                           path, data.line_of("name"))
    steps = parse_steps(data, path)
    title = str(data.get("title") or name)
    phase = Phase(name, title, "", True, None, None)
    return Protocol(name, title, str(data.get("description") or "").strip(), (phase,),
                    steps.rounds.max, path, steps)


def _respond_protocol(data: LineDict, name: str, path: Path) -> Protocol:
    """A protocol whose planner is ``respond``, written as steps: each step a phase, in
    order; ``confirm: true`` -- its votes count (else they are advisory); ``advance``: the
    registered trigger that moves it on by itself (none: a person advances)."""
    if name != path.stem:
        raise CascadeError(f"protocol name {name!r} does not match the file name {path.name!r}",
                           path, data.line_of("name"))
    role = _respond_role(data, path)
    rounds = check_keys(data.get("rounds") or {}, path, {"max"}, set(), "rounds",
                        data.line_of("rounds"))
    max_rounds = rounds.get("max", 3)
    if not isinstance(max_rounds, int) or isinstance(max_rounds, bool) or max_rounds < 1:
        raise CascadeError("rounds max must be a positive whole number", path,
                           data.line_of("rounds"))
    outcome = data.get("outcome", "thresholds")
    if outcome != "thresholds":
        raise CascadeError(f"a protocol whose planner is respond counts each participant's "
                           f"latest vote: its outcome is thresholds, not {outcome!r}", path,
                           data.line_of("outcome"))
    raw_steps = data["steps"]
    if not isinstance(raw_steps, list) or not raw_steps:
        raise CascadeError("protocol 'steps' must be a non-empty list", path,
                           data.line_of("steps"))
    phases: list[Phase] = []
    for item, line in items_with_lines(raw_steps, data.line_of("steps")):
        phase = _respond_phase(check_keys(item, path, _RESPOND_STEP_KEYS, {"id", "role"}, "step",
                                          line), role, path)
        if any(p.id == phase.id for p in phases):
            raise CascadeError(f"duplicate step id {phase.id!r}", path, item.line_of("id"))
        phases.append(phase)
    if phases[-1].auto_trigger is not None:
        raise CascadeError(f"step {phases[-1].id!r} is the last: there is no step to advance to",
                           path, data.line_of("steps"))
    chained = tuple(dataclasses.replace(p, next=nxt.id) for p, nxt in zip(phases, phases[1:]))
    return Protocol(name, str(data.get("title") or name),
                    str(data.get("description") or "").strip(), (*chained, phases[-1]),
                    max_rounds, path, planner="respond")


def _respond_phase(s: LineDict, role: str, path: Path) -> Phase:
    """One step of a respond protocol, as the phase it is (its ``next``: set by its place)."""
    sid = s["id"]
    if not isinstance(sid, str) or not sid.strip():
        raise CascadeError("step 'id' must be a string", path, s.line_of("id"))
    if s["role"] != role:
        raise CascadeError(f"step {sid!r}: unknown role {s['role']!r} (roles: {role})", path,
                           s.line_of("role"))
    fields = s.get("fields")
    if not isinstance(fields, dict) or list(fields) != ["vote"] or \
            fields["vote"] != list(RESPOND_VOTE):
        raise CascadeError(f"step {sid!r}: a respond protocol's step asks a vote: fields: "
                           f"{{vote: [{', '.join(RESPOND_VOTE)}]}}", path,
                           s.line_of("fields") or s.line_of("id"))
    confirm = s.get("confirm", False)
    if not isinstance(confirm, bool):
        raise CascadeError(f"step {sid!r}: confirm must be true or false", path,
                           s.line_of("confirm"))
    trigger = s.get("advance")
    if trigger not in _triggers():
        allowed = ", ".join(t for t in _triggers() if t)
        raise CascadeError(f"step {sid!r}: unknown advance {trigger!r} (allowed: {allowed}, "
                           "or none: a person advances)", path, s.line_of("advance"))
    return Phase(sid, str(s.get("title") or sid), str(s.get("instructions") or "").strip(),
                 confirm, trigger, None)


def _respond_role(data: LineDict, path: Path) -> str:
    """The one role of a respond protocol: the rule's participants."""
    raw = data.get("roles")
    line = data.line_of("roles") if "roles" in data else data.line_of("steps")
    if not isinstance(raw, list) or len(raw) != 1:
        raise CascadeError("a protocol whose planner is respond has one role: {id: participant, "
                           "from: participants}", path, line)
    role = check_keys(raw[0], path, _RESPOND_ROLE_KEYS, {"id", "from"}, "role", line)
    if not isinstance(role["id"], str) or role["from"] != "participants":
        raise CascadeError("a protocol whose planner is respond has one role: {id: participant, "
                           "from: participants}", path, role.line_of("from") or line)
    return role["id"]


def _check_chains(phases: list[Phase], items: list[LineDict], path: Path) -> None:
    """Every chain of ``next`` must end at a last phase (``next: null``). A cycle -- a phase
    that is its own next, or a -> b -> a -- would advance for ever, a paid round each time:
    refused, at the ``next:`` that closes it (the one written last in the file)."""
    by_id = {p.id: p for p in phases}
    order = {p.id: i for i, p in enumerate(phases)}
    done: set[str] = set()  # phases whose chain is known to end
    for phase in phases:
        trail: list[str] = []
        current: str | None = phase.id
        while current is not None and current not in done and current not in trail:
            trail.append(current)
            current = by_id[current].next
        if current is not None and current in trail:
            cycle = trail[trail.index(current):]
            closing = max(cycle, key=order.__getitem__)  # its next leads back into the cycle
            start = cycle.index(closing)
            walk = " -> ".join(repr(p) for p in cycle[start:] + cycle[:start] + [closing])
            raise CascadeError(f"phase {walk} is a cycle: a phase's next must lead to a last "
                               "phase", path, items[order[closing]].line_of("next"))
        done.update(trail)


def load_protocol(name: str, root: Path | None, where: Path | None = None) -> Protocol:
    """Find a protocol by name: the repository's own first, then the bundled ones. An unknown
    name is an error naming ``where`` (the ledger or rule file that asked for it)."""
    folders = tuple(search_path("protocols", root))
    protocol = _load(name, folders)
    if protocol is None:
        known = sorted({p.stem for f in folders for p in f.glob("*.y*ml")})
        raise CascadeError(f"unknown protocol {name!r} (known: {', '.join(known)})", where)
    return protocol


@functools.lru_cache(maxsize=64)
def _load(name: str, folders: tuple[Path, ...]) -> Protocol | None:
    for folder in folders:
        for ext in (".yml", ".yaml"):
            path = folder / f"{name}{ext}"
            if path.is_file() or path.is_symlink():  # a link is refused as it is read
                return load_protocol_file(path)
    return None
