"""Named behaviours a protocol's data refers to, for what data cannot say: whom a speaker
answers (``target``), when a round ends the discussion (``rounds.exit``), what the outcome is
(``outcome``), when a phase protocol moves on by itself (a phase's ``auto_trigger``). Each is
a pure function of what the ledger records, so ``check`` re-derives every choice without a
model. A new protocol registers its own here; the engine never asks which protocol it runs.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset("a an and are as at be but by for from has have in is it its of on or our "
                  "should that the this to we will with would not no".split())


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 2}


def most_opposing(speaker: str, turns: Sequence[Any]) -> Any | None:
    """Of the other speakers' turns, the one whose text shares the fewest words with the
    speaker's own (Jaccard distance); ties go to the earlier message. None: nobody else."""
    own = next((t for t in turns if t.alias == speaker), None)
    others = [t for t in turns if t.alias != speaker]
    if not others:
        return None
    mine = _words(own.body) if own is not None else set()

    def overlap(t) -> float:
        theirs = _words(t.body)
        union = mine | theirs
        return len(mine & theirs) / len(union) if union else 1.0

    return min(others, key=lambda t: (overlap(t), t.number))


TARGETS: dict[str, Callable[[str, Sequence[Any]], Any | None]] = {
    "most_opposing": most_opposing,
}


# An exit rule: after a round's steps, whether the rounds end (the run's verdicts are the
# round's confirmations). An outcome rule: once a protocol's after steps are done, its outcome.
def all_accept(run, round_: int) -> bool:
    """Every member confirmed with ACCEPT (a missing or other verdict is not consent)."""
    return bool(run.members) and all(run.verdicts.get(m) == "ACCEPT" for m in run.members)


def next_action(run, round_: int) -> bool:
    """The round's decision point chose to synthesize -- or to follow a recommendation to
    synthesize. Any other choice (continue, deep-dive, a constraint, pause) goes on."""
    from cascade.protocol.engine import _decision_of, recommendation

    step = _decision_of(run)
    answer = run.chosen.get((round_, step.id)) if step is not None else None
    if answer is None:
        return False
    if answer.choice == "follow":
        return recommendation(run, round_) == "synthesize"
    return answer.choice == "synthesize"


EXIT_RULES: dict[str, Callable[[Any, int], bool]] = {
    "all_accept": all_accept,
    "next_action": next_action,
}


def _all_accept_outcome(run, round_: int) -> str:
    return "READY" if all_accept(run, round_) else "IMPASSE"


def thresholds(run, round_: int) -> str:
    """The closing vote counted by the discussion's consensus thresholds (seed 002's rule):
    READY or REJECT when reached, else CHANGES. A vote from a turn that did not see the whole
    document does not count, and its member counts as not having voted."""
    from cascade.ledger.consensus import VotingConfig, calculate_consensus

    import dataclasses

    votes = {m: v for m, v in run.verdicts.items() if v in ("READY", "CHANGES", "REJECT")}
    config = dataclasses.replace(run.consensus or VotingConfig(), human_required=False)
    # (human_required is the gate's to apply, as for any protocol's READY)
    result = calculate_consensus(votes, config, expected=run.members)
    return result.outcome if result.reached and result.outcome else "CHANGES"


OUTCOME_RULES: dict[str, Callable[[Any, int], str]] = {
    "all_accept": _all_accept_outcome,
    "thresholds": thresholds,
}


# A phase protocol's auto_trigger: after a wave of turns that all succeeded, whether the
# phase is done. ``spoke``: the authors who commented in the current phase; ``asked``: the
# personas of the wave; ``d``: the Discussion.
def all_mentioned_responded(d, spoke: set[str], asked: Sequence[str]) -> bool:
    return all(name in spoke for name in asked)


def all_responded(d, spoke: set[str], asked: Sequence[str]) -> bool:
    return all(name in spoke for name in d.expected_voters())


def consensus(d, spoke: set[str], asked: Sequence[str]) -> bool:
    return d.consensus_result.reached


TRIGGERS: dict[str, Callable[[Any, set[str], Sequence[str]], bool]] = {
    "all_mentioned_responded": all_mentioned_responded,
    "all_responded": all_responded,
    "consensus": consensus,
}


# Who speaks next in a protocol of phases (review, phased): seed 002's rule, "mentioned
# participants or all" -- whoever has new input since they last spoke (cascade.turns.pending).
def respond(d) -> list:
    from cascade.turns.pending import pending_turns

    return pending_turns(d)


PLANNERS: dict[str, Callable[[Any], list]] = {
    "respond": respond,
}
