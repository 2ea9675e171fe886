"""Named behaviours a protocol's data refers to, for what data cannot say: whom a speaker
answers (``target``), when a round ends the discussion (``rounds.exit``), what the outcome is
(``outcome``), when a phase protocol moves on by itself (a phase's ``auto_trigger``). Each is
a pure function of what the ledger records, so ``check`` re-derives every choice without a
model. A new protocol registers its own here; the engine never asks which protocol it runs.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any  # noqa: F401

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


CRITICAL = ("security", "legal", "must-have", "must have", "blocking", "blocker")


def _facilitation(run, round_: int):
    """The round's facilitator synthesis (the last turn of the round with a next_action)."""
    return next((t for t in reversed(run.turns) if t.round == round_
                 and "next_action" in t.fields), None)


def _ids(value: str) -> list[str]:
    """Conflict ids of a list field (``id: description | id: ...``)."""
    from cascade.protocol.engine import split_list
    from cascade.protocol.panel import slug

    return [slug(item.split(":", 1)[0])[:30] for item in split_list(value) if item.strip()]


def open_conflicts(run, round_: int) -> list[str]:
    """The conflicts the round's synthesis lists and does not mark resolved."""
    synthesis = _facilitation(run, round_)
    if synthesis is None:
        return []
    resolved = set(_ids(synthesis.fields.get("resolved", "")))
    return [c for c in _ids(synthesis.fields.get("conflicts", "")) if c not in resolved]


def escalated(run, round_: int) -> str | None:
    """Why the round goes to a person, or None: the facilitator escalated; a conflict stayed
    open ``rounds.per_conflict`` rounds running; a participant's confidence fell below 0.5;
    a participant named a critical concern (security, legal, must-have, blocking); or one
    challenged the framing itself. ``continue N`` at an escalation quiets it N rounds."""
    if round_ <= run.quiet_until:
        return None
    synthesis = _facilitation(run, round_)
    if synthesis is not None and synthesis.fields.get("next_action") == "escalate":
        why = synthesis.fields.get("escalation_reason") or "no reason given"
        return f"the facilitator escalated: {why}"
    limit = run.steps.rounds.per_conflict
    for conflict in open_conflicts(run, round_):
        if round_ >= limit and all(conflict in open_conflicts(run, r)
                                   for r in range(round_ - limit + 1, round_)):
            return f"conflict {conflict!r} is still open after {limit} rounds"
    member = run.steps.member_role.id
    answers = [t for t in run.turns if t.round == round_
               and run.steps.role(_step_role(run, t.step)).id == member and t.step != "vote"]
    for t in answers:
        try:
            if float(t.fields.get("confidence", "1")) < 0.5:
                return f"{t.name}'s confidence is {t.fields['confidence']} (below 0.5)"
        except ValueError:
            pass
    for t in answers:
        concerns = t.fields.get("concerns", "").lower()
        word = next((w for w in CRITICAL if w in concerns), None)
        if word:
            return f"{t.name} names a {word} concern"
        if t.fields.get("challenge", "").strip():
            return f"{t.name} challenges the framing: {t.fields['challenge'][:120]}"
    return None


def _step_role(run, step_id: str) -> str:
    step = run.steps.step(step_id)
    return step.role if step is not None else run.steps.member_role.id


def not_last(run, round_: int) -> bool:
    return round_ < run.steps.rounds.max


# A decision point's ``when``: whether it is asked in this round.
CONDITIONS: dict[str, Callable[[Any, int], Any]] = {
    "not_last": not_last,
    "escalated": escalated,
}


def facilitated(run, round_: int) -> bool:
    """A roundtable's flow (seed 003), checked after each round: the facilitator proposes
    (continue, phase, conclude, escalate), these rules decide. The last round allowed
    concludes. A person's answer to an escalation: accept or decide concludes; continue N
    goes on, quiet for N rounds. Every phase of the strategy runs, each at least its
    min_rounds, at most rounds.per_phase; a conclude before the last phase moves to the next
    phase; no conclude before rounds.min, nor with a conflict open; a consensus that came too
    easily (no conflict ever, every confidence at least 0.8, two rounds or fewer) gets one
    probing round. What was refused is the next round's direction (and the ledger's)."""
    phases = run.steps.strategy.phases if run.steps.strategy else ()
    index = run.phase_of.get(round_, 0)
    in_phase = sum(1 for r, i in run.phase_of.items() if i == index and r <= round_)
    last = max(len(phases) - 1, 0)
    minimum = phases[index].min_rounds if phases else 1

    def advance(why: str = "") -> bool:
        run.phase_of[round_ + 1] = index + 1
        if why:
            run.directions[round_ + 1] = why
        return False

    def stay(why: str = "") -> bool:
        run.phase_of[round_ + 1] = index
        if why:
            run.directions[round_ + 1] = why
        return False

    if round_ >= run.steps.rounds.max:
        return True
    step = next((s for s in run.steps.round_steps if s.decision and s.when == "escalated"), None)
    answer = run.chosen.get((round_, step.id)) if step is not None else None
    if answer is not None:
        if answer.choice in ("accept", "decide"):
            synthesis = _facilitation(run, round_)
            recommended = synthesis.fields.get("recommendation", "") if synthesis else ""
            run.conclusion = (f"{answer.by} decided: {answer.text}" if answer.choice == "decide"
                              else f"{answer.by} accepted the facilitator's recommendation"
                              + (f": {recommended}" if recommended else ""))
            return True
        words = answer.text.split()
        run.quiet_until = round_ + (int(words[0]) if words and words[0].isdigit() else 1)
    synthesis = _facilitation(run, round_)
    action = synthesis.fields.get("next_action", "continue") if synthesis else "continue"
    if phases and in_phase >= run.steps.rounds.per_phase and index < last:
        return advance(f"the {phases[index].title} phase reached its {in_phase} rounds: "
                       "on to the next phase")
    if action == "conclude":
        if index < last:
            if in_phase >= minimum:
                return advance("a conclude before the strategy's last phase: the next phase "
                               "instead")
            return stay(f"conclude refused: the {phases[index].title} phase needs "
                        f"{minimum} round(s)")
        why = []
        if in_phase < minimum:
            why.append(f"the last phase needs {minimum} round(s)")
        if round_ < run.steps.rounds.min:
            why.append(f"the discussion needs {run.steps.rounds.min} rounds")
        conflicts = open_conflicts(run, round_)
        if conflicts:
            why.append(f"conflicts are open ({', '.join(conflicts)})")
        if why:
            return stay("conclude refused: " + "; ".join(why))
        if _too_easy(run, round_) and not run.probed:
            run.probed = True
            return stay("a probing round: the consensus came too easily (no conflict, every "
                        "confidence at 0.8 or more); look for what was missed")
        return True
    if action == "phase" and phases:
        if index >= last:
            return stay("there is no phase after the last: continue, or conclude")
        if in_phase < minimum:
            return stay(f"phase refused: the {phases[index].title} phase needs {minimum} "
                        "round(s)")
        return advance()
    return stay()


def _too_easy(run, round_: int) -> bool:
    if round_ > 2:
        return False
    if any(_ids(t.fields.get("conflicts", "")) for t in run.turns if "next_action" in t.fields):
        return False
    confidences = [t.fields["confidence"] for t in run.turns if "confidence" in t.fields]
    try:
        return bool(confidences) and all(float(c) >= 0.8 for c in confidences)
    except ValueError:
        return False


def scheduled(run, round_: int) -> bool:
    """A council's flow (seed 004): a set number of rounds, each in the phase its place
    gives it -- the first round the phase ``at: first``, the last ``at: last``, the rest
    ``at: middle`` (a phase without ``at`` covers every round). Never ends early."""
    phases = run.steps.strategy.phases if run.steps.strategy else ()
    if not phases:
        return False
    place = "last" if round_ + 1 >= run.steps.rounds.max else "middle"
    index = next((i for i, p in enumerate(phases) if p.at == place),
                 next((i for i, p in enumerate(phases) if p.at is None), 0))
    run.phase_of[round_ + 1] = index
    return False


EXIT_RULES: dict[str, Callable[[Any, int], bool]] = {
    "all_accept": all_accept,
    "next_action": next_action,
    "facilitated": facilitated,
    "scheduled": scheduled,
}
# Exit rules that apply rounds.min themselves (a person's decision may end a roundtable
# early; its facilitator may not): the engine does not hold their conclusion back.
OWN_MINIMUM = frozenset({"facilitated"})


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


def consent(run, round_: int) -> str:
    """Consent (consensus-driven): READY when no member BLOCKs in the last round's consent
    field (SUPPORT and STAND-ASIDE consent; a missing one is taken as BLOCK), else CHANGES."""
    given = {t.alias: t.fields.get("consent", "BLOCK") for t in run.turns
             if t.round == round_ and "consent" in t.fields}
    run.verdicts = {m: given.get(m, "BLOCK") for m in run.members}
    return "READY" if run.members and "BLOCK" not in run.verdicts.values() else "CHANGES"


def referee(run, round_: int) -> str:
    """The referee's (or meta-arbiter's) structured verdict: READY, CHANGES or REJECT from
    the last fixed-role turn after the rounds that gives one; none given is REJECT."""
    after = {s.id for s in run.steps.after}
    given = [t for t in run.turns if t.step in after and "verdict" in t.fields]
    verdict = given[-1].fields["verdict"] if given else "REJECT"
    run.verdicts = {given[-1].alias: verdict} if given else {}
    return verdict if verdict in ("READY", "CHANGES", "REJECT") else "REJECT"


OUTCOME_RULES: dict[str, Callable[[Any, int], str]] = {
    "all_accept": _all_accept_outcome,
    "thresholds": thresholds,
    "consent": consent,
    "referee": referee,
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
# participants or all" -- whoever has new input since they last spoke (cascade.protocol.pending).
def respond(d) -> list:
    from cascade.protocol.pending import pending_turns

    return pending_turns(d)


PLANNERS: dict[str, Callable[[Any], list]] = {
    "respond": respond,
}
