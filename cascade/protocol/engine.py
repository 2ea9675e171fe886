"""Where a step protocol's discussion stands, derived from its ledger alone, and what comes
next. Pure: no model, no file writes -- the hook, ``check``, ``status``, ``plan`` and the
runner (cascade.protocol.run) all read the same ``Run``.

A turn is a block cascade wrote for a persona, stamped with its message id ``r{round}-msg-
{nnn}`` (gapless over the whole ledger, never restarting), its ``step`` and ``round``, the
ids it answers (``refs=counters:r1-msg-002``) and its choice fields (``shift=minor``,
``verdict=ACCEPT``). A new revision of the document (not one that keeps its review) starts
the protocol again at round 1; message ids go on counting. A stopped run resumes where the
file ends: the next wave is whoever has not spoken in the first unfinished step.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from cascade.ledger.model import NEXT, OUTCOME, SOURCE_REVISION, Comment, Event
from cascade.ledger.provenance import verify
from cascade.protocol import registry
from cascade.protocol.spec import Step, Steps

MSG = re.compile(r"\Ar(\d+)-msg-(\d+)\Z")
IMPASSE = "IMPASSE"


@dataclass
class Turn:
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


@dataclass
class Answer:
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


_NEXT_LINE = re.compile(r"^NEXT:[ \t]+(\S+)[ \t]*(.*)$")
_FENCE = re.compile(r"^[ \t]{0,3}(```|~~~)")


def _next_lines(body: str) -> list[tuple[str, str]]:
    """The ``NEXT:`` lines of a person's comment, outside code fences."""
    out, fenced = [], False
    for line in body.split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        m = None if fenced else _NEXT_LINE.match(line.strip())
        if m:
            out.append((m.group(1).strip(".,;:").lower(), m.group(2).strip()))
    return out


@dataclass
class Request:
    """One turn to ask for: who, in which step and round, and what it is shown."""

    alias: str
    role: str
    step: Step
    round: int
    tier: str
    shown: list[Turn]  # the turns its visibility lets it see, in ledger order
    target: Turn | None  # the turn it must answer (a step with ``target:``)
    summary: str  # the earlier rounds, in at most rounds.carry characters


@dataclass
class Run:
    steps: Steps
    members: list[str]  # the participants' aliases, in order
    fixed: dict[str, str]  # role id -> persona alias
    round: int = 1
    turns: list[Turn] = field(default_factory=list)  # of the current revision's run
    messages: int = 0  # message ids used in the whole ledger
    step: Step | None = None  # the first unfinished step of the round
    waiting: list[str] = field(default_factory=list)  # who has not spoken in that step
    verdicts: dict[str, str] = field(default_factory=dict)  # member -> ACCEPT/REJECT, last round
    outcome: str | None = None  # READY | IMPASSE, derived from the turns
    recorded: str | None = None  # the OUTCOME event recorded since the revision, if any
    new_round: bool = False  # the last round ended without consensus: this round has no turn
    answers: list[Answer] = field(default_factory=list)
    chosen: dict[tuple[int, str], Answer] = field(default_factory=dict)  # (round, step) -> answer

    @property
    def deciding(self) -> bool:
        """The run waits for a person to answer a decision point."""
        return self.step is not None and self.step.decision

    def speakers(self, step: Step) -> list[str]:
        if step.decision:
            return ["person"]
        role = self.steps.role(step.role)
        return [self.fixed[role.id]] if role.fixed else list(self.members)

    def of(self, round_: int, step_id: str) -> list[Turn]:
        return [t for t in self.turns if t.round == round_ and t.step == step_id]

    def next_msg(self) -> str:
        return f"r{self.round}-msg-{self.messages + 1:03d}"


def _refs(value: str) -> list[tuple[str, str]]:
    out = []
    for part in value.split(","):
        kind, _, msg = part.partition(":")
        if msg and MSG.match(msg):
            out.append((kind, msg))
    return out


def members_of(steps: Steps, participants) -> tuple[list[str], dict[str, str]]:
    """The deliberating members (the participants, less any fixed role's persona) and the
    fixed roles' personas."""
    fixed = {r.id: r.persona for r in steps.fixed_roles}
    taken = set(fixed.values())
    return [a for a in participants if a not in taken], fixed  # type: ignore[misc]


def derive(ledger, personas, steps: Steps, members: list[str], fixed: dict[str, str],
           carried: set[int] = frozenset(), reviewed: set[str] | None = None) -> Run:  # type: ignore[assignment]
    """The run of a parsed ledger under a step protocol. ``carried``: the lines of revision
    events that keep the review (cascade.ledger.state); ``reviewed``: the revisions whose
    turns count (None: any) -- a turn for another text of the document is not this run's."""
    run = Run(steps, members, fixed)
    for entry in ledger.entries:
        if isinstance(entry, Event):
            if entry.kind == SOURCE_REVISION and entry.line not in carried:
                run.turns, run.recorded, run.answers = [], None, []  # a new text: start again
            elif entry.kind == NEXT:
                words = entry.value.split()
                if words:
                    try:
                        round_ = int(entry.fields.get("round", "0"))
                    except ValueError:
                        round_ = 0
                    run.answers.append(Answer(words[0].lower(), "", "cascade --auto",
                                              entry.line, entry.fields.get("auto") == "true",
                                              entry.fields.get("step"), round_))
            elif entry.kind == OUTCOME:
                words = entry.value.split()
                run.recorded = words[0].upper() if words else None
            continue
        assert isinstance(entry, Comment)
        if entry.origin is None and personas.of_author(entry.author) is None:
            for choice, text in _next_lines(entry.body):  # a person answers a decision point
                run.answers.append(Answer(choice, text, entry.author, entry.line))
            continue
        msg = entry.provenance.get("msg", "")
        m = MSG.match(msg)
        if not m or entry.origin != "ai" or verify(entry) is not None:
            continue
        persona = personas.of_author(entry.author)
        if persona is None or persona.name != entry.author:
            continue
        run.messages = max(run.messages, int(m.group(2)))
        try:
            round_ = int(entry.provenance.get("round", "0"))
        except ValueError:
            continue
        revision = entry.provenance.get("revision")
        if reviewed is not None and revision not in reviewed:
            continue
        fields = {k: v for k, v in entry.provenance.items()
                  if k not in ("msg", "round", "step", "refs", "sig", "model", "cost", "cut",
                               "prompt_tokens", "completion_tokens", "revision", "seen")}
        run.turns.append(Turn(persona.alias, persona.name, entry.provenance.get("step", ""),
                              round_, msg, int(m.group(2)), entry.body.strip(), fields,
                              _refs(entry.provenance.get("refs", "")), entry.line, revision,
                              entry.provenance.get("seen")))
    _progress(run)
    return run


def _progress(run: Run) -> None:
    """The round, the first unfinished step and who it waits for; the outcome once a round's
    last step is done."""
    steps = run.steps
    round_ = 1
    while True:
        run.round = round_
        order = steps.round_steps
        index = 0
        while index < len(order):
            step = order[index]
            if step.decision:
                answer = _answer(run, round_, order, index)
                if answer is None:
                    run.step, run.waiting = step, ["person"]
                    run.new_round = False
                    return
                run.chosen[(round_, step.id)] = answer
                target = dict(step.goto).get(answer.choice)
                index = next(i for i, s in enumerate(order) if s.id == target) if target else index + 1
                continue
            spoken = {t.alias for t in run.of(round_, step.id)}
            waiting = [a for a in run.speakers(step) if a not in spoken]
            if waiting:
                run.step, run.waiting = step, waiting
                run.new_round = round_ > 1 and not any(t.round == round_ for t in run.turns)
                return
            index += 1
        confirm = next((s for s in steps.steps if s.confirm), None)
        # A confirmation counts only from a turn that saw the whole document (fail closed).
        verdicts = ({t.alias: t.fields.get("verdict", "REJECT") if t.seen in (None, "all")
                     else "PARTIAL" for t in run.of(round_, confirm.id)} if confirm else {})
        run.verdicts = verdicts
        if registry.EXIT_RULES[steps.rounds.exit](verdicts, run.members) and round_ >= steps.rounds.min:
            run.outcome, run.step, run.waiting = "READY", None, []
            return
        if round_ >= steps.rounds.max:
            last = steps.step(steps.rounds.on_impasse) if steps.rounds.on_impasse else None
            if last is not None:
                spoken = {t.alias for t in run.of(round_, last.id)}
                waiting = [a for a in run.speakers(last) if a not in spoken]
                if waiting:  # the recommendation comes before the impasse is the outcome
                    run.step, run.waiting = last, waiting
                    return
            run.outcome, run.step, run.waiting = IMPASSE, None, []
            return
        round_ += 1


def _answer(run: Run, round_: int, order, index: int) -> Answer | None:
    """The answer to the decision point ``order[index]`` of ``round_``: the NEXT event that
    names it, else the first unused person's NEXT line, with one of its choices, written
    after the point was reached (after the round's earlier steps' turns)."""
    step = order[index]
    for a in run.answers:
        if not a.used and a.step == step.id and a.round == round_:
            a.used = True
            return a
    earlier = {s.id for s in order[:index]}
    reached = max([t.line for t in run.turns if t.round == round_ and t.step in earlier]
                  + [a.line for (r, _), a in run.chosen.items() if r == round_]
                  + [t.line for t in run.turns if t.round < round_], default=0)
    for a in run.answers:
        if not a.used and a.step is None and a.line > reached and a.choice in step.choices:
            a.used = True
            return a
    return None


def _visible(run: Run, step: Step, alias: str) -> list[Turn]:
    this = [t for t in run.turns if t.round == run.round]
    if step.visibility == "blind":
        return []
    if step.visibility == "sequential":
        return [t for t in this if t.step == step.id]
    if step.visibility == "synthesis":
        synth = [t for t in this if run.steps.role(_step(run, t.step).role).fixed]
        return synth[-1:]
    return [t for t in this if t.step != step.id or t.alias != alias]


def _step(run: Run, step_id: str) -> Step:
    return run.steps.step(step_id) or run.steps.steps[0]


def summary(run: Run, round_: int) -> str:
    """The earlier rounds, in at most ``rounds.carry`` characters: each round's positions
    (first sentence), the synthesis's consensus statement and who rejected it, and why."""
    if round_ <= 1:
        return ""
    parts = []
    for r in range(1, round_):
        turns = [t for t in run.turns if t.round == r]
        lines = [f"Round {r}:"]
        first = run.steps.round_steps[0].id
        for t in turns:
            if t.step == first:
                lines.append(f"- {t.name}: {_sentence(t.body)}")
        fixed = [t for t in turns if run.steps.role(_step(run, t.step).role).fixed]
        if fixed:
            lines.append(f"- Synthesis: {_sentence(_consensus(fixed[-1].body))}")
        for t in turns:
            if t.fields.get("verdict") == "REJECT":
                lines.append(f"- {t.name} rejected it: {_sentence(t.body)}")
        parts.append("\n".join(lines))
    text = "\n".join(parts)
    limit = run.steps.rounds.carry
    if len(text) > limit:  # the latest rounds matter most: keep the end
        text = "..." + text[-(limit - 3):]
    return text


def _sentence(text: str, limit: int = 200) -> str:
    one = " ".join(text.split())
    m = re.search(r"(?<=[.!?])\s", one)
    if m and m.start() < limit:
        return one[:m.start()]
    return one[:limit - 3] + "..." if len(one) > limit else one


def _consensus(body: str) -> str:
    m = re.search(r"consensus statement\W*\n+(.+)", body, re.I | re.S)
    return m.group(1) if m else body


def plan(run: Run) -> list[Request]:
    """The next wave: every speaker of the first unfinished step that has not spoken (one at
    a time for a ``sequential`` step). Nothing once the outcome is known."""
    step = run.step
    if step is None or run.outcome is not None or step.decision:
        return []  # a decision point is a person's: the runner asks, or waits
    role = run.steps.role(step.role)
    waiting = run.waiting[:1] if step.visibility == "sequential" else list(run.waiting)
    text = summary(run, run.round)
    out = []
    for alias in waiting:
        target = None
        if step.target is not None:
            first = run.steps.round_steps[0].id
            target = registry.TARGETS[step.target](alias, run.of(run.round, first))
        out.append(Request(alias, role.id, step, run.round, role.tier,
                           _visible(run, step, alias), target, text))
    return out


def question(run: Run) -> str:
    """A decision point's question in one line, with how to answer it."""
    step = run.step
    assert step is not None
    return (f"{step.question} (round {run.round}; answer in the ledger with a line NEXT: "
            f"{'|'.join(step.choices)}; recommended: {step.recommended})")


def calls_per_round(steps: Steps, members: int) -> int:
    """Turns in one round: each step's speakers."""
    return sum(1 if steps.role(s.role).fixed else members for s in steps.round_steps
               if not s.decision)


def next_wave(d) -> list:
    """Who speaks next in the discussion ``d``, whatever its protocol: a step protocol's
    requests (``plan``), or what a protocol of phases' planner returns (``registry.PLANNERS``:
    ``respond``, whoever has new input). Empty: nobody."""
    if d.protocol.steps is not None:
        return plan(d.state.run)
    return registry.PLANNERS[d.protocol.planner](d)


def due(d) -> bool:
    """Whether running ``d`` now would do anything: ask someone, or -- for a step protocol --
    answer a decision point, begin a round or record the outcome it reached."""
    if d.protocol.steps is None:
        return bool(next_wave(d))
    run = d.state.run
    if run.outcome is not None:
        return d.status == "OPEN" and run.recorded != run.outcome
    return True
