"""The votes a discussion counts, and the rule's settings about people, over any protocol.

A protocol's outcome rule gives the panel's verdict; for a protocol of phases (``review``,
``phased``) it counts a standing ballot, each voter's latest vote that counts (gathered by
the state's walk). Then the rule's settings about people (``persona_votes: advisory``,
``human_required``: ``with_people``) hold for every protocol alike. Pure: no files, no git,
no model.
"""
from __future__ import annotations

from collections.abc import Mapping

import msgspec.structs
from msgspec import Struct

from cascade.ledger.consensus import ConsensusResult, VotingConfig, calculate_consensus
from cascade.ledger.records import Comment
from cascade.protocol import registry
from cascade.protocol.behaviours import Exit, Ruling
from cascade.protocol.state import Discounted
from cascade.protocol.runstate import draft
from cascade.protocol.spec import Steps

ADVISORY = "waiting for a person's vote; the panel's votes are advisory"
HUMAN = "a human READY vote is required"


class Tally:
    """The votes of one segment (for one revision), counted up to ``counted`` comments."""

    def __init__(self, segment: list[Comment], reviewed: set[str], revision: str | None) -> None:
        self.segment, self.reviewed, self.revision = segment, reviewed, revision
        self.counted = 0
        self.votes: dict[str, str] = {}
        self.advisory: dict[str, str] = {}
        self.discounted: list[Discounted] = []
        self.cast: dict[str, int] = {}  # voter -> the line of the vote that counts
        self.latest: dict[str, int] = {}  # author -> the line of its latest vote
        self.forged: set[int] = set()  # lines of the blocks without a valid stamp
        self.weighed: dict[str, str] = {}  # voter -> why its vote counts otherwise
        self.forged_seen = 0


class Ballot(Struct, frozen=True):
    """Each voter's latest vote that counts, for the current revision, by the voter's name."""

    votes: Mapping[str, str]
    people: frozenset[str] = frozenset()  # the voters who are people
    attributed: frozenset[str] = frozenset()  # people whose vote is in their own commit (or
    # whose commit is not known)
    expected: tuple[str, ...] = ()  # the participants whose vote is awaited


def counted(steps: Steps, ballot: Ballot, consensus: VotingConfig | None) -> Ruling:
    """The ballot counted by the protocol's outcome rule (a standing ballot: the rule is
    asked as after the last round, its exit having ended the rounds)."""
    run = draft(steps, list(ballot.expected), {}, consensus=consensus,
                verdicts=dict(ballot.votes))
    return registry.OUTCOMES.call(steps.outcome, run, 1, Exit(True, "the latest votes"))


def result_of(verdict: Ruling, advisory: dict[str, str]) -> ConsensusResult:
    """An outcome rule's verdict as the consensus the gate reads: reached on READY or
    REJECT; explained by the rule."""
    reached = verdict.outcome in ("READY", "REJECT")
    return ConsensusResult(reached, verdict.outcome if reached else None, dict(verdict.tally),
                           list(verdict.against), list(verdict.missing), verdict.why, advisory)


def with_people(result: ConsensusResult, ballot: Ballot, config: VotingConfig) -> ConsensusResult:
    """``result`` (the panel's) under the rule's settings about people: an advisory panel's
    verdict is advice and people's votes are counted instead; ``human_required`` holds READY
    back until a person's own READY."""
    if config.advisory:
        people = {n: v for n, v in ballot.votes.items() if n in ballot.people}
        advice = {n: v for n, v in ballot.votes.items() if n not in people}
        counted_ = calculate_consensus(people,
                                       msgspec.structs.replace(config, human_required=False))
        result = msgspec.structs.replace(counted_, advisory={**result.advisory, **advice})
        if not people:
            result.reason = ADVISORY
    if not config.human_required or not result.reached or result.outcome != "READY":
        return result
    if any(ballot.votes.get(n) == "READY" for n in ballot.attributed):
        return result
    reason = HUMAN
    others = [n for n, v in ballot.votes.items() if n in ballot.people
              and n not in ballot.attributed and v == "READY"]
    if others:
        reason += f" ({', '.join(others)}'s READY was added in a commit by someone else)"
    return ConsensusResult(False, None, result.counts, [], result.missing, reason,
                           result.advisory)
