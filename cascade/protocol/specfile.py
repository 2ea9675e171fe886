"""The records of a step protocol, read from its YAML (cascade.protocol.loader calls
``parse_steps``): its roles, steps, rounds and outcome -- the records are
cascade.protocol.spec; its modes, strategies and tiers are read by cascade.protocol.variants,
a protocol that names a registered ``planner`` (steps that are phases) by
cascade.protocol.phasedfile. The file's format, every key and field kind: docs/protocols.md
("Writing a protocol"); a decision point (``role: person``) is read by ``_decision``.
"""
from __future__ import annotations

from pathlib import Path

from cascade.config.schema import (
    Bad,
    Key,
    choice,
    flag,
    raw,
    read,
    span,
    value_of,
    whole,
    word,
    words,
)
from cascade.config.yamlio import LineDict, items_with_lines
from cascade.base.errors import CascadeError
from cascade.protocol import registry
from cascade.protocol.context import SHOWS
from cascade.protocol.fields import Field, parse_fallback, parse_field
from cascade.protocol.phasedfile import phased_steps
from cascade.protocol.spec import (
    APPENDS,
    ARTIFACTS,
    MEMBER_SOURCES,
    PERSON,
    READS,
    TIERS,
    VISIBILITIES,
    Role,
    Rounds,
    Step,
    Steps,
)
from cascade.protocol.variants import count_of, modes_of, strategies_of, tiers_of

# The protocol file's schema: each table declares its keys, the kind of value each takes and
# its default (cascade.config.schema); what one key cannot say alone (a role named by a step,
# a choice named by a goto...) is checked in code, after the table is read.
_NAME = word("a non-empty string")
ROLE = {
    "id": Key(_NAME, required=True, label="role 'id'"),
    "from": Key(raw), "persona": Key(_NAME, label="role 'persona'"),
    "tier": Key(choice(TIERS), "fast", label="role {id!r}: tier"),
    "title": Key(raw), "group": Key(raw),
    "weighs": Key(words("a list of role ids", must="is"), (), label="role {id!r}: weighs"),
}
STEP = {
    "id": Key(_NAME, required=True, label="step 'id'"),
    "role": Key(raw, required=True),
    "when": Key(choice(registry.CONDITIONS, ordered=True), label="step {id!r}: when"),
    "sees": Key(words("a list of step ids", must="is"), (), label="step {id!r}: sees"),
    "words": Key(raw, 150),  # a number, or [low, high]: _words
    "visibility": Key(choice(VISIBILITIES), "all", label="step {id!r}: visibility"),
    "target": Key(raw), "fields": Key(raw, {}), "reads": Key(raw, {}), "speakers": Key(raw),
    "confirm": Key(flag, False, label="step {id!r}: confirm"),
    "min_refs": Key(whole(0), 0, label="step {id!r}: min_refs"),
    "title": Key(raw), "instructions": Key(raw), "table": Key(raw), "fallback": Key(raw),
    # a decision point's (role: person): _decision
    "question": Key(raw), "choices": Key(raw), "recommended": Key(raw), "goto": Key(raw),
    "redo": Key(raw), "fills": Key(raw), "shows": Key(raw),
}
ROUNDS = {
    "min": Key(whole(1), 1, label="rounds min"), "max": Key(whole(1), 3, label="rounds max"),
    "exit": Key(raw, "all_accept"), "carry": Key(whole(0), 1000, label="rounds carry"),
    "on_impasse": Key(raw),
    "per_phase": Key(whole(1), 10, label="rounds per_phase"),
    "per_conflict": Key(whole(1), 3, label="rounds per_conflict"),
    "append": Key(choice(APPENDS), "reply", label="rounds append"),
}


def parse_steps(data: LineDict, path: Path) -> Steps:
    if data.get("planner") is not None:
        return phased_steps(data, path)
    roles = _roles(data, path)
    generated = any(r.source == "panel" for r in roles)
    if not isinstance(data.get("steps"), list) or not data.get("steps"):
        raise CascadeError("protocol 'steps' must be a non-empty list", path, data.line_of("steps"))
    seen: set[str] = set()
    steps, setup, after, pause, resume = (_step_list(data, key, roles, path, seen)
                                          for key in ("steps", "setup", "after", "pause",
                                                      "resume"))
    for key, group in (("pause", pause), ("resume", resume)):
        if any(s.decision for s in group):
            raise CascadeError(f"protocol {key!r}: its steps are spoken by roles, not asked of "
                               "a person", path, data.line_of(key))
    if setup and not generated:
        raise CascadeError("'setup' runs before round 1 to generate the panel: only a protocol "
                           "whose members come 'from: panel' has one", path, data.line_of("setup"))
    if generated and not any(f.kind == "panel" for s in setup for f in s.fields):
        raise CascadeError("members 'from: panel' need a setup step with a panel field", path,
                           data.line_of("setup") or data.line_of("roles"))
    for group in (steps, setup, after):
        _check_jumps(data, group, group is setup, path)
    count = count_of(data.get("participants"), path, data.line_of("participants"),
                   "participants", {"min": 1, "max": 8})
    # no outcome named: the exit rule's own verdict (READY when it ends the rounds)
    outcome = registry.OUTCOMES.ref(data.get("outcome", "exit"), path,
                                    data.line_of("outcome"), "outcome")
    artifacts = data.get("artifacts") or []
    if not isinstance(artifacts, list) or any(a not in ARTIFACTS for a in artifacts):
        raise CascadeError(f"artifacts must be a list of: {', '.join(ARTIFACTS)}", path,
                           data.line_of("artifacts"))
    modes, default = modes_of(data, roles, path)
    strategies, default_strategy = strategies_of(data, path)
    tiers, default_tier = tiers_of(data, roles, path)
    return Steps(tuple(roles), tuple(steps), _rounds(data, steps, path), count, outcome,
                 tuple(artifacts), tuple(setup), tuple(after), modes, default, None, strategies,
                 default_strategy, None, tiers, default_tier, pause=tuple(pause),
                 resume=tuple(resume))


def _roles(data: LineDict, path: Path) -> list[Role]:
    roles: list[Role] = []
    raw_roles = data.get("roles")
    if not isinstance(raw_roles, list) or not raw_roles:
        raise CascadeError("a protocol with steps needs 'roles': a non-empty list", path,
                           data.line_of("roles") if "roles" in data else data.line_of("steps"))
    for item, line in items_with_lines(raw_roles, data.line_of("roles")):
        r = read(item, ROLE, path, "role", line)
        rid, source, persona, group = r["id"], r["from"], r["persona"], r["group"] or ""
        at = item.line_of
        if any(x.id == rid for x in roles):
            raise CascadeError(f"duplicate role id {rid!r}", path, at("id"))
        if (source is None) == (persona is None) or (source is not None
                                                     and source not in MEMBER_SOURCES):
            raise CascadeError(f"role {rid!r}: give 'from: participants', 'from: panel' or "
                               "'persona: <alias>'", path, at("id"))
        if group and (persona is None or not isinstance(group, str)):
            raise CascadeError(f"role {rid!r}: group names a fixed role's group (a word)", path,
                               at("group"))
        roles.append(Role(rid, str(r["title"] or rid),
                          persona.lower() if persona is not None else None, r["tier"],
                          str(source) if source is not None else "participants", str(group),
                          tuple(r["weighs"])))
    ids = [r.id for r in roles]
    for role, (item, _) in zip(roles, items_with_lines(raw_roles, data.line_of("roles"))):
        wrong = [w for w in role.weighs if w not in ids or w == role.id]
        if wrong:
            raise CascadeError(f"role {role.id!r}: weighs names {wrong[0]!r}, not another "
                               f"role (roles: {', '.join(ids)})", path, item.line_of("weighs"))
    if sum(1 for r in roles if not r.fixed) != 1:
        raise CascadeError("exactly one role takes the discussion's members (from: "
                           "participants, or from: panel)", path, data.line_of("roles"))
    return roles


def _check_jumps(data: LineDict, group: list[Step], setup: bool, path: Path) -> None:
    """A decision point's ``goto`` names a later step of its list; ``redo``, an earlier
    setup step."""
    for step in group:
        later = [x.id for x in group[group.index(step) + 1:]]
        for name, target in step.goto:
            if target not in later:
                raise CascadeError(f"step {step.id!r}: goto {name!r} must name a later "
                                   f"step ({', '.join(later) or 'none'})", path,
                                   data.line_of(_key_of(data, step.id)))
        earlier = [x.id for x in group[:group.index(step)] if not x.decision]
        for name, target in step.redo:
            if not setup or target not in earlier:
                raise CascadeError(f"step {step.id!r}: redo {name!r} must name an "
                                   f"earlier setup step ({', '.join(earlier) or 'none'})",
                                   path, data.line_of("setup"))


def _rounds(data: LineDict, steps: list[Step], path: Path) -> Rounds:
    line, given = data.line_of("rounds"), data.get("rounds") or {}
    r = read(given, ROUNDS, path, "rounds", line)
    exit_line = given.line_of("exit") if isinstance(given, LineDict) and "exit" in given else line
    exit_rule = registry.EXITS.ref(r["exit"], path, exit_line, "rounds exit")
    on_impasse = r["on_impasse"]
    if on_impasse is not None and not any(s.id == on_impasse for s in steps):
        raise CascadeError(f"rounds on_impasse names an unknown step {on_impasse!r}", path, line)
    if r["min"] > r["max"]:
        raise CascadeError("rounds min is more than rounds max", path, line)
    return Rounds(r["min"], r["max"], exit_rule, r["carry"], on_impasse, r["per_phase"],
                  r["per_conflict"], r["append"])


def _key_of(data: LineDict, step_id: str) -> str:
    for key in ("steps", "setup", "after", "pause", "resume"):
        if any(isinstance(i, dict) and i.get("id") == step_id for i in data.get(key) or []):
            return key
    return "steps"


def _step_list(data: LineDict, key: str, roles: list[Role], path: Path,
               seen: set[str]) -> list[Step]:
    raw_steps = data.get(key)
    if raw_steps is None:
        return []
    if not isinstance(raw_steps, list):
        raise CascadeError(f"protocol {key!r} must be a list of steps", path, data.line_of(key))
    steps: list[Step] = []
    for item, line in items_with_lines(raw_steps, data.line_of(key)):
        s = read(item, STEP, path, "step", line)
        if s["id"] in seen:
            raise CascadeError(f"duplicate step id {s['id']!r}", path, item.line_of("id"))
        seen.add(s["id"])
        steps.append(_decision(item, s, path) if s["role"] == PERSON
                     else _step(item, s, roles, path))
    for step in steps:
        unknown = [x for x in step.sees if x not in seen]
        if unknown:
            raise CascadeError(f"step {step.id!r}: sees names an unknown step {unknown[0]!r}",
                               path, data.line_of(key))
    return steps


def _step(item: LineDict, s: dict, roles: list[Role], path: Path) -> Step:
    """A step that personas answer: its role (or fixed roles, in one wave), what it shows,
    asks and reads."""
    sid, role, at = s["id"], s["role"], item.line_of
    several = tuple(role) if isinstance(role, list) else ()
    for one in several or (role,):
        if not isinstance(one, str) or not any(r.id == one for r in roles):
            raise CascadeError(f"step {sid!r}: unknown role {one!r} (roles: "
                               f"{', '.join(r.id for r in roles)})", path, at("role"))
    if several and (len(set(several)) != len(several) or len(several) < 2 or
                    not all(next(r for r in roles if r.id == x).fixed for x in several)):
        raise CascadeError(f"step {sid!r}: a list of roles names two or more fixed roles, "
                           "each once (they speak in one wave)", path, at("role"))
    target = s["target"]
    if target is not None:
        target = registry.TARGETS.ref(target, path, at("target"), f"step {sid!r}: target")
    speakers = s["speakers"]
    if speakers is not None:
        speakers = registry.SPEAKERS.ref(speakers, path, at("speakers"),
                                         f"step {sid!r}: speakers")
    if not isinstance(s["fields"], dict):
        raise CascadeError(f"step {sid!r}: fields must be a mapping of name to [choices] "
                           "or text", path, at("fields"))
    fields = [parse_field(str(name), spec, sid, path, at("fields"))
              for name, spec in s["fields"].items()]
    if sum(1 for f in fields if f.kind == "panel") > 1:
        raise CascadeError(f"step {sid!r}: one panel field at most", path, at("fields"))
    if s["min_refs"] and not any(f.refs for f in fields):
        raise CascadeError(f"step {sid!r}: min_refs needs a refs field", path, at("min_refs"))
    span, count = _words(s["words"], sid, path, at("words"))
    fallback, given = parse_fallback(s["fallback"], fields, sid, path, at("fallback"))
    shows = s["shows"] or []
    if not isinstance(shows, list):
        raise CascadeError(f"step {sid!r}: shows takes a list of what else its prompt shows "
                           f"(known: {', '.join(SHOWS.names())})", path, at("shows"))
    return Step(sid, str(s["title"] or sid.title()), several[0] if several else role,
                s["visibility"], str(s["instructions"] or "").strip(), count, tuple(fields),
                target, str(s["table"]) if s["table"] else None, s["confirm"],
                min_refs=s["min_refs"], when=s["when"],
                fallback=fallback, fallback_fields=given, roles=several, sees=s["sees"],
                range=span, reads=_reads(item, s, fields, path),
                shows=tuple(SHOWS.ref(x, path, at("shows"), f"step {sid!r}: shows")
                            for x in shows), speakers=speakers)


def _words(value: object, sid: str, path: Path, line: int | None):
    """A step's ``words``: a number, or ``[low, high]`` (the range, and its high end)."""
    if isinstance(value, list):
        try:
            low, high = span("a number or [low, high]")(value)
        except Bad as exc:
            raise CascadeError(f"step {sid!r}: words {exc.must} {exc}", path, line) from None
        return (low, high), high
    return None, value_of(whole(1), value, f"step {sid!r}: words", path, line)


def _reads(item: LineDict, s: dict, fields: list[Field],
           path: Path) -> tuple[tuple[str, str], ...]:
    """A step's ``reads``: which of its fields the engine reads as what."""
    sid, reads, line = s["id"], s["reads"], item.line_of("reads")
    if not isinstance(reads, dict) or any(k not in READS or not isinstance(v, str)
                                          for k, v in reads.items()):
        raise CascadeError(f"step {sid!r}: reads maps what the engine reads ({', '.join(READS)})"
                           " to one of the step's fields", path, line)
    names = {f.name for f in fields}
    unknown = [v for v in reads.values() if v not in names]
    if unknown:
        raise CascadeError(f"step {sid!r}: reads names {unknown[0]!r}, not one of its fields "
                           f"({', '.join(sorted(names)) or 'none'})", path, line)
    return tuple((str(k), v) for k, v in reads.items())


def _decision(item: LineDict, s: dict, path: Path) -> Step:
    """A decision point: ``question``, ``choices`` (a list of words, or a mapping of each to
    what it does: said to the person with the question; ``{recommendation}`` in it is the
    round's), ``recommended``, optional ``goto``, ``redo``, and ``sees``: the steps whose
    turns of the round the question shows (default: the step before it)."""
    sid = s["id"]

    def at(key: str) -> int | None:
        return item.line_of(key) or item.line

    question = s["question"]
    if not isinstance(question, str) or not question.strip():
        raise CascadeError("question must be a non-empty string", path, at("question"))
    choices, does = s["choices"], {}
    if isinstance(choices, dict) and all(isinstance(v, str) for v in choices.values()):
        does = {str(k).strip(): " ".join(v.split()) for k, v in choices.items()}
        choices = list(choices)
    if not isinstance(choices, list) or not choices or not all(
            isinstance(c, str) and c.strip() and " " not in c.strip() for c in choices):
        raise CascadeError(f"step {sid!r}: choices must be a list of single words (or a "
                           "mapping of each to what it does)", path, at("choices"))
    choices = [c.strip() for c in choices]
    if s["recommended"] not in choices:
        raise CascadeError(f"step {sid!r}: recommended must be one of its choices "
                           f"({', '.join(choices)})", path, at("recommended"))
    jumps = []
    for key, where in (("goto", "a later step's id"), ("redo", "an earlier setup step's id")):
        value = s[key] or {}
        if not isinstance(value, dict) or any(k not in choices or not isinstance(v, str)
                                              for k, v in value.items()):
            raise CascadeError(f"step {sid!r}: {key} maps a choice to {where}", path, at(key))
        jumps.append(tuple((str(k), v) for k, v in value.items()))
    fills = s["fills"] or {}
    if not isinstance(fills, dict) or any(k not in choices or not isinstance(v, str) or not v
                                          for k, v in fills.items()):
        raise CascadeError(f"step {sid!r}: fills maps a choice to the list field whose first "
                           "item it takes when given no text", path, at("fills"))
    return Step(sid, str(s["title"] or sid.title()), PERSON, "all",
                str(s["instructions"] or "").strip(), 1, (), None, None, False,
                question.strip(), tuple(choices), s["recommended"], jumps[0], jumps[1],
                when=s["when"], does=tuple(does.items()), sees=s["sees"],
                fills=tuple((str(k), v) for k, v in fills.items()))
