"""What a ledger's derivation gives (cascade.protocol.derivation): the ``State`` -- its phase,
status, revision, counted votes and verdict -- and the records in it: people's decisions,
votes that do not count, events not believed, personas that did not answer."""
from __future__ import annotations

import hashlib
from typing import Any

import msgspec.structs
from msgspec import Struct, field

from cascade.ledger.consensus import ConsensusResult
from cascade.ledger.records import Comment

STATUS_OF = {"READY": "ACCEPTED", "REJECT": "REJECTED"}  # the status an outcome sets


class Decision(Struct):
    """A person's decision (``cascade decide``), and whether it is in force."""

    author: str
    by: str  # "Name <email>", the git identity that decided
    vote: str
    reason: str
    line: int
    revision: str | None
    in_force: bool = False
    note: str = ""  # why it is not in force

    def as_dict(self) -> dict[str, object]:
        return {"by": self.by, "vote": self.vote, "reason": self.reason, "line": self.line,
                "revision": self.revision, "in_force": self.in_force, "note": self.note}


class Conclusion(Struct, frozen=True):
    """What the discussion came to: the one answer status (text and --json), the record,
    ``cascade run``, the hook and the UI show. A person's decision in force is the outcome;
    what the protocol's rounds reached by its own rule (an impasse) stays in the history:
    ``impasse at round 3, then decided READY by Carol <carol@example.com> (line 120)``."""

    outcome: str | None  # READY, REJECT, CHANGES, IMPASSE; None: not concluded yet
    why: str  # the outcome explained: its rule's words, or how a person decided
    reached: str | None = None  # what the rounds reached by the protocol's rule, if they did
    round: int | None = None  # the round they reached it in
    reached_why: str = ""  # the protocol's rule's explanation of it
    decision: Decision | None = None  # the decision in force, when a person decided

    @property
    def history(self) -> str:
        """How the outcome came, in one line: what the rounds reached, then the decision."""
        said = []
        if self.reached is not None:
            word = "impasse" if self.reached == "IMPASSE" else self.reached
            said.append(f"{word} at round {self.round}")
        if (d := self.decision) is not None:
            said.append(f"decided {d.vote} by {d.by} (line {d.line})")
        return ", then ".join(said)

    @property
    def said(self) -> str:
        """The outcome in a few words: ``IMPASSE``; ``READY: impasse at round 3, then decided
        READY by ... (line 120)`` when a person decided."""
        if self.decision is not None:
            return f"{self.outcome}: {self.history}"
        return self.outcome or ""

    def as_dict(self) -> dict[str, object]:
        return {"outcome": self.outcome, "why": self.why, "reached": self.reached,
                "round": self.round, "reached_why": self.reached_why, "history": self.history,
                "decision": self.decision.as_dict() if self.decision else None}


def conclusion(decision: Decision | None, result: ConsensusResult, run=None) -> Conclusion:
    """The discussion's conclusion from the decision in force, the consensus and (a step
    protocol) its run: the decision supersedes what the rounds reached."""
    reached = run.outcome if run is not None else None
    round_ = run.round if reached is not None else None
    reached_why = run.why if reached is not None else ""
    if decision is not None:
        found = Conclusion(decision.vote, "", reached, round_, reached_why, decision)
        return msgspec.structs.replace(found, why=found.history)
    if reached is not None:
        return Conclusion(reached, reached_why, reached, round_, reached_why)
    if result.reached and result.outcome:
        return Conclusion(result.outcome, result.reason)
    return Conclusion(None, result.reason)


class Discounted(Struct):
    """A block under a persona's name whose vote does not count, and why."""

    author: str
    line: int
    reason: str
    forged: bool = False  # no valid stamp: hand-written or edited

    def as_dict(self) -> dict[str, object]:
        return msgspec.structs.asdict(self)


class Unfounded(Struct):
    """An event ``derive`` does not believe (it is ignored), and why."""

    kind: str
    line: int
    reason: str

    def as_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "line": self.line, "reason": self.reason}


class Failure(Struct):
    """A participant asked for a revision that did not answer (``FAILURE`` event)."""

    author: str
    alias: str
    line: int
    reason: str
    revision: str | None

    def as_dict(self) -> dict[str, object]:
        return {"author": self.author, "line": self.line, "reason": self.reason,
                "revision": self.revision}


class State(Struct):
    phase: str
    status: str  # OPEN, ACCEPTED, REJECTED, IMPASSE, CHANGES (a decision in force overrides)
    source_revision: str | None
    votes: dict[str, str]  # counted: each voter's latest valid vote in the current segment
    advisory: dict[str, str]  # shown, not counted (advisory panel, non-participants)
    expected: list[str]  # voting participants' names
    discounted: list[Discounted]  # persona blocks in the current segment that do not count
    forged: list[Discounted]  # every block under a persona's name without a valid stamp
    decisions: list[Decision]
    decision: Decision | None  # the one in force
    result: ConsensusResult
    current: list[Comment] = field(default_factory=list)  # comments of the current segment
    carried: set[int] = field(default_factory=set)  # lines of revision events keeping a review
    core: str | None = None  # the core the current revision's event recorded
    carried_now: bool = False  # the current revision holds an earlier one's review
    # its run, or how to derive it when first read (``run``): a protocol of phases needs none
    # for its verdict. No part of what the state is (== and repr leave it out)
    derive_run: Any = None
    unfounded: list[Unfounded] = field(default_factory=list)  # events not believed
    ignored: frozenset[int] = frozenset()  # lines of unfounded events and copied blocks
    failures: list[Failure] = field(default_factory=list)  # no answer for this revision: blocks
    claims: frozenset[int] = frozenset()  # lines whose author matters (decisions, people's votes)
    weighed: dict[str, str] = field(default_factory=dict)  # voter -> why its findings weigh it
    findings: list[Any] = field(default_factory=list)  # every finding, F1, F2..., its status
    strays: list[Any] = field(default_factory=list)  # A(Fn)/WAIVE(Fn) naming no finding
    awaited: list[str] = field(default_factory=list)  # participants not heard on the revision
    policy: Any = None  # the rule's findings policy (cascade.protocol.findings.Policy)
    # what it came to: the outcome in force and how (every surface shows this one answer)
    conclusion: Conclusion = field(default_factory=lambda: Conclusion(None, ""))

    @property
    def run(self) -> Any:
        """Its run (cascade.protocol.runstate.Run): who is due, the outcome."""
        if callable(self.derive_run):
            self.derive_run = self.derive_run()
        return self.derive_run

    def __eq__(self, other: object) -> bool:
        if type(other) is not State:
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in _SHOWN)

    def __repr__(self) -> str:
        return f"State({', '.join(f'{name}={getattr(self, name)!r}' for name in _SHOWN)})"


_SHOWN = tuple(name for name in State.__struct_fields__ if name != "derive_run")


def block_id(c: Comment) -> str:
    """A short content id for a person's block, for ``VOTE-RESET keep=``."""
    raw = f"{c.author}\n{c.vote}\n{c.body}".encode("utf-8", "surrogatepass")
    return hashlib.sha256(raw).hexdigest()[:12]
