"""The records of a step protocol, declared once: its roles, steps, rounds and outcome, read
from the protocol's YAML (cascade.protocol.loader calls ``parse_steps``). A protocol that
names a registered ``planner`` (``respond``: ``review``, ``phased``, whoever is concerned
speaks) is steps too, each step a phase entered in order -- by its registered ``advance``
trigger or by a person -- read by ``_phased_steps``: one role from the rule's participants,
each step asks a vote (``confirm: true``: its votes count), the outcome counts thresholds.

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

A protocol whose panel is generated for its discussion (swarm) takes its members ``from:
panel``, runs ``setup`` steps once before round 1 (the panel, then a decision point that
confirms it; a choice listed in the decision's ``redo`` runs the setup again), its ``after``
steps once when the rounds end (a synthesis, a closing vote), and may declare ``modes``:

```yaml
modes:
  default: standard
  lightweight: {experts: 2, roles: [moderator, contrarian], rounds: {min: 1, max: 2},
                stand_in: {historian: moderator}}   # who speaks for a role the mode lacks
```
A step whose role a mode lacks (and no stand-in covers) is not run in that mode; a mode with
``experts: 0`` runs none of the members' steps (council's D/P mode: its fixed roles speak).
A step may name several fixed roles (``role: [d-freethinker, p-freethinker]``): they speak in
one wave, each on its own role's tier. A fixed role may belong to a ``group``; ``visibility:
group`` shows a speaker its group's turns of this round and the last, and of the other
groups only the bridge packets of the last round (cascade.protocol.packet). ``sees: [step
ids]`` narrows what a step is shown to those steps' turns (no summary either), and ``words:
[low, high]`` gives a reply's word range (said in the prompt, and its max tokens).
Field kinds besides choices, text and refs: ``refs:<edge type>`` (a refs field under another
name), ``{number: [low, high], fallback: x}``, ``list`` (of short texts), ``{scores: [names],
range: [1, 5], flag_below: 3}`` (the last name is the overall score; below the flag, the turn
is flagged), ``panel`` (a generated panel, cascade.protocol.panel), ``{list: [fewest, most]}``,
``{shortlist: [criteria], decisions: [advance, hold, drop], range: [1, 5]}`` (scored items,
each with a decision, the cautious one last) and ``{packet: [keys]}`` (a bridge packet).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from cascade.config.yamlio import LineDict, check_keys, items_with_lines
from cascade.errors import CascadeError
from cascade.protocol import registry
from cascade.protocol.behaviours import Ref
from cascade.protocol.fields import REF_TYPES, Field, parse_field  # noqa: F401  (re-exported)

VISIBILITIES = registry.VISIBILITIES  # registered (cascade.protocol.visibility)
TIERS = ("fast", "strong")
_ROLE_KEYS = {"id", "from", "persona", "tier", "title", "group"}
_STEP_KEYS = {"id", "title", "role", "visibility", "instructions", "words", "fields", "target",
              "table", "confirm", "question", "choices", "recommended", "goto", "redo",
              "min_refs", "when", "fallback", "sees", "reads"}
# what the engine reads of a turn, each from the field its step names (``reads:``): the
# turn's position (the record), a synthesis's departure from the proposal (``diverged``)
# and a recommendation; a referee's minority view; a facilitator's proposal and the
# conflicts it lists; a participant's confidence, concerns and challenge (escalations)
READS = ("position", "diverged", "recommendation", "minority", "next_action", "conflicts",
         "resolved", "escalation_reason", "confidence", "concerns", "challenge")
MEMBER_SOURCES = ("participants", "panel")  # a rule's participants, or a generated panel
PERSON = "person"  # the built-in role of a decision point: a person answers, in the ledger
# files a protocol may ask for beside the ledger (x.<name>.md, the graph as .json)
ARTIFACTS = ("argument-graph", "synthesis", "open-questions", "position-evolution", "progress")
_ROUNDS_KEYS = {"min", "max", "exit", "carry", "on_impasse", "per_phase", "per_conflict",
                "append"}
APPENDS = ("reply", "round")  # when the ledger is written: after each reply, or each round
_MODE_KEYS = {"experts", "roles", "rounds", "stand_in"}
_STRATEGY_KEYS = {"title", "phases", "participation", "outcome", "fields", "sides", "rounds"}
_PHASE_KEYS = {"id", "title", "goal", "min_rounds", "at", "visibility", "words"}
PHASE_AT = ("first", "middle", "last")  # a scheduled phase: the rounds it covers
_COUNT_KEYS = {"min", "max", "default", "personas"}


@dataclass(frozen=True)
class Role:
    id: str
    title: str
    persona: str | None  # a fixed role's persona alias; None: the discussion's participants
    tier: str  # fast | strong
    source: str = "participants"  # the members' role: the rule's participants, or a panel
    group: str = ""  # a fixed role's group (council's d and p): what ``group`` visibility scopes

    @property
    def fixed(self) -> bool:
        return self.persona is not None


@dataclass(frozen=True)
class Step:
    id: str
    title: str
    role: str
    visibility: str
    instructions: str
    words: int
    fields: tuple[Field, ...]
    target: Ref | None  # the registered target, with its parameters
    table: str | None
    confirm: bool
    # a decision point (role: person): the question, its choices, the one --auto takes, and
    # the step a choice jumps to (later in the round; default: the next step)
    question: str = ""
    choices: tuple[str, ...] = ()
    recommended: str | None = None
    goto: tuple[tuple[str, str], ...] = ()
    redo: tuple[tuple[str, str], ...] = ()  # a setup decision: choice -> the step run again
    min_refs: int = 0  # references the reply must cite (a note says when it cites fewer)
    when: str | None = None  # a registered condition (not_last, escalated): else skipped
    fallback: str = ""  # the comment an empty or unusable reply gets ({topic}: the title)
    roles: tuple[str, ...] = ()  # every role that speaks in it (several fixed roles: one wave)
    sees: tuple[str, ...] = ()  # the steps whose turns it is shown (empty: as its visibility)
    range: tuple[int, int] | None = None  # the reply's word range ([low, high] words)
    reads: tuple[tuple[str, str], ...] = ()  # what the engine reads (READS) -> the field
    advance: str | None = None  # a phase's registered trigger that moves it on (TRIGGERS)

    @property
    def decision(self) -> bool:
        return self.role == PERSON

    @property
    def speaking(self) -> tuple[str, ...]:
        """The roles that speak in this step (its role, or the several it names)."""
        return self.roles or (self.role,)


@dataclass(frozen=True)
class Rounds:
    min: int
    max: int
    exit: Ref  # the exit rule, with its parameters
    carry: int
    on_impasse: str | None = None  # a step run once when the last round ends without consensus
    per_phase: int = 10  # a strategy's phase: at most this many rounds, then the next phase
    per_conflict: int = 3  # a conflict open this many rounds escalates
    append: str = "reply"  # reply: each reply written as it comes; round: a round at once


@dataclass(frozen=True)
class Phase:
    """A strategy's phase: its goal, said in every prompt of its rounds, and its minimum."""

    id: str
    title: str
    goal: str
    min_rounds: int = 1
    at: str | None = None  # first, middle or last: the rounds it covers (a scheduled flow)
    visibility: str | None = None  # overrides the members' step's in this phase
    words: tuple[int, int] | None = None  # the members' word range in this phase

@dataclass(frozen=True)
class Strategy:
    name: str
    title: str
    phases: tuple[Phase, ...]
    participation: str = "parallel"  # or sequential: each sees the earlier answers
    outcome: Ref | None = None  # overrides the protocol's (consent, thresholds)
    fields: tuple = ()  # Field records added to the members' steps
    sides: tuple[str, ...] = ()  # assigned to the members in turn (debate: pro, con)
    rounds: tuple[int, int] | None = None  # a flow's (min, default) rounds
    kind: str = "strategy"  # or flow: which option names it (--strategy, --flow)


@dataclass(frozen=True)
class Count:
    min: int
    max: int
    default: int
    personas: tuple[str, ...] = ()  # the panel a standalone discussion starts with, if any


@dataclass(frozen=True)
class Mode:
    """A protocol's mode: how many members, which fixed roles speak, how many rounds."""

    name: str
    experts: Count | None  # None: the protocol's participants; max 0: no members speak
    roles: tuple[str, ...]  # the fixed roles present
    rounds: tuple[int, int]  # min, max
    stand_in: tuple[tuple[str, str], ...] = ()  # role -> the present role that speaks for it


@dataclass(frozen=True)
class Steps:
    """A step protocol's own part."""

    roles: tuple[Role, ...]
    steps: tuple[Step, ...]
    rounds: Rounds
    participants: Count
    outcome: Ref  # the outcome rule, with its parameters
    artifacts: tuple[str, ...] = ()  # written beside the ledger at the conclusion
    setup: tuple[Step, ...] = ()  # run once before round 1 (a generated panel, confirmed)
    after: tuple[Step, ...] = ()  # run once when the rounds end (a synthesis, a closing vote)
    modes: tuple[Mode, ...] = ()
    default_mode: str | None = None
    mode: str | None = None  # the mode these steps are specialized for (for_mode)
    strategies: tuple[Strategy, ...] = ()
    default_strategy: str | None = None
    strategy: Strategy | None = None  # the strategy these steps run (for_strategy)
    tiers: tuple[tuple[str, tuple[str, ...]], ...] = ()  # tier -> the roles given the strong model
    default_tier: str | None = None
    tier: str | None = None  # the tier these steps run (for_tier)
    planner: str | None = None  # a registered planner: the steps are phases, in order

    @property
    def phased(self) -> bool:
        """Its steps are phases, entered in order; its planner says who speaks."""
        return self.planner is not None

    def next_phase(self, step_id: str) -> str | None:
        """The phase after ``step_id`` (None: it is the last, or no phase)."""
        ids = [s.id for s in self.steps]
        at = ids.index(step_id) if step_id in ids else len(ids)
        return ids[at + 1] if at + 1 < len(ids) else None

    def strong_roles(self) -> tuple[str, ...] | None:
        """The roles the discussion's tier gives the strong model (None: each role's own)."""
        if not self.tiers:
            return None
        return dict(self.tiers).get(self.tier or self.default_tier or "", ())

    def for_tier(self, name: str | None) -> Steps:
        import dataclasses

        known = dict(self.tiers)
        return dataclasses.replace(self, tier=name if name in known else self.default_tier)

    def role(self, role_id: str) -> Role:
        return next(r for r in self.roles if r.id == role_id)

    def step(self, step_id: str) -> Step | None:
        return next((s for s in self.steps + self.setup + self.after if s.id == step_id), None)

    def get_strategy(self, name: str | None) -> Strategy | None:
        return next((x for x in self.strategies if x.name == name), None)

    def for_strategy(self, name: str | None) -> Steps:
        """These steps as strategy ``name`` runs them (the default for None or an unknown
        name): the members' steps ask for its fields too, in sequence when it says so; its
        outcome rule replaces the protocol's (consent needs no closing vote)."""
        import dataclasses

        strategy = self.get_strategy(name) or self.get_strategy(self.default_strategy)
        if strategy is None:
            return self
        member = self.member_role.id

        def adapt(step: Step) -> Step:
            if step.role != member or step.confirm:
                return step
            visibility = ("sequential" if strategy.participation == "sequential"
                          and step.visibility in ("blind", "question") else step.visibility)
            return dataclasses.replace(step, fields=step.fields + strategy.fields,
                                       visibility=visibility)

        outcome = strategy.outcome or self.outcome
        # an outcome rule of the strategy's own that counts no closing vote: none is asked
        drop = strategy.outcome is not None and not registry.OUTCOMES.has(outcome, "closing_vote")
        after = tuple(s for s in self.after if not (drop and s.confirm))
        rounds = self.rounds
        if strategy.rounds is not None:  # a flow's own round count (the protocol's cap)
            rounds = dataclasses.replace(rounds, min=strategy.rounds[0],
                                         max=min(strategy.rounds[1], rounds.max))
        return dataclasses.replace(self, steps=tuple(adapt(s) for s in self.steps),
                                   after=after, outcome=outcome, strategy=strategy,
                                   rounds=rounds)

    @property
    def member_role(self) -> Role:
        return next(r for r in self.roles if not r.fixed)

    @property
    def generated(self) -> bool:
        """Members come from a panel generated for the discussion (recorded in its ledger)."""
        return self.member_role.source == "panel"

    def get_mode(self, name: str | None) -> Mode | None:
        return next((m for m in self.modes if m.name == name), None)

    def for_mode(self, name: str | None) -> Steps:
        """These steps as mode ``name`` runs them (the default mode for None or an unknown
        name): its member count and round range, its fixed roles (a role it lacks is spoken
        by its stand-in, or its steps are not run)."""
        import dataclasses

        mode = self.get_mode(name) or self.get_mode(self.default_mode)
        if mode is None:
            return self
        stand_in = dict(mode.stand_in)
        roles, dropped = [], set()
        silent = mode.experts is not None and mode.experts.max == 0  # no members speak
        for r in self.roles:
            if not r.fixed:
                roles.append(r)
                if silent:
                    dropped.add(r.id)
            elif r.id in mode.roles:
                roles.append(r)
            elif r.id in stand_in:
                other = self.role(stand_in[r.id])
                roles.append(dataclasses.replace(r, persona=other.persona))
            else:
                dropped.add(r.id)

        def keep(steps: tuple[Step, ...]) -> tuple[Step, ...]:
            out = []
            for s in steps:
                left = tuple(r for r in s.speaking if r not in dropped)
                if not left:
                    continue
                out.append(s if left == s.speaking else dataclasses.replace(
                    s, role=left[0], roles=left if s.roles else ()))
            return tuple(out)

        low, high = mode.rounds
        return dataclasses.replace(
            self, roles=tuple(roles), steps=keep(self.steps), setup=keep(self.setup),
            after=keep(self.after), participants=mode.experts or self.participants,
            rounds=dataclasses.replace(self.rounds, min=low, max=high), mode=mode.name)

    @property
    def round_steps(self) -> tuple[Step, ...]:
        """The steps of every round (the impasse step aside)."""
        return tuple(s for s in self.steps if s.id != self.rounds.on_impasse)

    @property
    def fixed_roles(self) -> tuple[Role, ...]:
        return tuple(r for r in self.roles if r.fixed)

    @property
    def all_steps(self) -> tuple[Step, ...]:
        return self.setup + self.steps + self.after


OPTIONS = {"mode": "modes", "strategy": "strategies", "flow": "flows", "tier": "tiers"}


@dataclass(frozen=True)
class Options:
    """A discussion's choices among its protocol's options -- its mode, strategy (or flow)
    and tier -- and its own round cap (``--rounds N``, a rule's ``rounds:``)."""

    mode: str | None = None
    strategy: str | None = None  # a strategy or a flow
    tier: str | None = None
    rounds: int | None = None

    @classmethod
    def of_header(cls, extra: dict[str, str]) -> Options:
        """The options a ledger's header records (Mode, Strategy or Flow, Tier, Rounds)."""
        asked = (extra.get("rounds") or "").strip()
        return cls(extra.get("mode") or None,
                   extra.get("strategy") or extra.get("flow") or None,
                   extra.get("tier") or None,
                   int(asked) if asked.isdigit() and int(asked) >= 1 else None)

    @classmethod
    def of_rule(cls, rule) -> Options:
        """The options a rule (cascade.config.rules.Rule) gives its discussions."""
        return cls(rule.mode, rule.strategy or rule.flow, rule.tier, rule.rounds)


def specialize(steps: Steps, options: Options) -> Steps:
    """A protocol's steps as a discussion with ``options`` runs them -- the one place they
    are applied (discuss, run, plan, explain, the hook and check all come here): its mode
    (the default when none is given), strategy or flow, tier, and round cap: at most the
    protocol's; for a flow with its own count, the number run (within the flow's minimum
    and the protocol's maximum); otherwise fewer than the protocol's, never more."""
    top = steps.rounds.max
    steps = steps.for_mode(options.mode) if steps.modes else steps
    steps = steps.for_strategy(options.strategy) if steps.strategies else steps
    steps = steps.for_tier(options.tier) if steps.tiers else steps
    cap = options.rounds
    if cap is not None and cap >= 1:
        if steps.strategy is not None and steps.strategy.rounds is not None:
            low = steps.strategy.rounds[0]
            steps = dataclasses.replace(steps, rounds=dataclasses.replace(
                steps.rounds, max=min(max(cap, low), top), min=low))
        elif cap < steps.rounds.max:
            steps = dataclasses.replace(steps, rounds=dataclasses.replace(
                steps.rounds, max=cap, min=min(steps.rounds.min, cap)))
    return steps


def most_rounds(base: Steps, options: Options) -> int:
    """The most rounds a discussion may ask for (``--rounds N``, a rule's ``rounds:``): its
    mode's and strategy's; for a flow with its own count, the protocol's."""
    steps = specialize(base, dataclasses.replace(options, rounds=None))
    if steps.strategy is not None and steps.strategy.rounds is not None:
        return base.rounds.max
    return steps.rounds.max


def describe(ref) -> str:
    """A behaviour as the protocol names it: ``'converged' (field: estimate, within: 0.1)``."""
    params = ", ".join(f"{k}: {v}" for k, v in ref.params)
    return f"{ref.name!r}" + (f" ({params})" if params else "")


def option_names(steps: Steps | None, kind: str) -> list[str]:
    """The names a protocol's option takes (--mode, --strategy, --flow, --tier)."""
    if steps is None:
        return []
    if kind == "mode":
        return [m.name for m in steps.modes]
    if kind == "tier":
        return [name for name, _ in steps.tiers]
    return [x.name for x in steps.strategies if x.kind == kind]


def check_option(protocol: str, steps: Steps | None, kind: str, value: str | None,
                 prefix: str = "", path: Path | None = None, line: int | None = None) -> None:
    """A name given for a protocol's option must be one it has: else one line that lists
    them (or says it has none)."""
    if value is None:
        return
    names = option_names(steps, kind)
    if value not in names:
        raise CascadeError(f"{prefix}protocol {protocol!r} has no {kind} {value!r}"
                           + (f" ({OPTIONS[kind]}: {', '.join(names)})" if names else ""),
                           path, line)


def _int(value: object, path: Path, line: int | None, what: str, low: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise CascadeError(f"{what} must be a whole number of at least {low}", path, line)
    return value


def _text(value: object, path: Path, line: int | None, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise CascadeError(f"{what} must be a non-empty string", path, line)
    return value.strip()


def parse_steps(data: LineDict, path: Path) -> Steps:
    if data.get("planner") is not None:
        return _phased_steps(data, path)
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
                                                     and source not in MEMBER_SOURCES):
            raise CascadeError(f"role {rid!r}: give 'from: participants', 'from: panel' or "
                               "'persona: <alias>'", path, r.line_of("id"))
        tier = r.get("tier", "fast")
        if tier not in TIERS:
            raise CascadeError(f"role {rid!r}: tier must be one of {', '.join(TIERS)}", path,
                               r.line_of("tier"))
        group = r.get("group", "")
        if group and (persona is None or not isinstance(group, str)):
            raise CascadeError(f"role {rid!r}: group names a fixed role's group (a word)", path,
                               r.line_of("group"))
        roles.append(Role(rid, str(r.get("title") or rid),
                          _text(persona, path, r.line_of("persona"), "role 'persona'").lower()
                          if persona is not None else None, tier,
                          str(source) if source is not None else "participants", str(group)))
    if sum(1 for r in roles if not r.fixed) != 1:
        raise CascadeError("exactly one role takes the discussion's members (from: "
                           "participants, or from: panel)", path, data.line_of("roles"))
    generated = any(r.source == "panel" for r in roles)

    if not isinstance(data.get("steps"), list) or not data.get("steps"):
        raise CascadeError("protocol 'steps' must be a non-empty list", path, data.line_of("steps"))
    seen: set[str] = set()
    steps = _step_list(data, "steps", roles, path, seen, registry)
    setup = _step_list(data, "setup", roles, path, seen, registry)
    after = _step_list(data, "after", roles, path, seen, registry)
    if setup and not generated:
        raise CascadeError("'setup' runs before round 1 to generate the panel: only a protocol "
                           "whose members come 'from: panel' has one", path, data.line_of("setup"))
    if generated and not any(f.kind == "panel" for s in setup for f in s.fields):
        raise CascadeError("members 'from: panel' need a setup step with a panel field", path,
                           data.line_of("setup") or data.line_of("roles"))
    for group in (steps, setup, after):
        for step in group:
            later = [x.id for x in group[group.index(step) + 1:]]
            for choice, target in step.goto:
                if target not in later:
                    raise CascadeError(f"step {step.id!r}: goto {choice!r} must name a later "
                                       f"step ({', '.join(later) or 'none'})", path,
                                       data.line_of(_key_of(data, step.id)))
            earlier = [x.id for x in group[:group.index(step)] if not x.decision]
            for choice, target in step.redo:
                if group is not setup or target not in earlier:
                    raise CascadeError(f"step {step.id!r}: redo {choice!r} must name an "
                                       f"earlier setup step ({', '.join(earlier) or 'none'})",
                                       path, data.line_of("setup"))
    r = check_keys(data.get("rounds") or {}, path, _ROUNDS_KEYS, set(), "rounds",
                   data.line_of("rounds"))
    line = data.line_of("rounds")
    exit_rule = registry.EXITS.ref(r.get("exit", "all_accept"), path,
                                   r.line_of("exit") if "exit" in r else line, "rounds exit")
    on_impasse = r.get("on_impasse")
    if on_impasse is not None and not any(s.id == on_impasse for s in steps):
        raise CascadeError(f"rounds on_impasse names an unknown step {on_impasse!r}", path, line)
    rounds = Rounds(_int(r.get("min", 1), path, line, "rounds min"),
                    _int(r.get("max", 3), path, line, "rounds max"), exit_rule,
                    _int(r.get("carry", 1000), path, line, "rounds carry", low=0), on_impasse,
                    _int(r.get("per_phase", 10), path, line, "rounds per_phase"),
                    _int(r.get("per_conflict", 3), path, line, "rounds per_conflict"),
                    _append(r.get("append", "reply"), path, line))
    if rounds.min > rounds.max:
        raise CascadeError("rounds min is more than rounds max", path, line)
    count = _count(data.get("participants"), path, data.line_of("participants"),
                   "participants", {"min": 1, "max": 8})
    # no outcome named: the exit rule's own verdict (READY when it ends the rounds)
    outcome = registry.OUTCOMES.ref(data.get("outcome", "exit"), path,
                                    data.line_of("outcome"), "outcome")
    artifacts = data.get("artifacts") or []
    if not isinstance(artifacts, list) or any(a not in ARTIFACTS for a in artifacts):
        raise CascadeError(f"artifacts must be a list of: {', '.join(ARTIFACTS)}", path,
                           data.line_of("artifacts"))
    modes, default = _modes(data, roles, path)
    strategies, default_strategy = _strategies(data, path, registry)
    tiers, default_tier = _tiers(data, roles, path)
    return Steps(tuple(roles), tuple(steps), rounds, count, outcome, tuple(artifacts),
                 tuple(setup), tuple(after), modes, default, None, strategies, default_strategy,
                 None, tiers, default_tier)


def _strategies(data: LineDict, path: Path, registry) -> tuple[tuple[Strategy, ...], str | None]:
    """``strategies:`` (roundtable) or ``flows:`` (council): the same records, named by the
    option that picks one."""
    if "strategies" in data and "flows" in data:
        raise CascadeError("a protocol has strategies or flows, not both", path,
                           data.line_of("flows"))
    key, kind = ("flows", "flow") if "flows" in data else ("strategies", "strategy")
    raw = data.get(key)
    if raw is None:
        return (), None
    line = data.line_of(key)
    if not isinstance(raw, dict) or not raw:
        raise CascadeError(f"{key} must map a {kind}'s name to its phases", path, line)
    out: list[Strategy] = []
    for name, spec in raw.items():
        if name == "default":
            continue
        st = check_keys(spec, path, _STRATEGY_KEYS, {"phases"}, f"strategy {name!r}", line)
        sline = st.line_of("phases") or line
        raw_phases = st.get("phases")
        if not isinstance(raw_phases, list) or not raw_phases:
            raise CascadeError(f"strategy {name!r}: phases must be a non-empty list", path, sline)
        phases: list[Phase] = []
        for item, iline in items_with_lines(raw_phases, sline):
            ph = check_keys(item, path, _PHASE_KEYS, {"id"}, f"strategy {name!r} phase", iline)
            pid = _text(ph["id"], path, ph.line_of("id"), "phase 'id'")
            if any(p.id == pid for p in phases):
                raise CascadeError(f"strategy {name!r}: duplicate phase {pid!r}", path,
                                   ph.line_of("id"))
            at, seen_vis, words = ph.get("at"), ph.get("visibility"), ph.get("words")
            if at is not None and at not in PHASE_AT:
                raise CascadeError(f"strategy {name!r}: phase {pid!r}: at is one of "
                                   f"{', '.join(PHASE_AT)}", path, ph.line_of("at"))
            if seen_vis is not None and seen_vis not in VISIBILITIES:
                raise CascadeError(f"strategy {name!r}: phase {pid!r}: visibility must be one "
                                   f"of {', '.join(VISIBILITIES)}", path,
                                   ph.line_of("visibility"))
            if words is not None and (not isinstance(words, list) or len(words) != 2 or not all(
                    isinstance(w, int) and not isinstance(w, bool) and w > 0 for w in words)
                    or words[0] > words[1]):
                raise CascadeError(f"strategy {name!r}: phase {pid!r}: words takes [low, high]",
                                   path, ph.line_of("words"))
            phases.append(Phase(pid, str(ph.get("title") or pid.replace("-", " ").title()),
                                " ".join(str(ph.get("goal") or "").split()),
                                _int(ph.get("min_rounds", 1), path, ph.line_of("min_rounds"),
                                     "min_rounds"), at, seen_vis,
                                (words[0], words[1]) if words else None))
        participation = st.get("participation", "parallel")
        if participation not in ("parallel", "sequential"):
            raise CascadeError(f"strategy {name!r}: participation is parallel or sequential",
                               path, st.line_of("participation") or sline)
        outcome = st.get("outcome")
        if outcome is not None:
            outcome = registry.OUTCOMES.ref(outcome, path, st.line_of("outcome") or sline,
                                            f"strategy {name!r}: outcome")
        raw_fields = st.get("fields") or {}
        if not isinstance(raw_fields, dict):
            raise CascadeError(f"strategy {name!r}: fields map a name to its kind", path,
                               st.line_of("fields") or sline)
        fields = tuple(parse_field(str(k), v, f"strategy {name}", path, st.line_of("fields"))
                       for k, v in raw_fields.items())
        sides = st.get("sides") or []
        if not isinstance(sides, list) or not all(isinstance(x, str) and x for x in sides):
            raise CascadeError(f"strategy {name!r}: sides must be a list of names", path,
                               st.line_of("sides") or sline)
        counted = st.get("rounds")
        if counted is not None and (not isinstance(counted, list) or len(counted) != 2 or not all(
                isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in counted)
                or counted[0] > counted[1]):
            raise CascadeError(f"strategy {name!r}: rounds takes [min, default]", path,
                               st.line_of("rounds") or sline)
        out.append(Strategy(str(name), str(st.get("title") or str(name).title()), tuple(phases),
                            participation, outcome, fields, tuple(sides),
                            (counted[0], counted[1]) if counted else None, kind))
    default = raw.get("default") or (out[0].name if out else None)
    if not any(x.name == default for x in out):
        raise CascadeError(f"{key} default {default!r} is not one of the {key}", path, line)
    return tuple(out), default


def _tiers(data: LineDict, roles: list[Role], path: Path):
    """``tiers: {default: medium, light: [], medium: [referee], heavy: [referee, advisor]}``:
    per tier, the roles given the strong model."""
    raw = data.get("tiers")
    if raw is None:
        return (), None
    line = data.line_of("tiers")
    if not isinstance(raw, dict) or not raw:
        raise CascadeError("tiers must map a tier's name to the roles it makes strong", path,
                           line)
    ids = [r.id for r in roles]
    out = []
    for name, value in raw.items():
        if name == "default":
            continue
        if not isinstance(value, list) or any(v not in ids for v in value):
            raise CascadeError(f"tier {name!r}: a list of the protocol's roles "
                               f"({', '.join(ids)})", path, line)
        out.append((str(name), tuple(value)))
    default = raw.get("default") or (out[0][0] if out else None)
    if default not in dict(out):
        raise CascadeError(f"tiers default {default!r} is not one of the tiers", path, line)
    return tuple(out), default


def _append(value: object, path: Path, line: int | None) -> str:
    if value not in APPENDS:
        raise CascadeError(f"rounds append must be one of {', '.join(APPENDS)}", path, line)
    return str(value)


def _key_of(data: LineDict, step_id: str) -> str:
    for key in ("steps", "setup", "after"):
        if any(isinstance(i, dict) and i.get("id") == step_id for i in data.get(key) or []):
            return key
    return "steps"


def _count(raw: object, path: Path, line: int | None, what: str,
           defaults: dict[str, int]) -> Count:
    if isinstance(raw, int) and not isinstance(raw, bool):
        n = _int(raw, path, line, what)
        return Count(n, n, n)
    c = check_keys(raw or {}, path, _COUNT_KEYS, set(), what, line)
    count = Count(_int(c.get("min", defaults["min"]), path, line, f"{what} min"),
                  _int(c.get("max", defaults["max"]), path, line, f"{what} max"),
                  _int(c.get("default", c.get("min", max(defaults["min"], 2))), path, line,
                       f"{what} default"))
    if not count.min <= count.default <= count.max:
        raise CascadeError(f"{what}: min <= default <= max must hold", path, line)
    personas = c.get("personas") or []
    if not isinstance(personas, list) or not all(isinstance(p, str) and p for p in personas) \
            or not count.min <= len(personas) <= count.max and personas:
        raise CascadeError(f"{what}: personas is a list of {count.min} to {count.max} aliases",
                           path, line)
    if personas:
        import dataclasses

        count = dataclasses.replace(count, personas=tuple(p.lower() for p in personas))
    return count


def _modes(data: LineDict, roles: list[Role], path: Path) -> tuple[tuple[Mode, ...], str | None]:
    raw = data.get("modes")
    if raw is None:
        return (), None
    line = data.line_of("modes")
    if not isinstance(raw, dict) or not raw:
        raise CascadeError("modes must map a mode's name to its experts, roles and rounds",
                           path, line)
    fixed = [r.id for r in roles if r.fixed]
    modes: list[Mode] = []
    default = raw.get("default")
    for name, spec in raw.items():
        if name == "default":
            continue
        m = check_keys(spec, path, _MODE_KEYS, {"roles", "rounds"}, f"mode {name!r}", line)
        mline = m.line_of("roles") or line
        present = m.get("roles")
        if not isinstance(present, list) or any(p not in fixed for p in present):
            raise CascadeError(f"mode {name!r}: roles must be a list of the protocol's fixed "
                               f"roles ({', '.join(fixed)})", path, mline)
        rr = check_keys(m.get("rounds"), path, {"min", "max"}, {"max"}, f"mode {name!r} rounds",
                        m.line_of("rounds"))
        low = _int(rr.get("min", 1), path, m.line_of("rounds"), f"mode {name!r} rounds min")
        high = _int(rr["max"], path, m.line_of("rounds"), f"mode {name!r} rounds max")
        if low > high:
            raise CascadeError(f"mode {name!r}: rounds min is more than max", path,
                               m.line_of("rounds"))
        stand_in = m.get("stand_in") or {}
        if not isinstance(stand_in, dict) or any(
                k not in fixed or k in present or v not in present for k, v in stand_in.items()):
            raise CascadeError(f"mode {name!r}: stand_in maps a role the mode lacks to one it "
                               "has", path, m.line_of("stand_in") or mline)
        experts = m.get("experts")
        if experts == 0 and not isinstance(experts, bool):  # the members do not speak
            counted: Count | None = Count(0, 0, 0)
        elif experts is None:  # the protocol's participants
            counted = None
        else:
            counted = _count(experts, path, m.line_of("experts") or mline,
                             f"mode {name!r} experts", {"min": 1, "max": 8})
        modes.append(Mode(str(name), counted,
                          tuple(present), (low, high),
                          tuple((str(k), str(v)) for k, v in stand_in.items())))
    if default is None:
        default = modes[0].name if modes else None
    if not any(m.name == default for m in modes):
        raise CascadeError(f"modes default {default!r} is not one of the modes", path, line)
    return tuple(modes), default


def _step_list(data: LineDict, key: str, roles: list[Role], path: Path, seen: set[str],
               registry) -> list[Step]:
    raw_steps = data.get(key)
    if raw_steps is None:
        return []
    if not isinstance(raw_steps, list):
        raise CascadeError(f"protocol {key!r} must be a list of steps", path, data.line_of(key))
    steps: list[Step] = []
    for item, line in items_with_lines(raw_steps, data.line_of(key)):
        s = check_keys(item, path, _STEP_KEYS, {"id", "role"}, "step", line)
        sid = _text(s["id"], path, s.line_of("id"), "step 'id'")
        if sid in seen:
            raise CascadeError(f"duplicate step id {sid!r}", path, s.line_of("id"))
        seen.add(sid)
        when = s.get("when")
        if when is not None and when not in registry.CONDITIONS:
            raise CascadeError(f"step {sid!r}: when must be one of "
                               f"{', '.join(sorted(registry.CONDITIONS))}", path,
                               s.line_of("when"))
        role = s["role"]
        if role == PERSON:
            steps.append(_decision(s, sid, path))
            continue
        several = tuple(role) if isinstance(role, list) else ()
        for one in several or (role,):
            if not isinstance(one, str) or not any(r.id == one for r in roles):
                raise CascadeError(f"step {sid!r}: unknown role {one!r} (roles: "
                                   f"{', '.join(r.id for r in roles)})", path, s.line_of("role"))
        if isinstance(role, list) and (len(set(several)) != len(several) or len(several) < 2 or
                                       not all(next(r for r in roles if r.id == x).fixed
                                               for x in several)):
            raise CascadeError(f"step {sid!r}: a list of roles names two or more fixed roles, "
                               "each once (they speak in one wave)", path, s.line_of("role"))
        role = several[0] if several else role
        sees = s.get("sees") or []
        if not isinstance(sees, list) or not all(isinstance(x, str) for x in sees):
            raise CascadeError(f"step {sid!r}: sees is a list of step ids", path,
                               s.line_of("sees"))
        words = s.get("words", 150)
        span = None
        if isinstance(words, list):
            if (len(words) != 2 or not all(isinstance(w, int) and not isinstance(w, bool)
                                           and w > 0 for w in words) or words[0] > words[1]):
                raise CascadeError(f"step {sid!r}: words takes a number or [low, high]", path,
                                   s.line_of("words"))
            span, words = (words[0], words[1]), words[1]
        visibility = s.get("visibility", "all")
        if visibility not in VISIBILITIES:
            raise CascadeError(f"step {sid!r}: visibility must be one of "
                               f"{', '.join(VISIBILITIES)}", path, s.line_of("visibility"))
        target = s.get("target")
        if target is not None:
            target = registry.TARGETS.ref(target, path, s.line_of("target"),
                                          f"step {sid!r}: target")
        raw_fields = s.get("fields") or {}
        if not isinstance(raw_fields, dict):
            raise CascadeError(f"step {sid!r}: fields must be a mapping of name to [choices] "
                               "or text", path, s.line_of("fields"))
        fields = [parse_field(str(name), spec, sid, path, s.line_of("fields"))
                  for name, spec in raw_fields.items()]
        if sum(1 for f in fields if f.kind == "panel") > 1:
            raise CascadeError(f"step {sid!r}: one panel field at most", path, s.line_of("fields"))
        confirm = s.get("confirm", False)
        if not isinstance(confirm, bool):
            raise CascadeError(f"step {sid!r}: confirm must be true or false", path,
                               s.line_of("confirm"))
        min_refs = _int(s.get("min_refs", 0), path, s.line_of("min_refs"), "min_refs", low=0)
        if min_refs and not any(f.refs for f in fields):
            raise CascadeError(f"step {sid!r}: min_refs needs a refs field", path,
                               s.line_of("min_refs"))
        steps.append(Step(sid, str(s.get("title") or sid.title()), role, visibility,
                          str(s.get("instructions") or "").strip(),
                          _int(words, path, s.line_of("words"), "words"),
                          tuple(fields), target,
                          str(s["table"]) if s.get("table") else None, confirm,
                          min_refs=min_refs, when=when,
                          fallback=str(s.get("fallback") or "").strip(), roles=several,
                          sees=tuple(sees), range=span, reads=_reads(s, sid, fields, path)))
    known = {x for x in seen}
    for step in steps:
        unknown = [x for x in step.sees if x not in known]
        if unknown:
            raise CascadeError(f"step {step.id!r}: sees names an unknown step {unknown[0]!r}",
                               path, data.line_of(key))
    return steps


def _reads(s: LineDict, sid: str, fields: list[Field], path: Path) -> tuple[tuple[str, str], ...]:
    """A step's ``reads``: which of its fields the engine reads as what."""
    reads = s.get("reads") or {}
    line = s.line_of("reads")
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
    redo = s.get("redo") or {}
    if not isinstance(redo, dict) or any(k not in choices or not isinstance(v, str)
                                         for k, v in redo.items()):
        raise CascadeError(f"step {sid!r}: redo maps a choice to an earlier setup step's id",
                           path, s.line_of("redo") or s.line)
    return Step(sid, str(s.get("title") or sid.title()), PERSON, "all",
                str(s.get("instructions") or "").strip(), 1, (), None, None, False, question,
                tuple(choices), recommended, tuple((str(k), v) for k, v in goto.items()),
                tuple((str(k), v) for k, v in redo.items()), when=s.get("when"))


# A protocol whose steps are phases (a registered planner): what its planner and phases
# honour, nothing more (a key accepted and then ignored would be a silent promise).
PHASED_KEYS = {"name", "title", "description", "planner", "roles", "rounds", "outcome", "steps"}
_PHASED_ROLE_KEYS = {"id", "title", "from"}
_PHASED_STEP_KEYS = {"id", "title", "role", "instructions", "fields", "confirm", "advance"}
PHASED_VOTE = ("READY", "CHANGES", "REJECT")  # what a phase's reply votes
_ONE_ROLE = "a protocol whose planner is respond has one role: {id: participant, from: participants}"


def _phased_steps(data: LineDict, path: Path) -> Steps:
    """Steps that are phases, in order: ``confirm: true`` -- its votes count (else they are
    advisory); ``advance``: the registered trigger that moves it on by itself (none: a person
    advances). Each participant's latest vote counts, by the outcome rule ``thresholds``."""
    planner = data["planner"]
    if planner not in registry.PLANNERS:
        raise CascadeError(f"unknown planner {planner!r} (known: "
                           f"{', '.join(sorted(registry.PLANNERS))})", path,
                           data.line_of("planner"))
    role = _phased_role(data, path)
    r = check_keys(data.get("rounds") or {}, path, {"max"}, set(), "rounds",
                   data.line_of("rounds"))
    top = r.get("max", 3)
    if not isinstance(top, int) or isinstance(top, bool) or top < 1:
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
    steps: list[Step] = []
    for item, line in items_with_lines(raw_steps, data.line_of("steps")):
        step = _phase_step(check_keys(item, path, _PHASED_STEP_KEYS, {"id", "role"}, "step",
                                      line), role.id, path)
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
                 planner=str(planner))


def _phase_step(s: LineDict, role: str, path: Path) -> Step:
    """One step of a phased protocol: it asks a vote; the phase after it: its place."""
    sid = s["id"]
    if not isinstance(sid, str) or not sid.strip():
        raise CascadeError("step 'id' must be a string", path, s.line_of("id"))
    if s["role"] != role:
        raise CascadeError(f"step {sid!r}: unknown role {s['role']!r} (roles: {role})", path,
                           s.line_of("role"))
    fields = s.get("fields")
    if not isinstance(fields, dict) or list(fields) != ["vote"] or \
            fields["vote"] != list(PHASED_VOTE):
        raise CascadeError(f"step {sid!r}: a respond protocol's step asks a vote: fields: "
                           f"{{vote: [{', '.join(PHASED_VOTE)}]}}", path,
                           s.line_of("fields") or s.line_of("id"))
    confirm = s.get("confirm", False)
    if not isinstance(confirm, bool):
        raise CascadeError(f"step {sid!r}: confirm must be true or false", path,
                           s.line_of("confirm"))
    trigger = s.get("advance")
    if trigger is not None and trigger not in registry.TRIGGERS:
        raise CascadeError(f"step {sid!r}: unknown advance {trigger!r} (allowed: "
                           f"{', '.join(registry.TRIGGERS)}, or none: a person advances)", path,
                           s.line_of("advance"))
    vote = parse_field("vote", list(PHASED_VOTE), sid, path, s.line_of("fields"))
    return Step(sid, str(s.get("title") or sid), role, "all",
                str(s.get("instructions") or "").strip(), 150, (vote,), None, None, confirm,
                advance=trigger)


def _phased_role(data: LineDict, path: Path) -> Role:
    """The one role of a phased protocol: the rule's participants."""
    raw = data.get("roles")
    line = data.line_of("roles") if "roles" in data else data.line_of("steps")
    if not isinstance(raw, list) or len(raw) != 1:
        raise CascadeError(_ONE_ROLE, path, line)
    role = check_keys(raw[0], path, _PHASED_ROLE_KEYS, {"id", "from"}, "role", line)
    if not isinstance(role["id"], str) or role["from"] != "participants":
        raise CascadeError(_ONE_ROLE, path, role.line_of("from") or line)
    return Role(role["id"], str(role.get("title") or role["id"]), None, "fast")
