"""The records of a step protocol, declared once: its roles, steps, rounds and outcome, read
from the protocol's YAML (cascade.config.protocols calls ``parse_steps`` when a protocol
has ``steps:``). A protocol with ``phases:`` only (``review``, ``phased``) has none of these.

```yaml
participants: {min: 2, max: 4, default: 2}   # how many of the rule's participants deliberate
roles:
  - {id: participant, from: participants, tier: fast}
  - {id: synthesizer, persona: synthesizer, tier: strong}   # a fixed role: never a participant
rounds: {max: 3, exit: all_accept, carry: 1000, on_impasse: recommend}
        # exit rule (registered); characters of the summary that seeds the next round; a
        # step run once when the last round ends without consensus
steps:
  - id: propose
    role: participant
    visibility: blind            # blind | sequential | synthesis | all
    words: 60                    # the reply's word budget, said in the prompt
    fields: {}                   # reply fields besides "comment": name -> [choices], "text",
                                 # or "refs" (cited message ids; the name is the edge type)
    target: most_opposing        # registered: whom each speaker answers
    table: Position              # a table of the step's replies, in the ledger and on screen
    confirm: true                # the step's "vote" is the confirmation (ACCEPT / REJECT)
```
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cascade.config.yamlio import LineDict, check_keys, items_with_lines
from cascade.errors import CascadeError

VISIBILITIES = ("blind", "sequential", "synthesis", "all")
TIERS = ("fast", "strong")
_ROLE_KEYS = {"id", "from", "persona", "tier", "title"}
_STEP_KEYS = {"id", "title", "role", "visibility", "instructions", "words", "fields", "target",
              "table", "confirm", "question", "choices", "recommended", "goto"}
PERSON = "person"  # the built-in role of a decision point: a person answers, in the ledger
ARTIFACTS = ("argument-graph",)  # files a protocol may ask for beside the ledger
REF_TYPES = ("supports", "counters", "extends", "questions", "responds_to")  # typed edges
_ROUNDS_KEYS = {"min", "max", "exit", "carry", "on_impasse"}
_COUNT_KEYS = {"min", "max", "default"}


@dataclass(frozen=True)
class Role:
    id: str
    title: str
    persona: str | None  # a fixed role's persona alias; None: the discussion's participants
    tier: str  # fast | strong

    @property
    def fixed(self) -> bool:
        return self.persona is not None


@dataclass(frozen=True)
class Field:
    name: str
    choices: tuple[str, ...] | None  # None: free text (or references)
    fallback: str  # what a missing or invalid value becomes (and a note says so)
    refs: bool = False  # message ids the turn cites, as typed edges named by the field


@dataclass(frozen=True)
class Step:
    id: str
    title: str
    role: str
    visibility: str
    instructions: str
    words: int
    fields: tuple[Field, ...]
    target: str | None
    table: str | None
    confirm: bool
    # a decision point (role: person): the question, its choices, the one --auto takes, and
    # the step a choice jumps to (later in the round; default: the next step)
    question: str = ""
    choices: tuple[str, ...] = ()
    recommended: str | None = None
    goto: tuple[tuple[str, str], ...] = ()

    @property
    def decision(self) -> bool:
        return self.role == PERSON


@dataclass(frozen=True)
class Rounds:
    min: int
    max: int
    exit: str
    carry: int
    on_impasse: str | None = None  # a step run once when the last round ends without consensus


@dataclass(frozen=True)
class Count:
    min: int
    max: int
    default: int


@dataclass(frozen=True)
class Steps:
    """A step protocol's own part."""

    roles: tuple[Role, ...]
    steps: tuple[Step, ...]
    rounds: Rounds
    participants: Count
    outcome: str
    artifacts: tuple[str, ...] = ()  # written beside the ledger at the conclusion

    def role(self, role_id: str) -> Role:
        return next(r for r in self.roles if r.id == role_id)

    def step(self, step_id: str) -> Step | None:
        return next((s for s in self.steps if s.id == step_id), None)

    @property
    def round_steps(self) -> tuple[Step, ...]:
        """The steps of every round (the impasse step aside)."""
        return tuple(s for s in self.steps if s.id != self.rounds.on_impasse)

    @property
    def fixed_roles(self) -> tuple[Role, ...]:
        return tuple(r for r in self.roles if r.fixed)


def _int(value: object, path: Path, line: int | None, what: str, low: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise CascadeError(f"{what} must be a whole number of at least {low}", path, line)
    return value


def _text(value: object, path: Path, line: int | None, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise CascadeError(f"{what} must be a non-empty string", path, line)
    return value.strip()


def parse_steps(data: LineDict, path: Path) -> Steps:
    from cascade.protocol import registry

    roles: list[Role] = []
    raw_roles = data.get("roles")
    if not isinstance(raw_roles, list) or not raw_roles:
        raise CascadeError("a protocol with steps needs 'roles': a non-empty list", path,
                           data.line_of("roles") if "roles" in data else data.line_of("steps"))
    for item, line in items_with_lines(raw_roles, data.line_of("roles")):
        r = check_keys(item, path, _ROLE_KEYS, {"id"}, "role", line)
        rid = _text(r["id"], path, r.line_of("id"), "role 'id'")
        if any(x.id == rid for x in roles):
            raise CascadeError(f"duplicate role id {rid!r}", path, r.line_of("id"))
        source, persona = r.get("from"), r.get("persona")
        if (source is None) == (persona is None) or (source is not None
                                                     and source != "participants"):
            raise CascadeError(f"role {rid!r}: give 'from: participants' or 'persona: <alias>'",
                               path, r.line_of("id"))
        tier = r.get("tier", "fast")
        if tier not in TIERS:
            raise CascadeError(f"role {rid!r}: tier must be one of {', '.join(TIERS)}", path,
                               r.line_of("tier"))
        roles.append(Role(rid, str(r.get("title") or rid),
                          _text(persona, path, r.line_of("persona"), "role 'persona'").lower()
                          if persona is not None else None, tier))
    if sum(1 for r in roles if not r.fixed) != 1:
        raise CascadeError("exactly one role takes the discussion's participants (from: "
                           "participants)", path, data.line_of("roles"))

    steps: list[Step] = []
    raw_steps = data.get("steps")
    if not isinstance(raw_steps, list) or not raw_steps:
        raise CascadeError("protocol 'steps' must be a non-empty list", path, data.line_of("steps"))
    for item, line in items_with_lines(raw_steps, data.line_of("steps")):
        s = check_keys(item, path, _STEP_KEYS, {"id", "role"}, "step", line)
        sid = _text(s["id"], path, s.line_of("id"), "step 'id'")
        if any(x.id == sid for x in steps):
            raise CascadeError(f"duplicate step id {sid!r}", path, s.line_of("id"))
        role = s["role"]
        if role == PERSON:
            steps.append(_decision(s, sid, path))
            continue
        if not any(r.id == role for r in roles):
            raise CascadeError(f"step {sid!r}: unknown role {role!r} (roles: "
                               f"{', '.join(r.id for r in roles)})", path, s.line_of("role"))
        visibility = s.get("visibility", "all")
        if visibility not in VISIBILITIES:
            raise CascadeError(f"step {sid!r}: visibility must be one of "
                               f"{', '.join(VISIBILITIES)}", path, s.line_of("visibility"))
        target = s.get("target")
        if target is not None and target not in registry.TARGETS:
            raise CascadeError(f"step {sid!r}: unknown target {target!r} (known: "
                               f"{', '.join(sorted(registry.TARGETS))})", path, s.line_of("target"))
        fields: list[Field] = []
        raw_fields = s.get("fields") or {}
        if not isinstance(raw_fields, dict):
            raise CascadeError(f"step {sid!r}: fields must be a mapping of name to [choices] "
                               "or text", path, s.line_of("fields"))
        for name, spec in raw_fields.items():
            if spec == "text":
                fields.append(Field(str(name), None, ""))
            elif spec == "refs":  # cited message ids: edges of this type (supports, ...)
                if name not in REF_TYPES:
                    raise CascadeError(f"step {sid!r}: a refs field is named by its edge type "
                                       f"({', '.join(REF_TYPES)}), not {name!r}", path,
                                       s.line_of("fields"))
                fields.append(Field(str(name), None, "", refs=True))
            elif isinstance(spec, list) and spec and all(isinstance(c, str) for c in spec):
                # the last choice is the fallback: the cautious one (REJECT, major, ...)
                fields.append(Field(str(name), tuple(spec), spec[-1]))
            else:
                raise CascadeError(f"step {sid!r}: field {name!r} must be text or a list of "
                                   "choices, each a string (quote yes, no, on, off: YAML reads "
                                   "them as true and false)", path, s.line_of("fields"))
        confirm = s.get("confirm", False)
        if not isinstance(confirm, bool):
            raise CascadeError(f"step {sid!r}: confirm must be true or false", path,
                               s.line_of("confirm"))
        steps.append(Step(sid, str(s.get("title") or sid.title()), role, visibility,
                          str(s.get("instructions") or "").strip(),
                          _int(s.get("words", 150), path, s.line_of("words"), "words"),
                          tuple(fields), target,
                          str(s["table"]) if s.get("table") else None, confirm))

    for step, (item, line) in zip(steps, items_with_lines(raw_steps, data.line_of("steps"))):
        for choice, target in step.goto:
            later = [x.id for x in steps[steps.index(step) + 1:]]
            if target not in later:
                raise CascadeError(f"step {step.id!r}: goto {choice!r} must name a later step "
                                   f"({', '.join(later) or 'none'})", path, item.line_of("goto"))
    r = check_keys(data.get("rounds") or {}, path, _ROUNDS_KEYS, set(), "rounds",
                   data.line_of("rounds"))
    exit_rule = r.get("exit", "all_accept")
    if exit_rule not in registry.EXIT_RULES:
        raise CascadeError(f"unknown exit rule {exit_rule!r} (known: "
                           f"{', '.join(sorted(registry.EXIT_RULES))})", path,
                           data.line_of("rounds"))
    line = data.line_of("rounds")
    on_impasse = r.get("on_impasse")
    if on_impasse is not None and not any(s.id == on_impasse for s in steps):
        raise CascadeError(f"rounds on_impasse names an unknown step {on_impasse!r}", path, line)
    rounds = Rounds(_int(r.get("min", 1), path, line, "rounds min"),
                    _int(r.get("max", 3), path, line, "rounds max"), exit_rule,
                    _int(r.get("carry", 1000), path, line, "rounds carry", low=0), on_impasse)
    if rounds.min > rounds.max:
        raise CascadeError("rounds min is more than rounds max", path, line)
    c = check_keys(data.get("participants") or {}, path, _COUNT_KEYS, set(), "participants",
                   data.line_of("participants"))
    line = data.line_of("participants")
    count = Count(_int(c.get("min", 1), path, line, "participants min"),
                  _int(c.get("max", 8), path, line, "participants max"),
                  _int(c.get("default", c.get("min", 2)), path, line, "participants default"))
    outcome = data.get("outcome", exit_rule)
    if outcome not in registry.OUTCOME_RULES:
        raise CascadeError(f"unknown outcome rule {outcome!r} (known: "
                           f"{', '.join(sorted(registry.OUTCOME_RULES))})", path,
                           data.line_of("outcome"))
    artifacts = data.get("artifacts") or []
    if not isinstance(artifacts, list) or any(a not in ARTIFACTS for a in artifacts):
        raise CascadeError(f"artifacts must be a list of: {', '.join(ARTIFACTS)}", path,
                           data.line_of("artifacts"))
    return Steps(tuple(roles), tuple(steps), rounds, count, outcome, tuple(artifacts))


def _decision(s: LineDict, sid: str, path: Path) -> Step:
    """A decision point: ``question``, ``choices``, ``recommended``, optional ``goto``."""
    question = _text(s.get("question"), path, s.line_of("question") or s.line, "question")
    choices = s.get("choices")
    if not isinstance(choices, list) or not choices or not all(
            isinstance(c, str) and c.strip() and " " not in c.strip() for c in choices):
        raise CascadeError(f"step {sid!r}: choices must be a list of single words", path,
                           s.line_of("choices") or s.line)
    choices = [c.strip() for c in choices]
    recommended = s.get("recommended")
    if recommended not in choices:
        raise CascadeError(f"step {sid!r}: recommended must be one of its choices "
                           f"({', '.join(choices)})", path, s.line_of("recommended") or s.line)
    goto = s.get("goto") or {}
    if not isinstance(goto, dict) or any(k not in choices or not isinstance(v, str)
                                         for k, v in goto.items()):
        raise CascadeError(f"step {sid!r}: goto maps a choice to a later step's id", path,
                           s.line_of("goto") or s.line)
    return Step(sid, str(s.get("title") or sid.title()), PERSON, "all",
                str(s.get("instructions") or "").strip(), 1, (), None, None, False, question,
                tuple(choices), recommended, tuple((str(k), v) for k, v in goto.items()))
