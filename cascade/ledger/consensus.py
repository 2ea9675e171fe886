"""Votes and consensus (seed 002 §5). Fractions are compared at the two-decimal precision
thresholds are written in: ``threshold_ready: 0.67`` is met by two votes of three.
``persona_votes: advisory``: the personas still vote, and their votes are shown, but the
thresholds are computed over human votes only.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from msgspec import Struct, field

from cascade.base.errors import CascadeError
from cascade.ledger.records import VOTES

_TOLERANCE = 0.005
PERSONA_VOTES = ("counted", "advisory")


class VotingConfig(Struct, frozen=True):
    threshold_ready: float = 0.67
    threshold_reject: float = 0.01
    human_required: bool = False
    persona_votes: str = "counted"  # or "advisory"

    @property
    def advisory(self) -> bool:
        return self.persona_votes == "advisory"


class ConsensusResult(Struct):
    reached: bool
    outcome: str | None  # "READY" or "REJECT" when reached
    counts: dict[str, int]
    blocked_by: list[str]
    missing: list[str] = field(default_factory=list)  # expected voters with no vote yet
    reason: str = ""
    advisory: dict[str, str] = field(default_factory=dict)  # votes shown but not counted

    def __str__(self) -> str:
        return self.outcome if self.reached and self.outcome else f"not reached: {self.reason}"

    def as_dict(self) -> dict[str, object]:
        return {"reached": self.reached, "outcome": self.outcome, "blocked_by": self.blocked_by,
                "counts": self.counts, "missing": self.missing, "reason": self.reason,
                "advisory": self.advisory}


def _meets(fraction: float, threshold: float) -> bool:
    return fraction + _TOLERANCE >= threshold


def calculate_consensus(votes: Mapping[str, str], config: VotingConfig = VotingConfig(), *,
                        expected: Iterable[str] = (), humans: Iterable[str] = ()) -> ConsensusResult:
    """Decide consensus from each voter's current vote.

    ``expected``: voters who should vote; one who has not counts against READY and is listed in
    ``missing``. ``humans``: which voters are people, for ``human_required``.
    """
    counts = {v: 0 for v in VOTES}
    for vote in votes.values():
        counts[vote] += 1
    missing = [name for name in dict.fromkeys(expected) if name not in votes]
    total = len(votes) + len(missing)
    by_vote = {v: [name for name, vote in votes.items() if vote == v] for v in VOTES}
    if total == 0:
        return ConsensusResult(False, None, counts, [], missing, "no votes yet")
    ready = counts["READY"] / total
    reject = counts["REJECT"] / total
    if counts["REJECT"] > counts["READY"] and _meets(reject, config.threshold_ready):
        return ConsensusResult(True, "REJECT", counts, by_vote["REJECT"], missing,
                               f"{counts['REJECT']}/{total} REJECT")
    if counts["REJECT"] and _meets(reject, config.threshold_reject):
        names = ", ".join(by_vote["REJECT"])
        return ConsensusResult(False, None, counts, by_vote["REJECT"], missing,
                               f"REJECT from {names}")
    if not _meets(ready, config.threshold_ready):
        reason = f"{counts['READY']}/{total} READY, needs {config.threshold_ready:.0%}"
        return ConsensusResult(False, None, counts, by_vote["CHANGES"] + by_vote["REJECT"],
                               missing, reason)
    if config.human_required:
        human_ready = [name for name in humans if votes.get(name) == "READY"]
        if not human_ready:
            return ConsensusResult(False, None, counts, [], missing,
                                   "a human READY vote is required")
    return ConsensusResult(True, "READY", counts, [], missing,
                           f"{counts['READY']}/{total} READY")


def voting_config(settings: dict[str, Any], where: Path | None = None) -> VotingConfig:
    """A VotingConfig from header or rule settings (strings or YAML values)."""
    out: dict[str, Any] = {}
    for key in ("threshold_ready", "threshold_reject"):
        if key in settings:
            try:
                value = float(settings[key])
            except (TypeError, ValueError):
                raise CascadeError(f"consensus {key} must be a number, not {settings[key]!r}",
                                   where) from None
            if not 0 <= value <= 1:
                raise CascadeError(f"consensus {key} must be between 0 and 1", where)
            out[key] = value
    if "human_required" in settings:
        value = settings["human_required"]
        if isinstance(value, str):
            value = value.strip().lower() in ("true", "yes", "1", "on")
        out["human_required"] = bool(value)
    if "persona_votes" in settings:
        value = str(settings["persona_votes"]).strip().lower()
        if value not in PERSONA_VOTES:
            raise CascadeError(f"consensus persona_votes must be counted or advisory, "
                               f"not {settings['persona_votes']!r}", where)
        out["persona_votes"] = value
    return VotingConfig(**out)
