"""People's decisions (``cascade decide``): which one is in force for the current revision
-- for a reviewed revision, by a decider of the governing rule, added in that person's own
commit, the last such -- and the consensus it gives."""
from __future__ import annotations

from collections.abc import Mapping

from cascade.ledger.consensus import ConsensusResult
from cascade.ledger.identity import is_decider, same_person
from cascade.protocol.authority import Authority
from cascade.protocol.state import Decision


def in_force(decisions: list[Decision], revision: str | None, reviewed: set[str],
              authority: Authority, authors: Mapping[int, str] | None
              ) -> tuple[Decision | None, dict[int, str]]:
    """The decision in force (the last one that may decide for this revision), and why each
    other one is not (line -> note). Pure: the decisions are not changed."""
    decision = None
    notes: dict[int, str] = {}
    for d in decisions:
        if d.note:
            continue
        author = authors.get(d.line) if authors is not None else None
        if revision is not None and d.revision not in reviewed:
            notes[d.line] = "for another revision of the document"
        elif authority.deciders and not is_decider(d.by, authority.deciders):
            notes[d.line] = (f"{d.by} is not a decider of {authority.where} "
                             f"(deciders: {', '.join(authority.deciders)})")
        elif authors is not None and (author is None or not same_person(d.by, author)):
            notes[d.line] = (f"recorded as {d.by}'s, but added in a commit by "
                             f"{author or 'someone unknown'}")
        else:
            if decision is not None:
                notes[decision.line] = "superseded by a later decision"
            decision = d
    return decision, notes


def decided(decision: Decision, result: ConsensusResult, why: str = "") -> ConsensusResult:
    """The consensus a decision in force gives: READY or REJECT reached, CHANGES not.
    ``why``: how the outcome came (``Conclusion.why``: what the rounds reached, then the
    decision); by default, who decided."""
    reached = decision.vote in ("READY", "REJECT")
    return ConsensusResult(reached, decision.vote if reached else None, result.counts, [],
                           result.missing, why or f"decided {decision.vote} by {decision.by}",
                           result.advisory)
