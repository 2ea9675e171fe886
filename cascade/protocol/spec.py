"""The records of a protocol, declared once: its roles, steps, rounds, outcome, modes,
strategies (or flows) and tiers (the options a discussion picks among them:
cascade.protocol.options). They are read from the protocol's YAML by cascade.protocol.specfile (the
file's format is described there); a protocol that names a registered ``planner``
(``respond``: ``review``, ``phased``) is steps too, each step a phase entered in order.
"""
from __future__ import annotations

from typing import Any

import msgspec.structs
from msgspec import Struct

from cascade.protocol import registry
from cascade.protocol.behaviours import Ref
from cascade.protocol.fields import Field

VISIBILITIES = registry.VISIBILITIES  # registered (cascade.protocol.visibility)
TIERS = ("fast", "strong")
# what the engine reads of a turn, each from the field its step names (``reads:``): the
# turn's position (the record), a synthesis's departure from the proposal (``diverged``)
# and a recommendation; a referee's minority view; a facilitator's proposal and the
# conflicts it lists; a participant's confidence, concerns and challenge (escalations)
READS = ("position", "diverged", "recommendation", "minority", "next_action", "conflicts",
         "resolved", "escalation_reason", "confidence", "concerns", "challenge", "direction",
         "addressed", "consensus", "output")
MEMBER_SOURCES = ("participants", "panel")  # a rule's participants, or a generated panel
PERSON = "person"  # the built-in role of a decision point: a person answers, in the ledger
# files a protocol may ask for beside the ledger (x.<name>.md, the graph as .json)
ARTIFACTS = ("argument-graph", "synthesis", "synthesis-json", "open-questions",
             "position-evolution", "progress", "summary", "adr-draft")
APPENDS = ("reply", "round")  # when the ledger is written: after each reply, or each round
PHASE_AT = ("first", "middle", "last")  # a scheduled phase: the rounds it covers


class Role(Struct, frozen=True):
    id: str
    title: str
    persona: str | None  # a fixed role's persona alias; None: the discussion's participants
    tier: str  # fast | strong
    source: str = "participants"  # the members' role: the rule's participants, or a panel
    group: str = ""  # a fixed role's group (council's d and p): what ``group`` visibility scopes
    weighs: tuple[str, ...] = ()  # the roles whose answers it judges (a referee's advisors):
    # meant to be independent of it, so ``plan``, ``explain`` and the hook say when they share
    # its model family

    @property
    def fixed(self) -> bool:
        return self.persona is not None


class Step(Struct, frozen=True):
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
    does: tuple[tuple[str, str], ...] = ()  # a decision: choice -> what it does, said when asked
    min_refs: int = 0  # references the reply must cite (a note says when it cites fewer)
    when: str | None = None  # a registered condition (not_last, escalated): else skipped
    fallback: str = ""  # the comment an empty or unusable reply gets ({topic}: the title)
    fallback_fields: tuple[tuple[str, Any], ...] = ()  # and the fields it gives (a text, or
    # a tuple of texts: a list's items)
    roles: tuple[str, ...] = ()  # every role that speaks in it (several fixed roles: one wave)
    sees: tuple[str, ...] = ()  # the steps whose turns it is shown (empty: as its visibility)
    range: tuple[int, int] | None = None  # the reply's word range ([low, high] words)
    reads: tuple[tuple[str, str], ...] = ()  # what the engine reads (READS) -> the field
    advance: str | None = None  # a phase's registered trigger that moves it on (TRIGGERS)
    shows: tuple[Ref, ...] = ()  # what else its prompt shows (cascade.protocol.context)
    fills: tuple[tuple[str, str], ...] = ()  # a decision: choice given no text -> the list
    # field of the round whose first item is its text (a deep-dive: the most contested point)
    speakers: Ref | None = None  # registered (SPEAKERS): which members speak; None: all
    part: tuple[str, ...] = ()  # of its roles, the group's that speak here (groups: in_turn)

    @property
    def decision(self) -> bool:
        return self.role == PERSON

    @property
    def speaking(self) -> tuple[str, ...]:
        """The roles that speak in this step (its role, or the several it names; of a step
        split by group, its group's)."""
        return self.part or self.roles or (self.role,)


class Rounds(Struct, frozen=True):
    min: int
    max: int
    exit: Ref  # the exit rule, with its parameters
    carry: int
    on_impasse: str | None = None  # a step run once when the last round ends without consensus
    per_phase: int = 10  # a strategy's phase: at most this many rounds, then the next phase
    per_conflict: int = 3  # a conflict open this many rounds escalates
    append: str = "reply"  # reply: each reply written as it comes; round: a round at once


class Phase(Struct, frozen=True):
    """A strategy's phase: its goal, said in every prompt of its rounds, and its minimum."""

    id: str
    title: str
    goal: str
    min_rounds: int = 1
    at: str | None = None  # first, middle or last: the rounds it covers (a scheduled flow)
    visibility: str | None = None  # overrides the members' step's in this phase
    words: tuple[int, int] | None = None  # the members' word range in this phase

class Strategy(Struct, frozen=True):
    name: str
    title: str
    phases: tuple[Phase, ...]
    participation: str = "parallel"  # or sequential: each sees the earlier answers
    outcome: Ref | None = None  # overrides the protocol's (consent, thresholds)
    fields: tuple = ()  # Field records added to the members' steps
    sides: tuple[str, ...] = ()  # assigned to the members in turn (debate: pro, con)
    rounds: tuple[int, int] | None = None  # a flow's (min, default) rounds
    kind: str = "strategy"  # or flow: which option names it (--strategy, --flow)
    keywords: tuple[str, ...] = ()  # topic words that pick it when no option names one
    assigned: tuple[tuple[str, str], ...] = ()  # member alias -> side, as a person gave them
    groups: str = "together"  # or in_turn: a group's steps all run before the next group's

    def side(self, index: int, alias: str | None = None) -> str:
        """The side of the member ``alias`` at ``index`` of the members: the one a person
        assigned (discuss --pro/--con), else the sides in turn."""
        given = dict(self.assigned).get(alias or "")
        return given or self.sides[index % len(self.sides)]


class Count(Struct, frozen=True):
    min: int
    max: int
    default: int
    personas: tuple[str, ...] = ()  # the panel a standalone discussion starts with, if any


class Mode(Struct, frozen=True):
    """A protocol's mode: how many members, which fixed roles speak, how many rounds."""

    name: str
    experts: Count | None  # None: the protocol's participants; max 0: no members speak
    roles: tuple[str, ...]  # the fixed roles present
    rounds: tuple[int, int]  # min, max
    stand_in: tuple[tuple[str, str], ...] = ()  # role -> the present role that speaks for it
    seed_calls: tuple[int, int] | None = None  # the calls a round makes as the seed counts them
    seed_why: str = ""  # why the seed's count and the engine's differ


class Shape(Struct, frozen=True):
    """How a protocol runs, as everything outside the engine asks it: one question each.
    A step protocol's is the default; a planner declares its own (its registered traits,
    cascade.protocol.registry.SHAPE_TRAITS)."""

    one_wave: bool = False  # a run asks one wave of whoever is due, then stops
    by_name: bool = False  # a person may ask personas by name (cascade turn @alias)
    own_rounds: bool = True  # it counts rounds of its own (else its steps are phases)
    any_panel: bool = False  # any number of participants, the rule's (no count, no lenses)
    standing_ballot: bool = False  # the verdict is each voter's latest vote: no closing one

    @classmethod
    def of(cls, traits: frozenset[str]) -> Shape:
        """The shape a planner's ``traits`` declare."""
        return cls("one_wave" in traits, "by_name" in traits, "phases" not in traits,
                   "any_panel" in traits, "standing_ballot" in traits)


class Steps(Struct, frozen=True):
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
    shape: Shape = Shape()  # how it runs (a planner's: its traits)
    pause: tuple[Step, ...] = ()  # run when a person pauses, before the run stops
    resume: tuple[Step, ...] = ()  # run first in the round after a pause (its reads: direction
    # is the round's direction)

    @property
    def phased(self) -> bool:
        """Its steps are phases, entered in order; its planner says who speaks (the engine's
        question: everything else asks its ``shape``)."""
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

    def tier_of(self, role: Role) -> str:
        """The tier a role asks on: the discussion's tier's, else the role's own."""
        strong = self.strong_roles()
        return role.tier if strong is None else ("strong" if role.id in strong else "fast")

    def for_tier(self, name: str | None) -> Steps:
        known = dict(self.tiers)
        return msgspec.structs.replace(self, tier=name if name in known else self.default_tier)

    def role(self, role_id: str) -> Role:
        return next(r for r in self.roles if r.id == role_id)

    def step(self, step_id: str) -> Step | None:
        return next((s for s in self.all_steps if s.id == step_id), None)

    def get_strategy(self, name: str | None) -> Strategy | None:
        return next((x for x in self.strategies if x.name == name), None)

    def for_strategy(self, name: str | None) -> Steps:
        """These steps as strategy ``name`` runs them (the default for None or an unknown
        name): the members' steps ask for its fields too, in sequence when it says so; its
        outcome rule replaces the protocol's (consent needs no closing vote)."""
        strategy = self.get_strategy(name) or self.get_strategy(self.default_strategy)
        if strategy is None:
            return self
        member = self.member_role.id

        def adapt(step: Step) -> Step:
            if step.role != member or step.confirm:
                return step
            visibility = ("sequential" if strategy.participation == "sequential"
                          and step.visibility in ("blind", "question") else step.visibility)
            return msgspec.structs.replace(step, fields=step.fields + strategy.fields,
                                       visibility=visibility)

        outcome = strategy.outcome or self.outcome
        # an outcome rule of the strategy's own that counts no closing vote: none is asked
        drop = strategy.outcome is not None and not registry.OUTCOMES.has(outcome, "closing_vote")
        after = tuple(s for s in self.after if not (drop and s.confirm))
        rounds = self.rounds
        if strategy.rounds is not None:  # a flow's own round count (the protocol's cap)
            rounds = msgspec.structs.replace(rounds, min=strategy.rounds[0],
                                         max=min(strategy.rounds[1], rounds.max))
        steps = tuple(adapt(s) for s in self.steps)
        if strategy.groups == "in_turn":
            steps = self._in_turn(steps)
        return msgspec.structs.replace(self, steps=steps, after=after, outcome=outcome,
                                   strategy=strategy, rounds=rounds)

    def _in_turn(self, steps: tuple[Step, ...]) -> tuple[Step, ...]:
        """``steps`` with each run of steps that several groups speak together split by
        group, one group's part of every step of the run before the next group's (seed 004's
        sequential D/P: D-freethinker, D-arbiter, then P-freethinker, P-arbiter). A part keeps
        its step's id and roles; it waits only for its group's (``part``)."""
        group = {r.id: r.group for r in self.roles}
        out: list[Step] = []
        block: list[Step] = []

        def flush() -> None:
            order = list(dict.fromkeys(group[r] for s in block for r in s.roles))
            for g in order:
                out.extend(msgspec.structs.replace(s, part=tuple(r for r in s.roles
                                                             if group[r] == g))
                           for s in block if any(group[r] == g for r in s.roles))
            block.clear()

        for s in steps:
            if len(s.roles) > 1 and all(group.get(r) for r in s.roles):
                block.append(s)
            else:
                flush()
                out.append(s)
        flush()
        return tuple(out)

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
                roles.append(msgspec.structs.replace(r, persona=other.persona))
            else:
                dropped.add(r.id)

        def keep(steps: tuple[Step, ...]) -> tuple[Step, ...]:
            out = []
            for s in steps:
                left = tuple(r for r in s.speaking if r not in dropped)
                if not left:
                    continue
                out.append(s if left == s.speaking else msgspec.structs.replace(
                    s, role=left[0], roles=left if s.roles else ()))
            return tuple(out)

        low, high = mode.rounds
        return msgspec.structs.replace(
            self, roles=tuple(roles), steps=keep(self.steps), setup=keep(self.setup),
            after=keep(self.after), pause=keep(self.pause), resume=keep(self.resume),
            participants=mode.experts or self.participants,
            rounds=msgspec.structs.replace(self.rounds, min=low, max=high), mode=mode.name)

    @property
    def round_steps(self) -> tuple[Step, ...]:
        """The steps of every round (the impasse step aside)."""
        return tuple(s for s in self.steps if s.id != self.rounds.on_impasse)

    @property
    def fixed_roles(self) -> tuple[Role, ...]:
        return tuple(r for r in self.roles if r.fixed)

    @property
    def all_steps(self) -> tuple[Step, ...]:
        return self.setup + self.steps + self.after + self.pause + self.resume
