"""A protocol's variants, read from its file: its modes (a member count, fixed roles and a
round range each), its strategies or flows (phases, participation, sides, an outcome of
their own) and its tiers (the roles each gives the strong model)."""
from __future__ import annotations

import re
from pathlib import Path

from cascade.config.schema import Key, choice, one_of, raw, read, span, value_of, whole, word, words
from cascade.config.yamlio import LineDict, items_with_lines
from cascade.base.errors import CascadeError
from cascade.protocol import registry
from cascade.protocol.fields import parse_field
from cascade.protocol.spec import PHASE_AT, VISIBILITIES, Count, Mode, Phase, Role, Strategy

_NAME = word("a non-empty string")
COUNT = {
    "min": Key(whole(1), label="{what} min"), "max": Key(whole(1), label="{what} max"),
    "default": Key(whole(1), label="{what} default"), "personas": Key(raw, ()),
}
MODE = {
    "experts": Key(raw), "roles": Key(raw, required=True), "rounds": Key(raw, required=True),
    "stand_in": Key(raw, {}), "seed": Key(raw),
}
MODE_ROUNDS = {
    "min": Key(whole(1), 1, label="mode {name!r} rounds min"),
    "max": Key(whole(1), required=True, label="mode {name!r} rounds max"),
}
STRATEGY = {
    "title": Key(raw), "phases": Key(raw, required=True),
    "participation": Key(one_of("parallel", "sequential", must="is"), "parallel",
                         label="strategy {name!r}: participation"),
    "outcome": Key(raw), "fields": Key(raw, {}),
    "sides": Key(words("a list of names"), (), label="strategy {name!r}: sides"),
    "rounds": Key(span("[min, default]"), label="strategy {name!r}: rounds"),
    "keywords": Key(words("a list of words"), (), label="strategy {name!r}: keywords"),
    "groups": Key(one_of("together", "in_turn", must="is"), "together",
                  label="strategy {name!r}: groups"),
}
PHASE = {
    "id": Key(_NAME, required=True, label="phase 'id'"),
    "title": Key(raw), "goal": Key(raw),
    "min_rounds": Key(whole(1), 1, label="strategy {name!r}: phase {id!r}: min_rounds"),
    "at": Key(choice(PHASE_AT, must="is"), label="strategy {name!r}: phase {id!r}: at"),
    "visibility": Key(choice(VISIBILITIES), label="strategy {name!r}: phase {id!r}: visibility"),
    "words": Key(span("[low, high]"), label="strategy {name!r}: phase {id!r}: words"),
}


def strategies_of(data: LineDict, path: Path) -> tuple[tuple[Strategy, ...], str | None]:
    """``strategies:`` (roundtable) or ``flows:`` (council): the same records, named by the
    option that picks one."""
    if "strategies" in data and "flows" in data:
        raise CascadeError("a protocol has strategies or flows, not both", path,
                           data.line_of("flows"))
    key, kind = ("flows", "flow") if "flows" in data else ("strategies", "strategy")
    raw_map = data.get(key)
    if raw_map is None:
        return (), None
    line = data.line_of(key)
    if not isinstance(raw_map, dict) or not raw_map:
        raise CascadeError(f"{key} must map a {kind}'s name to its phases", path, line)
    out = [_strategy(str(name), spec, kind, path, line)
           for name, spec in raw_map.items() if name != "default"]
    default = raw_map.get("default") or (out[0].name if out else None)
    if not any(x.name == default for x in out):
        raise CascadeError(f"{key} default {default!r} is not one of the {key}", path, line)
    return tuple(out), default


def _strategy(name: str, spec: object, kind: str, path: Path, line: int | None) -> Strategy:
    names = {"name": name}
    st = read(spec, STRATEGY, path, f"strategy {name!r}", line, names)
    at = spec.line_of  # type: ignore[attr-defined]
    sline = at("phases") or line
    if not isinstance(st["phases"], list) or not st["phases"]:
        raise CascadeError(f"strategy {name!r}: phases must be a non-empty list", path, sline)
    phases: list[Phase] = []
    for item, iline in items_with_lines(st["phases"], sline):
        ph = read(item, PHASE, path, f"strategy {name!r} phase", iline, names)
        if any(p.id == ph["id"] for p in phases):
            raise CascadeError(f"strategy {name!r}: duplicate phase {ph['id']!r}", path,
                               item.line_of("id"))
        phases.append(Phase(ph["id"], str(ph["title"] or ph["id"].replace("-", " ").title()),
                            " ".join(str(ph["goal"] or "").split()), ph["min_rounds"], ph["at"],
                            ph["visibility"], ph["words"]))
    outcome = st["outcome"]
    if outcome is not None:
        outcome = registry.OUTCOMES.ref(outcome, path, at("outcome") or sline,
                                        f"strategy {name!r}: outcome")
    if not isinstance(st["fields"], dict):
        raise CascadeError(f"strategy {name!r}: fields map a name to its kind", path,
                           at("fields") or sline)
    fields = tuple(parse_field(str(k), v, f"strategy {name}", path, at("fields"))
                   for k, v in st["fields"].items())
    return Strategy(name, str(st["title"] or name.title()), tuple(phases), st["participation"],
                    outcome, fields, st["sides"], st["rounds"], kind,
                    tuple(k.lower() for k in st["keywords"]), groups=st["groups"])


def by_keyword(strategies, topic: str) -> tuple[str, str] | None:
    """The first strategy (in the protocol's order) one of whose ``keywords`` the topic
    says, as a word or phrase of its own: (its name, the word); None: no keyword."""
    words = " " + " ".join(re.findall(r"[a-z0-9-]+", topic.lower())) + " "
    for strategy in strategies:
        for keyword in strategy.keywords:
            if f" {keyword} " in words:
                return strategy.name, keyword
    return None


def tiers_of(data: LineDict, roles: list[Role], path: Path):
    """``tiers: {default: medium, light: [], medium: [referee], heavy: [referee, advisor]}``:
    per tier, the roles given the strong model."""
    raw_map = data.get("tiers")
    if raw_map is None:
        return (), None
    line = data.line_of("tiers")
    if not isinstance(raw_map, dict) or not raw_map:
        raise CascadeError("tiers must map a tier's name to the roles it makes strong", path,
                           line)
    ids = [r.id for r in roles]
    out = []
    for name, value in raw_map.items():
        if name == "default":
            continue
        if not isinstance(value, list) or any(v not in ids for v in value):
            raise CascadeError(f"tier {name!r}: a list of the protocol's roles "
                               f"({', '.join(ids)})", path, line)
        out.append((str(name), tuple(value)))
    default = raw_map.get("default") or (out[0][0] if out else None)
    if default not in dict(out):
        raise CascadeError(f"tiers default {default!r} is not one of the tiers", path, line)
    return tuple(out), default


def count_of(value: object, path: Path, line: int | None, what: str,
           defaults: dict[str, int]) -> Count:
    if isinstance(value, int) and not isinstance(value, bool):
        n = value_of(whole(1), value, what, path, line)
        return Count(n, n, n)
    c = read(value or {}, COUNT, path, what, line, {"what": what})
    low = c["min"] if c["min"] is not None else defaults["min"]
    high = c["max"] if c["max"] is not None else defaults["max"]
    default = c["default"] if c["default"] is not None else \
        c["min"] if c["min"] is not None else max(defaults["min"], 2)
    if not low <= default <= high:
        raise CascadeError(f"{what}: min <= default <= max must hold", path, line)
    personas = c["personas"]
    if not isinstance(personas, (list, tuple)) or not all(isinstance(p, str) and p
                                                          for p in personas) \
            or not low <= len(personas) <= high and personas:
        raise CascadeError(f"{what}: personas is a list of {low} to {high} aliases", path, line)
    return Count(low, high, default, tuple(p.lower() for p in personas))


def modes_of(data: LineDict, roles: list[Role], path: Path) -> tuple[tuple[Mode, ...], str | None]:
    raw_map = data.get("modes")
    if raw_map is None:
        return (), None
    line = data.line_of("modes")
    if not isinstance(raw_map, dict) or not raw_map:
        raise CascadeError("modes must map a mode's name to its experts, roles and rounds",
                           path, line)
    fixed = [r.id for r in roles if r.fixed]
    modes = [_mode(str(name), spec, fixed, path, line)
             for name, spec in raw_map.items() if name != "default"]
    default = raw_map.get("default")
    if default is None:
        default = modes[0].name if modes else None
    if not any(m.name == default for m in modes):
        raise CascadeError(f"modes default {default!r} is not one of the modes", path, line)
    return tuple(modes), default


def _mode(name: str, spec: object, fixed: list[str], path: Path, line: int | None) -> Mode:
    m = read(spec, MODE, path, f"mode {name!r}", line)
    at = spec.line_of  # type: ignore[attr-defined]
    mline = at("roles") or line
    present = m["roles"]
    if not isinstance(present, list) or any(p not in fixed for p in present):
        raise CascadeError(f"mode {name!r}: roles must be a list of the protocol's fixed "
                           f"roles ({', '.join(fixed)})", path, mline)
    rr = read(m["rounds"], MODE_ROUNDS, path, f"mode {name!r} rounds", at("rounds"),
              {"name": name})
    if rr["min"] > rr["max"]:
        raise CascadeError(f"mode {name!r}: rounds min is more than max", path, at("rounds"))
    stand_in = m["stand_in"]
    if not isinstance(stand_in, dict) or any(
            k not in fixed or k in present or v not in present for k, v in stand_in.items()):
        raise CascadeError(f"mode {name!r}: stand_in maps a role the mode lacks to one it "
                           "has", path, at("stand_in") or mline)
    experts = m["experts"]
    if experts == 0 and not isinstance(experts, bool):  # the members do not speak
        counted: Count | None = Count(0, 0, 0)
    elif experts is None:  # the protocol's participants
        counted = None
    else:
        counted = count_of(experts, path, at("experts") or mline, f"mode {name!r} experts",
                         {"min": 1, "max": 8})
    calls, why = _seed(m["seed"], name, path, at("seed") or mline)
    return Mode(name, counted, tuple(present), (rr["min"], rr["max"]),
                tuple((str(k), str(v)) for k, v in stand_in.items()), calls, why)


def _seed(spec: object, name: str, path: Path, line: int | None) -> tuple[tuple[int, int] | None,
                                                                            str]:
    """A mode's ``seed: {calls: [low, high], why: <text>}``: the calls a round makes as the
    design the protocol comes from counts them, and why the engine's count differs."""
    if spec is None:
        return None, ""
    calls = spec.get("calls") if isinstance(spec, dict) else None
    why = spec.get("why") if isinstance(spec, dict) else None
    if (not isinstance(calls, list) or len(calls) != 2 or not all(
            isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in calls)
            or calls[0] > calls[1] or not isinstance(why, str) or not why.strip()
            or set(spec) - {"calls", "why"}):
        raise CascadeError(f"mode {name!r}: seed takes calls: [low, high] (a round's calls as "
                           "the seed counts them) and why: <why ours differ>", path, line)
    return (calls[0], calls[1]), " ".join(why.split())


