"""What a run of a protocol came to (``Result``), and that said in one line."""
from __future__ import annotations

from msgspec import Struct, field

from cascade.turns.asking import Outcome


class Result(Struct):
    outcome: str | None = None  # READY | IMPASSE | ...; None: not concluded (stopped, waiting)
    round: int = 1
    outcomes: list[Outcome] = field(default_factory=list)
    stopped: str = ""  # why the run stopped before an outcome
    appended: int = 0
    tables: list[str] = field(default_factory=list)  # the tables written, as printed
    record: str | None = None  # the record file written at the conclusion (its path)
    waiting: str | None = None  # the open decision point's question, when the run waits
    notes: list[str] = field(default_factory=list)
    paused: int | None = None  # the round after which a person paused the discussion
    artifacts: list[str] = field(default_factory=list)  # the files written beside the ledger
    why: str = ""  # the outcome's explanation (its outcome rule's)
    advanced: str | None = None  # the phase a wave's advance trigger moved the discussion to
    decided: bool = False  # the outcome is a person's decision in force (``why``: how it came)

    @property
    def failures(self) -> list[Outcome]:
        return [o for o in self.outcomes if not o.ok]


def outcome_text(result: Result, topic: bool = False) -> str:
    """What a run came to, in one line: the outcome as its rule explains it; for a topic (no
    document to change), as the panel's answer."""
    if result.decided:
        return f"{result.outcome}: {result.why}"
    if result.outcome is not None and topic:
        return (f"answered -- {result.why or result.outcome}"
                + ("" if result.outcome == "READY" else " -- a person decides (cascade decide)"))
    if result.outcome is not None:
        return (f"{result.outcome}: {result.why or 'concluded'}"
                + ("" if result.outcome == "READY" else
                   " -- a person decides, or the document changes"))
    if result.waiting:
        return f"waiting for a person: {result.waiting}"
    return f"stopped in round {result.round}: {result.stopped or 'waiting'}"


def nothing_to_run(state) -> str | None:
    """Why a run of a step protocol's discussion (its ``State``) would do nothing (a person's
    decision in force, or its outcome recorded); None: there is something to run."""
    said = state.conclusion
    if said.decision is not None:
        return f"concluded, {said.said}"
    if state.run.outcome is not None and state.status != "OPEN":
        return f"concluded ({said.outcome} in round {said.round})"
    return None

