"""Where a step protocol's discussion stands, as records: the turns cascade wrote, the
answers people gave at decision points, the requests to ask next, and the ``Run`` that holds
them, with the small records it groups the rest in (derived in cascade.protocol.engine on a
``Draft``; read by the registry's rules, the runner, the record and the artifacts)."""
from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

from msgspec import NODEFAULT, Struct, defstruct, field

from cascade.protocol.behaviours import Exit, Ruling
from cascade.protocol.options import Options
from cascade.protocol.spec import Step, Steps

MSG = re.compile(r"\Ar(\d+)-msg-(\d+)\Z")
IMPASSE = "IMPASSE"


class Turn(Struct):
    alias: str
    name: str
    step: str
    round: int
    msg: str
    number: int  # the message's number (its place in the ledger's order)
    body: str
    fields: dict[str, str]
    refs: list[tuple[str, str]]  # (kind, message id)
    line: int
    revision: str | None
    seen: str | None = None  # how much of the document the turn saw ("all", "n/m", "none")
    origin: str | None = None  # an anonymised view (``msg`` its label): the message it shows


class Answer(Struct):
    """A decision point's answer: a person's ``NEXT: <choice> [text]`` line, or the NEXT event
    --auto and a rule's ``auto: true`` write for the recommended choice."""

    choice: str
    text: str
    by: str
    line: int
    auto: bool = False
    step: str | None = None  # an event names its decision point; a person's line does not
    round: int | None = None
    used: bool = False


_NEXT_LINE = re.compile(r"^(\S*?)NEXT:[ \t]*(\S*)[ \t]*(.*)$")
_FENCE = re.compile(r"^[ \t]{0,3}(```|~~~)")


def next_lines(body: str) -> list[tuple[str, str]]:
    """The ``NEXT:`` lines of a person's comment, outside code fences. A line that names no
    choice, or whose ``NEXT:`` is glued to a word (``startNEXT:``), is kept whole as a
    choice no decision point has: it answers nothing, and the question says it was not
    understood (cascade.protocol.about)."""
    out, fenced = [], False
    for line in body.split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        m = None if fenced else _NEXT_LINE.match(line.strip())
        if m and (m.group(1) or not m.group(2) or "NEXT:" in m.group(2)):
            out.append((line.strip(), ""))
        elif m:
            out.append((m.group(2).strip(".,;:").lower(), m.group(3).strip()))
    return out


AUTO = "cascade --auto"  # who answers a decision point with its recommended choice


def given_by(answer: Answer | None) -> str:
    """Who gave a direction, as a model is told it: a person by name, --auto taking the
    recommended choice, or the protocol's own rule (``None``)."""
    if answer is None:
        return "cascade, by the protocol's rule (no person decided)"
    if answer.auto or answer.by == AUTO:
        return f"{AUTO}, taking the recommended choice (no person decided)"
    return f"{answer.by} (a person)"


class Request(Struct):
    """One turn to ask for: who, in which step and round, and what it is shown."""

    alias: str
    role: str
    step: Step
    round: int
    tier: str
    shown: list[Turn]  # the turns its visibility lets it see, in ledger order
    target: Turn | None  # the turn it must answer (a step with ``target:``)
    summary: str  # the earlier rounds, in at most rounds.carry characters
    direction: str = ""  # what a person asked for (modify the panel; the next round's angle)
    words: tuple[int, int] | None = None  # the reply's word range (a flow's phase's)
    why: str = ""  # why a planner asks it ("new input", "mentioned by Rob", "asked")
    callout: str = ""  # what a person asks of this turn (``cascade turn``'s callout)


class Basis(Struct, frozen=True):
    """What a run is derived on, besides the ledger and the steps."""

    personas: Any  # the registry (``of_author``, ``get``)
    members: tuple[str, ...]  # the deliberating members
    fixed: Mapping[str, str]  # role id -> the fixed role's persona
    carried: frozenset[int] = frozenset()  # lines of revision events that keep the review
    reviewed: frozenset[str] | None = None  # the revisions whose turns count (None: any)
    options: Options = Options()  # the discussion's options, as its header records them
    consensus: Any = None  # the thresholds an outcome rule that counts votes uses
    skip: frozenset[int] = frozenset()  # entries not believed: unfounded events, copies
    phase: str | None = None  # a protocol of phases: the phase its believed events put it in
    decided: bool = False  # a person's decision is in force: a planner asks nobody
    policy: Any = None  # the rule's findings policy (cascade.protocol.findings.Policy)
    verified: frozenset[int] | None = None  # persona blocks the walk verified (None: verify)
    ballot: Any = None  # a protocol of phases: the ballot its outcome rule counts
    document: bool = True  # it has a document (governed, or --source); False: a topic's


class Reads:
    """What a run gives its readers beyond its fields: the methods of ``Run`` and of the
    ``Draft`` the engine derives it on (cascade.protocol.engine)."""

    __slots__ = ()

    @property
    def phase(self):
        """The current round's strategy phase (cascade.protocol.spec.Phase), or None."""
        strategy = self.steps.strategy
        if strategy is None:
            return None
        return strategy.phases[min(self.steering.phase_of.get(self.round, 0),
                                   len(strategy.phases) - 1)]

    @property
    def deciding(self) -> bool:
        """The run waits for a person to answer a decision point."""
        return self.step is not None and self.step.decision

    def speakers(self, step: Step) -> list[str]:
        if step.decision:
            return ["person"]
        if step.roles:  # several fixed roles, in one wave (of a step split by group, its own)
            return [self.fixed[r] for r in step.speaking]
        role = self.steps.role(step.role)
        return [self.fixed[role.id]] if role.fixed else list(self.members)

    def role_of(self, step: Step, alias: str):
        """The role ``alias`` speaks in ``step`` (cascade.protocol.spec.Role)."""
        for role_id in step.roles:
            if self.fixed.get(role_id) == alias:
                return self.steps.role(role_id)
        return self.steps.role(step.role)

    def step_of(self, step_id: str) -> Step | None:
        """The step ``step_id`` names: of the steps run, else of the protocol's before a mode
        specialized them."""
        base = self.terms.base
        return self.steps.step(step_id) or (base.step(step_id) if base else None)

    def read(self, turn: Turn, what: str) -> str:
        """What ``turn`` gives for ``what`` (spec.READS): the field its step names for it
        (``reads:``); "" when the step names none or the turn left it empty."""
        step = self.step_of(turn.step)
        name = dict(step.reads).get(what) if step is not None else None
        return turn.fields.get(name, "") if name else ""

    def name_of(self, alias: str) -> str:
        return self.terms.names.get(alias, alias)

    def decision_step(self) -> Step | None:
        """The round's decision point (a step a person answers), if its steps have one."""
        return next((s for s in self.steps.round_steps if s.decision), None)

    def recommendation(self, round_: int) -> str | None:
        """The round's recommendation field (the last turn of the round that gave one)."""
        said = (self.read(t, "recommendation") for t in reversed(self.turns) if t.round == round_)
        return next((rec for rec in said if rec), None)

    @property
    def why(self) -> str:
        """The outcome's explanation (the outcome rule's), or ""."""
        return self.verdict.why if self.verdict is not None else ""

    def of(self, round_: int, step_id: str) -> list[Turn]:
        return [t for t in self.turns if t.round == round_ and t.step == step_id]


class Terms(Struct, frozen=True):
    """Under what terms the members take part."""

    base: Steps | None = None  # the protocol's steps before a mode specialized them
    mode: str | None = None
    names: dict[str, str] = field(default_factory=dict)  # alias -> persona name
    consensus: Any = None  # the thresholds an outcome rule may count by (VotingConfig)
    cap: int | None = None  # the discussion's own round cap (discuss --rounds N)


class Progress(Struct, frozen=True):
    """Where the rounds are, besides the round, step and who it waits for (on ``Run``)."""

    new_round: bool = False  # a round (after the first, or of a phase) has begun: no turn yet
    after: bool = False  # the rounds are over: the after steps run
    asked_why: dict[str, str] = field(default_factory=dict)  # alias -> why a planner asks it


class Pauses(Struct, frozen=True):
    """A person's pauses."""

    pausing: int | None = None  # a pause answered in this round: the resume context is due
    resumed: set[int] = field(default_factory=set)  # rounds whose pause wrote its resume context
    resume_texts: dict[int, str] = field(default_factory=dict)  # round -> that context


class Decisions(Struct, frozen=True):
    """What people answered at the rounds' decision points."""

    answers: list[Answer] = field(default_factory=list)
    chosen: dict[tuple[int, str], Answer] = field(default_factory=dict)  # (round, step) -> answer
    because: str | None = None  # why the open decision point is asked (an escalation's cause)


class Steering(Struct, frozen=True):
    """How the rounds were steered."""

    direction: str = ""  # the person's direction for the current step (setup) or round
    direction_by: str = ""  # who gave the setup step's direction
    directions: dict[int, str] = field(default_factory=dict)  # round -> direction
    givers: dict[int, str] = field(default_factory=dict)  # round -> who gave its direction
    phase_of: dict[int, int] = field(default_factory=lambda: {1: 0})  # round -> strategy phase
    quiet_until: int = 0  # escalations are not asked up to this round (continue N)
    probed: bool = False  # the probing round after a too-easy consensus was given
    conclusion: str = ""  # how the rounds were concluded: a person's decision, the cap's note


class Setup(Struct, frozen=True):
    """A generated panel's setup (cascade.protocol.setup)."""

    turns: list[Turn] = field(default_factory=list)  # kept across revisions, as its answers
    answers: list[Answer] = field(default_factory=list)
    done: bool = True
    panel: Any = None  # the accepted panel (cascade.protocol.panel.Panel)
    notes: list[str] = field(default_factory=list)


class Closing(Struct, frozen=True):
    """What the rounds' close gave besides the outcome."""

    verdicts: dict[str, str] = field(default_factory=dict)  # member -> ACCEPT/REJECT, last round
    recorded: str | None = None  # the OUTCOME event recorded since the revision, if any
    exit: Exit | None = None  # the exit rule's answer after the last round run


class Run(Reads, Struct, frozen=True):
    """A protocol's run, derived from a ledger by the engine (cascade.protocol.engine): who
    takes part, the turns of the current revision, where the rounds are and the outcome --
    read by most of its readers -- and, as small records, the rest. Immutable: a reader cannot
    change what the engine derived (the engine builds a ``Draft`` and freezes it)."""

    steps: Steps
    members: list[str]  # the participants' aliases, in order
    fixed: dict[str, str]  # role id -> persona alias
    round: int = 1
    step: Step | None = None  # the first unfinished step of the round
    waiting: list[str] = field(default_factory=list)  # who has not spoken in that step
    turns: list[Turn] = field(default_factory=list)  # of the current revision's run
    messages: int = 0  # message ids used in the whole ledger
    outcome: str | None = None  # READY | IMPASSE, derived from the turns
    verdict: Ruling | None = None  # the outcome rule's answer (the outcome, explained)
    terms: Terms = field(default_factory=Terms)
    progress: Progress = field(default_factory=Progress)
    pauses: Pauses = field(default_factory=Pauses)
    decisions: Decisions = field(default_factory=Decisions)
    steering: Steering = field(default_factory=Steering)
    setup: Setup = field(default_factory=Setup)
    closing: Closing = field(default_factory=Closing)

    @classmethod
    def from_draft(cls, draft: Any) -> Run:
        """The run a draft derived, its groups frozen."""
        return _frozen(cls, draft)


@functools.lru_cache(maxsize=None)
def _layout(cls: Any) -> tuple[tuple[str, Any, Any], ...]:
    """``cls``'s fields in order, read once: each with its default as the record declares it
    (``NODEFAULT``: none; a ``field(default_factory=...)``: the factory object it became) and
    the record it holds as a group (the factory of its default), or None."""
    names, given = cls.__struct_fields__, cls.__struct_defaults__
    out = []
    for name, default in zip(names, (NODEFAULT,) * (len(names) - len(given)) + given):
        factory = getattr(default, "factory", None)
        group = factory if isinstance(factory, type) and issubclass(factory, Struct) else None
        out.append((name, default, group))
    return tuple(out)


def _frozen(cls: Any, draft: Any) -> Any:
    return cls(**{name: _frozen(group, getattr(draft, name)) if group is not None
                  else getattr(draft, name) for name, _, group in _layout(cls)})


def _mutable(cls: Any, bases: tuple = ()) -> Any:
    """``cls``'s fields (declared once, on the record) as a mutable record; a group's
    default is its own mutable draft."""
    out = [(name, Any, default if group is None else field(default_factory=_DRAFTS[group]))
           for name, default, group in _layout(cls)]
    return defstruct(cls.__name__ + "Draft", out, bases=(*bases, Struct), module=__name__)


_DRAFTS = {group: _mutable(group) for _, _, group in _layout(Run) if group is not None}

# A run while the engine derives it: Run's fields and its groups' (declared once, above),
# mutable; the registered rules are asked with it (they read it, never write it).
Draft = _mutable(Run, (Reads,))
Draft.__name__ = Draft.__qualname__ = "Draft"


def draft(steps: Steps, members: list[str], fixed: dict[str, str], **values: Any) -> Any:
    """A draft of a run, each of ``values`` set on the record that declares it (``round`` on
    the run, ``consensus`` on its terms, ``verdicts`` on its closing)."""
    run = Draft(steps, members, fixed)
    for name, value in values.items():
        holders = [run] if name in Draft.__struct_fields__ else [
            getattr(run, group_name) for group_name, _, group in _layout(Run)
            if group is not None and name in group.__struct_fields__]
        if len(holders) != 1:  # a name two groups declare is no one field
            raise TypeError(f"{name!r} names no one field of a run")
        setattr(holders[0], name, value)
    return run


def refs_of(value: str) -> list[tuple[str, str]]:
    parts = (part.partition(":") for part in value.split(","))
    return [(kind, msg) for kind, _, msg in parts if msg and MSG.match(msg)]
