"""What each persona was shown, read from the requests the fake endpoint recorded, and what
it should have been shown, derived from the visibility definitions (PROTOCOLS.md,
cascade/protocol/spec.py) applied to the turns the ledger holds. Shared by
tests/test_visibility.py and the protocol tests.

A prompt shows a turn as a block titled ``<<<material ID: r1-msg-003 by AI-Architect
(challenge, ...)>>>`` (cascade/run/step_prompt.py ``_label``); the position a step answers
(``target:``) as ``<<<material ID: r1-msg-002 by AI-Security>>>``; the earlier rounds in
short as the block ``earlier rounds`` (``Round N:`` per round). ``visible(text)`` reads those.

To see leaks that carry no label, ``Marking`` wraps a scripted endpoint so that every reply's
comment ends with its own mark (``[[mark AI-X | Step | 2]]``): the marks a prompt holds
outside its summary and target blocks are the texts it really carried.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from scripted import ASK, STEP

BLOCK = re.compile(r"<<<material (\w+): ([^\n]*)>>>\n(.*?)\n<<<end \1>>>", re.S)
SHOWN = re.compile(r"\A(r\d+-msg-\d+) by \S+ \(")  # a shown turn: its step in parentheses
TARGET = re.compile(r"\A(r\d+-msg-\d+) by \S+\Z")  # the position a step answers
ROUND = re.compile(r"^> (?:\.\.\.)?Round (\d+):", re.M)
MARK = re.compile(r"\[\[mark [^\]]+\]\]")


@dataclass(frozen=True)
class Seen:
    """What one prompt showed: the turns by message id (in order, as labelled), the target
    and the marks its block holds, the rounds of the earlier-rounds summary (None: no
    summary block), and the marks of the texts it carried outside the summary and target."""

    shown: tuple[str, ...]
    target: str | None
    summary: frozenset[int] | None
    marks: frozenset[str]
    target_marks: frozenset[str] = frozenset()

    @property
    def ids(self) -> frozenset[str]:
        return frozenset(self.shown)


def visible(text: str) -> Seen:
    """The message ids a prompt shows (by their blocks' labels), its target, the rounds its
    summary covers and the marks outside the summary and target blocks."""
    shown: list[str] = []
    target, summary, target_marks = None, None, frozenset()
    rest = text
    for m in BLOCK.finditer(text):
        what, body = m.group(2), m.group(3)
        if SHOWN.match(what):
            shown.append(SHOWN.match(what).group(1))
        elif TARGET.match(what):
            assert target is None, "two targets in one prompt"
            target = TARGET.match(what).group(1)
            target_marks = frozenset(MARK.findall(body))
            rest = rest.replace(m.group(0), "")
        elif what == "earlier rounds":
            summary = frozenset(int(r) for r in ROUND.findall(body))
            rest = rest.replace(m.group(0), "")
    return Seen(tuple(shown), target, summary, frozenset(MARK.findall(rest)), target_marks)


def mark(name: str, step: str, round_: int) -> str:
    return f"[[mark {name} | {step} | {round_}]]"


class Marking:
    """Wraps a scripted endpoint (tests/scripted.py and the like): each JSON reply's comment
    gets its mark. Other replies (a fault, prose) pass unchanged."""

    def __init__(self, fake, inner) -> None:
        self.inner = inner
        fake.default(self)

    def __call__(self, request):
        reply = self.inner(request)
        if not isinstance(reply, str):
            return reply
        try:
            data = json.loads(reply)
        except ValueError:
            return reply
        if not isinstance(data, dict) or not isinstance(data.get("comment"), str):
            return reply
        name, step, round_ = asked(request.text)
        data["comment"] += "\n\n" + mark(name, step, round_)
        return json.dumps(data)


def asked(text: str) -> tuple[str, str, int]:
    """Whom a request asks, for which step (its title) and round (0: before round 1)."""
    m = STEP.search(text)
    return ASK.search(text).group(1), m.group(1).strip(), int(m.group(2) or 0)


# --- the ledger's turns -------------------------------------------------------------------

@dataclass(frozen=True)
class T:
    msg: str
    number: int
    name: str
    step: str  # the step's id
    round: int
    fields: dict = field(hash=False, compare=False)
    mark: str | None = None


def turns_of(path: Path, root: Path) -> list[T]:
    from cascade import Discussion

    d = Discussion.load(path, root=root)
    out = []
    for c in d.comments:
        msg = c.provenance.get("msg")
        if c.origin != "ai" or not msg:
            continue
        found = MARK.findall(c.body)
        out.append(T(msg, int(msg.rsplit("-", 1)[1]), c.author, c.provenance["step"],
                     int(c.provenance["round"]), dict(c.provenance),
                     found[-1] if found else None))
    return out


# --- the definitions ----------------------------------------------------------------------

@dataclass(frozen=True)
class View:
    """A step's visibility as the protocol's data gives it, for the oracle below.

    ``kind``: blind, all, history, synthesis, key_points, question, previous, prior, thread,
    group; ``sequential`` adds the earlier speakers of the step in this round to ``kind``'s
    view. ``sees``: only turns of these steps. ``summary``: whether the earlier rounds'
    summary is given."""

    kind: str
    summary: bool = True
    sequential: bool = False
    sees: tuple[str, ...] = ()


@dataclass(frozen=True)
class Step:
    id: str
    views: dict  # round -> View; key 0: every round
    after: bool = False  # run once when the rounds end: its summary covers every round
    setup: bool = False  # before round 1: nothing is shown
    target: str | None = None  # the step whose turn of this round by another it answers

    def view(self, round_: int) -> View:
        return self.views.get(round_, self.views.get(0))


def step(id_: str, kind: str, *, after: bool = False, setup: bool = False,
         target: str | None = None, **kw) -> Step:
    return Step(id_, {0: View(kind, **kw)}, after, setup, target)


@dataclass
class Protocol:
    """One protocol's (mode's, strategy's, flow's) steps by title, and the steps that
    write its synthesis and its question (what ``synthesis`` and ``question`` show)."""

    steps: dict[str, Step]
    synthesis: tuple[str, ...] = ()  # the step ids whose turn is "the last synthesis"
    question: str | None = None  # the step whose turn is the round's question
    groups: dict[str, str] = field(default_factory=dict)  # persona -> group
    packet: str = "bridge"  # a group's packet field


def expected(p: Protocol, who: str, title: str, round_: int, prior: list[T]) -> tuple[
        frozenset[str], frozenset[str]]:
    """The message ids a request should show, and of those the ones shown only as a bridge
    packet (their text does not cross), by the definitions:

    - blind: nothing of any turn (the topic, the earlier rounds' summary);
    - all: this round's turns so far, less the speaker's own in this step;
    - history: every turn so far, less the speaker's own in this step;
    - synthesis: the last synthesis only;
    - question: this round's question and the last round's synthesis;
    - previous: the other speakers' turns of the last round;
    - key_points: this round's turns of the earlier steps (the synthesis last);
    - prior: every turn of the last round, the speaker's own too;
    - thread: every turn of the earlier rounds;
    - group: its group's turns of this round and the last, less its own in this step and
      round, and the other groups' bridge packets of the last round;
    - sequential: also the earlier speakers of this step, this round;
    - sees: only the turns of the steps named."""
    s = p.steps[title]
    if s.setup:
        return frozenset(), frozenset()
    v = s.view(round_)
    own = lambda t: t.name == who and t.step == s.id  # noqa: E731
    packets: set[str] = set()
    if v.kind == "blind":
        out = []
    elif v.kind == "all":
        out = [t for t in prior if t.round == round_ and not own(t)]
    elif v.kind == "history":
        out = [t for t in prior if not own(t)]
    elif v.kind == "synthesis":
        out = [t for t in prior if t.step in p.synthesis][-1:]
    elif v.kind == "question":
        out = [t for t in prior if t.round == round_ - 1 and t.step in p.synthesis][-1:] + [
            t for t in prior if t.round == round_ and t.step == p.question]
    elif v.kind == "previous":
        out = [t for t in prior if t.round == round_ - 1 and t.name != who]
    elif v.kind == "key_points":
        out = [t for t in prior if t.round == round_ and t.step != s.id]
    elif v.kind == "prior":
        out = [t for t in prior if t.round == round_ - 1]
    elif v.kind == "thread":
        out = [t for t in prior if t.round < round_]
    elif v.kind == "group":
        mine = p.groups.get(who)
        out = []
        for t in prior:
            if t.round not in (round_ - 1, round_) or (own(t) and t.round == round_):
                continue
            if mine and p.groups.get(t.name) == mine:
                out.append(t)
            elif mine and t.round == round_ - 1 and t.fields.get(p.packet) == "passed":
                out.append(t)
                packets.add(t.msg)
    else:
        raise AssertionError(f"no definition for visibility {v.kind!r}")
    if v.sequential:
        out += [t for t in prior if t.round == round_ and t.step == s.id and t not in out]
    if v.sees:
        out = [t for t in out if t.step in v.sees]
    return frozenset(t.msg for t in out), frozenset(packets)


def summary_of(p: Protocol, title: str, round_: int) -> frozenset[int] | None:
    """The rounds the summary of a request should cover: the earlier ones (every one, for a
    step after the rounds), if its step is given a summary; None: no summary block."""
    s = p.steps[title]
    if s.setup or not s.view(round_).summary:
        return None
    return frozenset(range(1, round_ + (1 if s.after else 0))) or None


# --- a discussion's runs, recorded, and the check -----------------------------------------

class Runs:
    """The runs of one discussion (``discuss``, then ``run``s), each with the requests the
    fake endpoint received during it and the message ids the ledger held after it."""

    def __init__(self, fake, repo: Path, ledger: str) -> None:
        self.fake, self.repo, self.ledger = fake, repo, ledger
        self.requests: list[list] = []
        self.written: list[frozenset[str]] = []

    def __call__(self, cli, *args: str):
        before = len(self.fake.chat_requests)
        result = cli(*args)
        self.requests.append(self.fake.chat_requests[before:])
        path = self.repo / self.ledger
        self.written.append(frozenset(t.msg for t in turns_of(path, self.repo))
                            if path.exists() else frozenset())
        return result

    def turns(self) -> list[T]:
        return turns_of(self.repo / self.ledger, self.repo)


@dataclass
class Checked:
    cases: list[tuple[str, str, int, int]]  # (name, step title, round, run index)
    resumed: set[tuple[str, int]]  # (step title, round) whose wave spans two runs

    def rounds(self, title: str) -> set[int]:
        return {r for _, s, r, _ in self.cases if s == title}


def check(runs: Runs, p: Protocol, retried: set[tuple[str, str, int]] = frozenset()) -> Checked:
    """Asserts, for every request of every run, that the ids it showed, the texts it carried,
    its summary's rounds and its target are what the definitions give; that nobody was asked
    twice for one step and round (but the ``retried``: a request that failed); and that every
    turn of the ledger answers a request, or a cached one. Returns what was checked."""
    turns = runs.turns()
    by_key = {(t.name, t.step, t.round): t for t in turns}
    assert len(by_key) == len(turns), "two turns for one persona, step and round"
    by_mark = {t.mark: t.msg for t in turns if t.mark}
    ids = {t.msg: t for t in turns}
    numbers = [t.number for t in turns]
    assert numbers == list(range(numbers[0], numbers[0] + len(numbers))), "ids not gapless"
    setup = {s.id for s in p.steps.values() if s.setup}  # a setup turn is no round's
    errors, cases = [], []
    keys: list[tuple[str, str, int]] = []
    waves: dict[tuple[str, int], set[int]] = {}
    for index, requests in enumerate(runs.requests):
        before = runs.written[index - 1] if index else frozenset()
        for request in requests:
            who, title, round_ = asked(request.text)
            s = p.steps.get(title)
            if s is None:
                errors.append(f"{who} {title} {round_}: a step the table lacks")
                continue
            if s.setup:  # asked "before round 1", stamped round 1
                round_ = 1
            keys.append((who, title, round_))
            mine = by_key.get((who, s.id, round_))
            if mine is None:
                errors.append(f"{who} {title} {round_}: asked, never written")
                continue
            v = s.view(round_)
            if v.sequential:  # one at a time: everything written before its own turn
                first = mine.number
            else:  # a wave: what was written before the wave's first turn in this run on
                first = min(t.number for t in turns if t.step == s.id and t.round == round_
                            and t.msg not in before)
            waves.setdefault((title, round_), set()).add(index)
            prior = [t for t in turns if t.number < first and t.step not in setup]
            want, packets = expected(p, who, title, round_, prior)
            seen = visible(request.text)
            where = f"run {index + 1}, {who} in {title}, round {round_}"
            if len(set(seen.shown)) != len(seen.shown):
                errors.append(f"{where}: a turn shown twice: {seen.shown}")
            if seen.ids != want:
                errors.append(f"{where}: shown {sorted(seen.ids)}, expected {sorted(want)}")
            texts = {by_mark.get(m, m) for m in seen.marks}
            if texts != set(want - packets):
                errors.append(f"{where}: texts of {sorted(texts)}, expected "
                              f"{sorted(want - packets)}")
            if seen.summary != summary_of(p, title, round_):
                errors.append(f"{where}: summary of rounds {seen.summary}, expected "
                              f"{summary_of(p, title, round_)}")
            if s.target is None and seen.target is not None:
                errors.append(f"{where}: a target, {seen.target}, where its step has none")
            if s.target is not None:
                t = ids.get(seen.target or "")
                if t is None or (t.step, t.round) != (s.target, round_) or t.name == who or \
                        t not in prior or {by_mark.get(m) for m in seen.target_marks} != {t.msg}:
                    errors.append(f"{where}: target {seen.target} is not another's "
                                  f"{s.target} of this round, written before, with its text")
            cases.append((who, title, round_, index))
    titles = {s.id: title for title, s in p.steps.items()}
    unasked = [t.msg for t in turns if (t.name, titles.get(t.step), t.round) not in keys]
    if unasked:
        errors.append(f"written, never asked: {unasked}")
    twice = {k for k in keys if keys.count(k) > 1} - set(retried)
    if twice:
        errors.append(f"asked twice: {sorted(twice)}")
    for k in retried:
        if keys.count(k) != 2:
            errors.append(f"{k}: asked {keys.count(k)} time(s), not once and once again")
    assert not errors, "\n".join(errors)
    return Checked(cases, {w for w, runs_ in waves.items() if len(runs_) > 1})
