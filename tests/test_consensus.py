"""Tests for cascade.ledger.consensus.calculate_consensus (seed 002 §5 Voting)."""
from __future__ import annotations

import pytest

from cascade.ledger.consensus import ConsensusResult, VotingConfig, calculate_consensus

# ---- seed 002, "Testing Strategy / Example", verbatim -----------------------------------------

def test_consensus_reached_with_threshold():
    votes = {
        "AI-Architect": "READY",
        "AI-Security": "READY",
        "AI-Pragmatist": "CHANGES",
    }
    config = VotingConfig(threshold_ready=0.67)
    result = calculate_consensus(votes, config)
    assert result.reached == True  # noqa: E712
    assert result.outcome == "READY"


def test_reject_blocks_consensus():
    votes = {
        "AI-Architect": "READY",
        "AI-Security": "REJECT",
        "AI-Pragmatist": "READY",
    }
    config = VotingConfig(threshold_reject=0.01)
    result = calculate_consensus(votes, config)
    assert result.reached == False  # noqa: E712
    assert result.blocked_by == ["AI-Security"]


# ---- the table --------------------------------------------------------------------------------

A, S, P, D, M = "AI-Architect", "AI-Security", "AI-Pragmatist", "AI-Designer", "AI-Moderator"


def case(id_, votes, config=VotingConfig(), *, expected=(), humans=(), reached, outcome=None,
         blocked_by=(), missing=(), counts=None, reason=None):
    return pytest.param(votes, config, tuple(expected), tuple(humans),
                        dict(reached=reached, outcome=outcome, blocked_by=list(blocked_by),
                             missing=list(missing), counts=counts, reason=reason), id=id_)


CASES = [
    case("no-votes", {}, reached=False, counts={"READY": 0, "CHANGES": 0, "REJECT": 0},
         reason="no votes yet"),
    case("no-votes-but-expected", {}, expected=[A, S], reached=False, missing=[A, S],
         counts={"READY": 0, "CHANGES": 0, "REJECT": 0}),
    case("all-ready", {A: "READY", S: "READY", P: "READY"}, reached=True, outcome="READY",
         counts={"READY": 3, "CHANGES": 0, "REJECT": 0}),
    case("single-ready", {A: "READY"}, reached=True, outcome="READY"),
    case("single-changes", {A: "CHANGES"}, reached=False, blocked_by=[A]),
    case("two-of-three-meets-0.67", {A: "READY", S: "CHANGES", P: "READY"},
         VotingConfig(threshold_ready=0.67), reached=True, outcome="READY"),
    case("half-meets-0.5", {A: "READY", S: "CHANGES"}, VotingConfig(threshold_ready=0.5),
         reached=True, outcome="READY"),
    case("two-of-three-fails-0.75", {A: "READY", S: "READY", P: "CHANGES"},
         VotingConfig(threshold_ready=0.75), reached=False, blocked_by=[P]),
    case("three-of-four-meets-0.75", {A: "READY", S: "READY", P: "READY", D: "CHANGES"},
         VotingConfig(threshold_ready=0.75), reached=True, outcome="READY"),
    case("two-of-three-fails-0.68", {A: "READY", S: "READY", P: "CHANGES"},
         VotingConfig(threshold_ready=0.68), reached=False, blocked_by=[P]),
    case("one-of-two-fails-0.67", {A: "READY", S: "CHANGES"}, reached=False, blocked_by=[S]),
    case("threshold-one-needs-all", {A: "READY", S: "READY", P: "CHANGES"},
         VotingConfig(threshold_ready=1.0), reached=False, blocked_by=[P]),
    case("threshold-one-all-ready", {A: "READY", S: "READY"}, VotingConfig(threshold_ready=1.0),
         reached=True, outcome="READY"),
    case("missing-voter-counts-against-ready", {A: "READY", S: "READY"}, expected=[A, S, P, D],
         reached=False, missing=[P, D]),
    case("missing-voter-still-meets", {A: "READY", S: "READY"}, expected=[A, S, P],
         reached=True, outcome="READY", missing=[P]),
    case("expected-duplicates-counted-once", {A: "READY", S: "READY"}, expected=[A, P, P, S],
         reached=True, outcome="READY", missing=[P]),
    case("unexpected-voter-still-counts", {A: "READY", "Rob": "CHANGES"}, expected=[A],
         reached=False, blocked_by=["Rob"]),
    case("human-required-without-human", {A: "READY", S: "READY", P: "READY"},
         VotingConfig(human_required=True), reached=False,
         reason="a human READY vote is required"),
    case("human-required-human-not-ready", {A: "READY", S: "READY", P: "READY", "Rob": "CHANGES"},
         VotingConfig(human_required=True), humans=["Rob"], reached=False,
         reason="a human READY vote is required"),
    case("human-required-human-ready", {A: "READY", S: "READY", "Rob": "READY"},
         VotingConfig(human_required=True), humans=["Rob"], reached=True, outcome="READY"),
    case("human-required-one-of-two-humans-ready",
         {A: "READY", S: "READY", "Rob": "READY", "Ann": "CHANGES"},
         VotingConfig(human_required=True, threshold_ready=0.5), humans=["Rob", "Ann"],
         reached=True, outcome="READY"),
    case("human-ready-does-not-override-threshold", {A: "CHANGES", S: "CHANGES", "Rob": "READY"},
         VotingConfig(human_required=True), humans=["Rob"], reached=False, blocked_by=[A, S]),
    case("human-not-required-no-human", {A: "READY", S: "READY"},
         VotingConfig(human_required=False), reached=True, outcome="READY"),
    case("one-reject-of-three-blocks", {A: "READY", S: "REJECT", P: "READY"}, reached=False,
         blocked_by=[S], reason="REJECT from AI-Security"),
    case("one-reject-of-ten-blocks",
         {**{f"V{i}": "READY" for i in range(9)}, S: "REJECT"}, reached=False, blocked_by=[S]),
    case("reject-supermajority", {A: "REJECT", S: "REJECT", P: "READY"}, reached=True,
         outcome="REJECT", blocked_by=[A, S]),
    case("all-reject", {A: "REJECT", S: "REJECT"}, reached=True, outcome="REJECT",
         blocked_by=[A, S], counts={"READY": 0, "CHANGES": 0, "REJECT": 2}),
    case("reject-half-is-not-supermajority", {A: "REJECT", S: "READY"}, reached=False,
         blocked_by=[A]),
    case("reject-0.34-one-of-four-does-not-block",
         {A: "READY", S: "REJECT", P: "READY", D: "READY"},
         VotingConfig(threshold_reject=0.34), reached=True, outcome="READY"),
    case("reject-0.34-two-of-four-blocks", {A: "READY", S: "REJECT", P: "REJECT", D: "READY"},
         VotingConfig(threshold_reject=0.34), reached=False, blocked_by=[S, P]),
    case("reject-0.34-one-of-four-short-of-ready",
         {A: "READY", S: "REJECT", P: "CHANGES", D: "READY"},
         VotingConfig(threshold_reject=0.34), reached=False, blocked_by=[P, S]),
    case("changes-listed-when-ready-short", {A: "READY", S: "CHANGES", P: "CHANGES"},
         reached=False, blocked_by=[S, P], counts={"READY": 1, "CHANGES": 2, "REJECT": 0}),
    case("changes-only", {A: "CHANGES", S: "CHANGES"}, reached=False, blocked_by=[A, S]),
    case("missing-not-in-blocked-by", {A: "READY", S: "CHANGES"}, expected=[A, S, P],
         reached=False, blocked_by=[S], missing=[P]),
]


@pytest.mark.parametrize("votes, config, expected, humans, want", CASES)
def test_consensus_table(votes, config, expected, humans, want) -> None:
    result = calculate_consensus(votes, config, expected=expected, humans=humans)
    assert isinstance(result, ConsensusResult)
    assert result.reached is want["reached"]
    assert result.outcome == want["outcome"]
    assert result.blocked_by == want["blocked_by"]
    assert result.missing == want["missing"]
    if want["counts"] is not None:
        assert result.counts == want["counts"]
    else:
        assert result.counts == {v: list(votes.values()).count(v)
                                 for v in ("READY", "CHANGES", "REJECT")}
    if want["reason"] is not None:
        assert result.reason == want["reason"]
    else:
        assert result.reason  # always says why
    assert str(result) == (want["outcome"] if want["reached"] else f"not reached: {result.reason}")


def test_default_config_matches_seed() -> None:
    config = VotingConfig()
    assert (config.threshold_ready, config.threshold_reject, config.human_required) == (
        0.67, 0.01, False)


def test_as_dict() -> None:
    result = calculate_consensus({A: "READY", S: "CHANGES"}, expected=[A, S, P])
    assert result.as_dict() == {
        "reached": False, "outcome": None, "blocked_by": [S],
        "counts": {"READY": 1, "CHANGES": 1, "REJECT": 0}, "missing": [P],
        "reason": result.reason, "advisory": {},
    }
    assert "1/3" in result.reason


def test_votes_mapping_not_mutated() -> None:
    votes = {A: "READY", S: "REJECT"}
    calculate_consensus(votes, expected=[A, S, P])
    assert votes == {A: "READY", S: "REJECT"}
