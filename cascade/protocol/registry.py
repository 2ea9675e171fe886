"""Named behaviours a protocol's data refers to, for what data cannot say: whom a speaker
answers (``target``), when a round ends the discussion (``rounds.exit``), what the outcome is
and why (``outcome``), who speaks next in a protocol of phases (``planner``), when a phase
protocol moves on by itself (a phase's ``advance``). Each is a pure function of what the
ledger records -- it reads the run and returns its answer, never writing into the run -- so
``check`` re-derives every choice without a model. Each registry (cascade.protocol.behaviours)
declares the parameters its behaviours take; a protocol names one as ``name`` or ``{name:
{param: value}}``. A new protocol registers its own here (or in an installed package); the
engine never asks which protocol it runs.

Over 400 lines: the bundled protocols' rules, each next to the others of its registry.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import msgspec.structs

from cascade.ledger.consensus import VotingConfig, calculate_consensus
from cascade.protocol.behaviours import Exit, Param, Ref, Registry, Ruling
from cascade.protocol.fields import split_list
from cascade.protocol.panel import slug
from cascade.protocol.pending import pending_turns
from cascade.protocol.ranking import borda  # noqa: F401  (registers a peer ranking's behaviours)
from cascade.protocol.visibility import VISIBILITIES  # noqa: F401  (what a speaker is shown)

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset("a an and are as at be but by for from has have in is it its of on or our "
                  "should that the this to we will with would not no".split())

# whom a speaker answers: (speaker, the round's first-step turns) -> the turn, or None
TARGETS = Registry("target")
# when the rounds end: (run, round) -> Exit
EXITS = Registry("exit rule")
# the outcome once the rounds (and the after steps) are done: (run, round, exit) -> Ruling
OUTCOMES = Registry("outcome rule")
# a decision point's ``when``: (run, round) -> whether it is asked (a reason: why)
CONDITIONS = Registry("condition")
# who speaks next in a protocol of phases: (run, ledger, basis) -> the wave
PLANNERS = Registry("planner")
# which of the members speak in a step (its ``speakers``): (run, step, round) -> aliases
SPEAKERS = Registry("speakers rule")


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 2}


@TARGETS.register("most_opposing")
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


def shared_terms(texts: Sequence[str], most: int = 8) -> list[str]:
    """The words every text names (as ``most_opposing`` compares them), in the first text's
    order: what positions agree on, read without a model."""
    if not texts:
        return []
    common = {w for w in set.intersection(*(_words(t) for t in texts)) if len(w) > 3}
    return list(dict.fromkeys(w for w in _WORD.findall(texts[0].lower()) if w in common))[:most]


def _names(run, aliases) -> list[str]:
    return [run.name_of(a) for a in aliases]


@SPEAKERS.register("addressed")
def addressed(run, step, round_: int) -> list[str]:
    """The members the round's question is put to: the names (or aliases) its latest
    fixed-role turn gives in the field its step reads as ``addressed``. "all", nothing, or no
    name of a member: every member."""
    asked = next((t for t in reversed(run.turns) if t.round == round_
                  and run.read(t, "addressed")), None)
    if asked is None:
        return list(run.members)
    wanted = {_plain(n) for n in split_list(run.read(asked, "addressed"))}
    named = [a for a in run.members if {_plain(a), _plain(run.name_of(a))} & wanted]
    return named or list(run.members)


def _plain(name: str) -> str:
    """A persona as a facilitator may name it: ``AI-Security``, ``security``, ``@security``."""
    return name.strip().lstrip("@").lower().removeprefix("ai-")


# --- exit rules: after a round's steps, whether the rounds end (the run's verdicts are the
# round's confirmations)

def accepted(run) -> bool:
    """Every member confirmed with ACCEPT (a missing or other verdict is not consent)."""
    return bool(run.members) and all(run.closing.verdicts.get(m) == "ACCEPT" for m in run.members)


@EXITS.register("all_accept")
def all_accept(run, round_: int) -> Exit:
    """Every member accepted the round's synthesis."""
    if accepted(run):
        return Exit(True, f"all {len(run.members)} participants accepted the synthesis in "
                          f"round {round_}")
    against = [a for a in run.members if run.closing.verdicts.get(a) != "ACCEPT"]
    return Exit(False, f"{', '.join(_names(run, against)) or 'nobody'} did not accept the "
                       f"synthesis of round {round_}")


@EXITS.register("next_action")
def next_action(run, round_: int) -> Exit:
    """The round's decision point chose to synthesize -- or to follow a recommendation to
    synthesize. Any other choice (continue, deep-dive, a constraint, pause) goes on."""
    step = run.decision_step()
    answer = run.decisions.chosen.get((round_, step.id)) if step is not None else None
    if answer is None:
        return Exit(False, f"no choice to synthesize in round {round_}")
    if answer.choice == "follow":
        rec = run.recommendation(round_)
        return Exit(rec == "synthesize", f"round {round_} followed the recommendation to "
                                         f"{rec or 'go on'}")
    return Exit(answer.choice == "synthesize", f"{answer.by} chose {answer.choice} in round "
                                                f"{round_}")


def _spread_within(value: object) -> str | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0
    return None if ok else "must be a number of at least 0"


@EXITS.register("converged", params={
    "field": Param((str,), doc="the number field whose values converge"),
    "within": Param((int, float), check=_spread_within,
                    doc="the largest spread (highest less lowest) that is convergence"),
    "relative": Param((bool,), False, "the spread as a share of the median"),
    "quorum": Param((int,), 2, "the fewest members whose values count")})
def converged(run, round_: int, field: str, within: float, relative: bool = False,
              quorum: int = 2) -> Exit:
    """The members' values of a number field in the round (each one's last) lie within
    ``within`` of each other (as a share of their median when ``relative``)."""
    values = {}
    for t in run.turns:
        if t.round == round_ and t.alias in run.members and field in t.fields:
            try:
                values[t.alias] = float(t.fields[field])
            except ValueError:
                continue
    if len(values) < max(quorum, 1):
        return Exit(False, f"{len(values)} {field} value(s) in round {round_}, fewer than "
                           f"{max(quorum, 1)}")
    ordered = sorted(values.values())
    spread = ordered[-1] - ordered[0]
    middle = ordered[len(ordered) // 2] if len(ordered) % 2 else (  # no statistics module:
        ordered[len(ordered) // 2 - 1] + ordered[len(ordered) // 2]) / 2  # check's path
    measured = spread / abs(middle) if relative and middle else spread
    shown = f"{measured:.0%}" if relative else f"{measured:g}"
    limit = f"{within:.0%}" if relative else f"{within:g}"
    span = f"{ordered[0]:g} to {ordered[-1]:g}, median {middle:g}"
    if measured <= within:
        return Exit(True, f"the {len(values)} {field} values converged in round {round_}: "
                          f"spread {shown} within {limit} ({span})")
    return Exit(False, f"the {len(values)} {field} values did not converge in round "
                       f"{round_}: spread {shown}, more than {limit} ({span})")


CRITICAL = ("security", "legal", "must-have", "must have", "blocking", "blocker")


def _facilitation(run, round_: int):
    """The round's facilitator synthesis (the last turn of the round with a next_action)."""
    return next((t for t in reversed(run.turns) if t.round == round_
                 and run.read(t, "next_action")), None)


def _ids(value: str) -> list[str]:
    """Conflict ids of a list field (``id: description | id: ...``)."""
    return [slug(item.split(":", 1)[0])[:30] for item in split_list(value) if item.strip()]


def open_conflicts(run, round_: int) -> list[str]:
    """The conflicts the round's synthesis lists and does not mark resolved."""
    synthesis = _facilitation(run, round_)
    if synthesis is None:
        return []
    resolved = set(_ids(run.read(synthesis, "resolved")))
    return [c for c in _ids(run.read(synthesis, "conflicts")) if c not in resolved]


@CONDITIONS.register("escalated")
def escalated(run, round_: int) -> str | None:
    """Why the round goes to a person, or None: the facilitator escalated; a conflict stayed
    open ``rounds.per_conflict`` rounds running; a participant's confidence fell below 0.5;
    a participant named a critical concern (security, legal, must-have, blocking); or one
    challenged the framing itself. ``continue N`` at an escalation quiets it N rounds."""
    if round_ <= run.steering.quiet_until:
        return None
    synthesis = _facilitation(run, round_)
    if synthesis is not None and run.read(synthesis, "next_action") == "escalate":
        why = run.read(synthesis, "escalation_reason") or "no reason given"
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
            if float(run.read(t, "confidence") or "1") < 0.5:
                return f"{t.name}'s confidence is {run.read(t, 'confidence')} (below 0.5)"
        except ValueError:
            pass
    for t in answers:
        concerns = run.read(t, "concerns").lower()
        word = next((w for w in CRITICAL if w in concerns), None)
        if word:
            return f"{t.name} names a {word} concern"
        if run.read(t, "challenge").strip():
            return f"{t.name} challenges the framing: {run.read(t, 'challenge')[:120]}"
    return None


def _step_role(run, step_id: str) -> str:
    step = run.steps.step(step_id)
    return step.role if step is not None else run.steps.member_role.id


@CONDITIONS.register("not_last")
def not_last(run, round_: int) -> bool:
    return round_ < run.steps.rounds.max


# seed 003's fallback when a roundtable reaches its round cap
AT_CAP = "Discussion reached maximum rounds without full consensus."
RECOMMEND = "Review consensus points and address unresolved items separately."


@EXITS.register("facilitated", traits=("own_minimum",), params={
    "at_cap": Param((str,), AT_CAP, "what the last round allowed concludes with"),
    "recommend": Param((str,), RECOMMEND,
                       "the recommendation at the round cap when the facilitator gave none")})
def facilitated(run, round_: int, at_cap: str = AT_CAP, recommend: str = RECOMMEND) -> Exit:
    """A roundtable's flow (seed 003), checked after each round: the facilitator proposes
    (continue, phase, conclude, escalate), these rules decide. The last round allowed
    concludes, with ``at_cap`` and a recommendation (the facilitator's last, else
    ``recommend``), said after the rounds. A person's answer to an escalation: accept or decide concludes; continue N
    goes on, quiet for N rounds. Every phase of the strategy runs, each at least its
    min_rounds, at most rounds.per_phase; a conclude before the last phase moves to the next
    phase; no conclude before rounds.min, nor with a conflict open; a consensus that came too
    easily (no conflict ever, every confidence at least 0.8, two rounds or fewer) gets one
    probing round. What was refused is the next round's direction (and the ledger's).
    Applies rounds.min itself: a person's decision may end a roundtable early."""
    phases = run.steps.strategy.phases if run.steps.strategy else ()
    index = run.steering.phase_of.get(round_, 0)
    in_phase = sum(1 for r, i in run.steering.phase_of.items() if i == index and r <= round_)
    last = max(len(phases) - 1, 0)
    minimum = phases[index].min_rounds if phases else 1
    if round_ >= run.steps.rounds.max:
        return _capped(run, round_, at_cap, recommend)
    concluded, quiet = _escalation_answered(run, round_)
    if concluded is not None:
        return concluded

    def advance(why: str = "") -> Exit:
        return Exit(False, why or f"round {round_ + 1} begins the next phase", index + 1,
                    why, quiet_until=quiet)

    def stay(why: str = "") -> Exit:
        return Exit(False, why or f"the facilitator goes on after round {round_}", index, why,
                    quiet_until=quiet)

    synthesis = _facilitation(run, round_)
    action = (run.read(synthesis, "next_action") or "continue") if synthesis else "continue"
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
        refused = _conclude_refused(run, round_, in_phase, minimum)
        if refused:
            return stay(refused)
        if _too_easy(run, round_) and not run.steering.probed:
            probing = ("a probing round: the consensus came too easily (no conflict, every "
                       "confidence at 0.8 or more); look for what was missed")
            return Exit(False, probing, index, probing, quiet_until=quiet, probed=True)
        return Exit(True, f"the facilitator concluded in round {round_}", quiet_until=quiet)
    if action == "phase" and phases:
        if index >= last:
            return stay("there is no phase after the last: continue, or conclude")
        if in_phase < minimum:
            return stay(f"phase refused: the {phases[index].title} phase needs {minimum} "
                        "round(s)")
        return advance()
    return stay()


def _capped(run, round_: int, at_cap: str, recommend: str) -> Exit:
    """The last round allowed concludes: ``at_cap`` and the facilitator's last
    recommendation (else ``recommend``), said after the rounds."""
    given = next((run.read(t, "recommendation") for t in reversed(run.turns)
                  if t.round <= round_ and run.read(t, "recommendation")), "")
    said = " ".join(x for x in (at_cap, f"Recommendation: {given or recommend}"
                                if given or recommend else "") if x)
    return Exit(True, f"round {round_} is the last the roundtable allows: "
                      f"{at_cap or 'concluded'}", conclusion=said)


def _conclude_refused(run, round_: int, in_phase: int, minimum: int) -> str:
    """Why a conclude in the strategy's last phase is refused ("": it is not): the phase's
    minimum, the discussion's minimum rounds, or conflicts still open."""
    why = []
    if in_phase < minimum:
        why.append(f"the last phase needs {minimum} round(s)")
    if round_ < run.steps.rounds.min:
        why.append(f"the discussion needs {run.steps.rounds.min} rounds")
    conflicts = open_conflicts(run, round_)
    if conflicts:
        why.append(f"conflicts are open ({', '.join(conflicts)})")
    return "conclude refused: " + "; ".join(why) if why else ""


def _escalation_answered(run, round_: int) -> tuple[Exit | None, int | None]:
    """A person's answer to the round's escalation: accept or decide concludes (the Exit);
    continue N goes on, quiet for N rounds (the round escalations are quiet until)."""
    step = next((s for s in run.steps.round_steps if s.decision and s.when == "escalated"), None)
    answer = run.decisions.chosen.get((round_, step.id)) if step is not None else None
    if answer is None:
        return None, None
    if answer.choice in ("accept", "decide"):
        synthesis = _facilitation(run, round_)
        recommended = run.read(synthesis, "recommendation") if synthesis else ""
        said = (f"{answer.by} decided: {answer.text}" if answer.choice == "decide"
                else f"{answer.by} accepted the facilitator's recommendation"
                + (f": {recommended}" if recommended else ""))
        return Exit(True, said, conclusion=said), None
    words = answer.text.split()
    return None, round_ + (int(words[0]) if words and words[0].isdigit() else 1)


def _too_easy(run, round_: int) -> bool:
    if round_ > 2:
        return False
    so_far = [t for t in run.turns if t.round <= round_]  # not the rounds after it
    if any(_ids(run.read(t, "conflicts")) for t in so_far if run.read(t, "next_action")):
        return False
    confidences = [run.read(t, "confidence") for t in so_far if run.read(t, "confidence")]
    try:
        return bool(confidences) and all(float(c) >= 0.8 for c in confidences)
    except ValueError:
        return False


@EXITS.register("scheduled")
def scheduled(run, round_: int) -> Exit:
    """A council's flow (seed 004): a set number of rounds, each in the phase its place
    gives it -- the first round the phase ``at: first``, the last ``at: last``, the rest
    ``at: middle`` (a phase without ``at`` covers every round). Never ends early."""
    phases = run.steps.strategy.phases if run.steps.strategy else ()
    why = f"a set number of rounds ({run.steps.rounds.max})"
    if not phases:
        return Exit(False, why)
    place = "last" if round_ + 1 >= run.steps.rounds.max else "middle"
    index = next((i for i, p in enumerate(phases) if p.at == place),
                 next((i for i, p in enumerate(phases) if p.at is None), 0))
    return Exit(False, why, index)


# --- outcome rules: once the rounds (and the after steps) are done, the outcome and its
# explanation. ``exit``: the last round's exit rule answer.

@OUTCOMES.register("exit")
def by_exit(run, round_: int, exit: Exit) -> Ruling:
    """The exit rule's own verdict: READY when it ended the rounds, IMPASSE when the round
    cap came first (the default outcome of a protocol that names none)."""
    if exit.ends:
        return Ruling("READY", exit.why, dict(run.closing.verdicts))
    return Ruling("IMPASSE", f"impasse after {round_} rounds ({exit.why})",
                   dict(run.closing.verdicts))


@OUTCOMES.register("all_accept")
def all_accept_outcome(run, round_: int, exit: Exit) -> Ruling:
    """READY when every member accepted the last synthesis, else IMPASSE."""
    counted = {m: v for m, v in run.closing.verdicts.items() if m in run.members}
    tally = {"ACCEPT": 0, "REJECT": 0}
    for verdict in counted.values():
        tally["ACCEPT" if verdict == "ACCEPT" else "REJECT"] += 1
    if accepted(run):
        return Ruling("READY", f"all {len(run.members)} participants accepted the synthesis "
                                f"in round {round_}", counted, tally)
    against = tuple(_names(run, (a for a, v in counted.items() if v != "ACCEPT")))
    missing = tuple(_names(run, (a for a in run.members if a not in counted)))
    who = ", ".join(against) + (" rejected the last synthesis" if against else "")
    if missing:
        who += ("; " if who else "") + f"no confirmation from {', '.join(missing)}"
    return Ruling("IMPASSE", f"impasse after {round_} rounds ({who or 'nobody deliberated'})",
                   counted, tally, against)


@OUTCOMES.register("thresholds", traits=("closing_vote",))
def thresholds(run, round_: int, exit: Exit) -> Ruling:
    """The closing vote counted by the discussion's consensus thresholds (seed 002's rule):
    READY or REJECT when reached, else CHANGES. A vote from a turn that did not see the whole
    document does not count, and its member counts as not having voted. A protocol of phases
    has no closing vote: each voter's latest vote that counts (cascade.protocol.ballot)."""
    votes = {m: v for m, v in run.closing.verdicts.items() if v in ("READY", "CHANGES", "REJECT")}
    config = msgspec.structs.replace(run.terms.consensus or VotingConfig(), human_required=False)
    # (human_required is the gate's to apply, as for any protocol's READY)
    result = calculate_consensus(votes, config, expected=run.members)
    outcome = result.outcome if result.reached and result.outcome else "CHANGES"
    if run.steps.shape.standing_ballot:  # no closing vote: each voter's latest vote
        return Ruling(outcome, result.reason, dict(run.closing.verdicts), dict(result.counts),
                       tuple(_names(run, result.blocked_by)), tuple(_names(run, result.missing)))
    tally = {"READY": 0, "CHANGES": 0, "REJECT": 0}
    for verdict in run.closing.verdicts.values():
        tally[verdict if verdict in tally else "REJECT"] += 1
    against = tuple(_names(run, (a for a, v in run.closing.verdicts.items() if v != "READY")))
    missing = tuple(_names(run, (a for a in run.members if a not in run.closing.verdicts)))
    if outcome == "READY":
        return Ruling(outcome, f"the closing vote after round {round_}: {tally['READY']}/"
                                f"{len(run.members)} READY", dict(run.closing.verdicts), tally)
    why = (f"the closing vote after round {round_}: "
           + (", ".join(f"{n} {v}" for v, n in tally.items() if n) or "no votes"))
    if against:
        why += f" (not READY: {', '.join(against)})"
    if missing:
        why += f" (no vote: {', '.join(missing)})"
    return Ruling(outcome, why, dict(run.closing.verdicts), tally, against, missing)


def on_topic(steps: Any) -> Any:
    """A protocol's steps for a topic's discussion (no document): a closing vote on the
    document has nothing to vote on, so the steps after the rounds that confirm are left out
    and the synthesis is the outcome (outcome rule ``delivered``), as the sources deliver a
    topic's discussion. A protocol with a verdict of its own keeps it."""
    if not OUTCOMES.has(steps.outcome, "closing_vote") or not any(
            s.confirm for s in steps.after):
        return steps
    return msgspec.structs.replace(steps, after=tuple(s for s in steps.after if not s.confirm),
                                   outcome=Ref("delivered"))


@OUTCOMES.register("delivered")
def delivered(run, round_: int, exit: Exit) -> Ruling:
    """A topic's discussion, which has no document to vote on (``on_topic``): once its
    rounds and its synthesis are done, the synthesis is the outcome -- READY, as the sources
    deliver a topic's discussion."""
    return Ruling("READY", f"the discussion concluded after round {round_}; its synthesis "
                           "is the outcome (a topic: no document to vote on)")


@OUTCOMES.register("consent", params={
    "field": Param((str,), "consent", "the field that gives SUPPORT, STAND-ASIDE or BLOCK")})
def consent(run, round_: int, exit: Exit, field: str = "consent") -> Ruling:
    """Consent (consensus-driven): READY when no member BLOCKs in the last round's consent
    field (SUPPORT and STAND-ASIDE consent; a missing one is taken as BLOCK), else CHANGES."""
    given = {t.alias: t.fields.get(field, "BLOCK") for t in run.turns
             if t.round == round_ and field in t.fields}
    counted = {m: given.get(m, "BLOCK") for m in run.members}
    tally = {"SUPPORT": 0, "STAND-ASIDE": 0, "BLOCK": 0}
    for verdict in counted.values():
        tally[verdict if verdict in tally else "BLOCK"] += 1
    blocked = tuple(_names(run, (a for a, v in counted.items() if v == "BLOCK")))
    if run.members and not blocked:
        return Ruling("READY", f"consent after round {round_}", counted, tally)
    why = (f"no consent after round {round_}: BLOCK from {', '.join(blocked)}" if blocked
           else f"no consent after round {round_}: nobody deliberated")
    return Ruling("CHANGES", why, counted, tally, blocked)


@OUTCOMES.register("referee")
def referee(run, round_: int, exit: Exit) -> Ruling:
    """The referee's (or meta-arbiter's) structured verdict: READY, CHANGES or REJECT from
    the last fixed-role turn after the rounds that gives one; none given is REJECT."""
    after = {s.id for s in run.steps.after}
    given = [t for t in run.turns if t.step in after and "verdict" in t.fields]
    verdict = given[-1].fields["verdict"] if given else "REJECT"
    counted = {given[-1].alias: verdict} if given else {}
    outcome = verdict if verdict in ("READY", "CHANGES", "REJECT") else "REJECT"
    tally = {"READY": 0, "CHANGES": 0, "REJECT": 0}
    tally[outcome] += 1 if given else 0
    who = _decider(run.steps, given[-1].step if given else None)
    why = (f"the {who}'s verdict after round {round_}: {outcome}" if given
           else f"no {who}'s verdict after round {round_}: REJECT")
    return Ruling(outcome, why, counted, tally,
                   tuple(t.name for t in given[-1:]) if outcome != "READY" else ())


def _decider(steps, step_id: str | None) -> str:
    """The deciding role's name, as its protocol titles it (council: the referee; in dp mode,
    the meta-arbiter): of the step that gave the verdict, else of the last step after the
    rounds that asks for one."""
    step = steps.step(step_id) if step_id else None
    if step is None:
        step = next((s for s in reversed(steps.after)
                     if any(f.name == "verdict" for f in s.fields)), None)
    role = next((r for r in steps.roles if step is not None and r.id == step.role), None)
    return role.title.lower() if role is not None else "referee"


# A phase's ``advance`` trigger: after a wave of turns that all succeeded, whether the
# phase is done: (the Discussion, the authors who commented in the current phase, the
# personas of the wave) -> bool.
TRIGGERS: dict[str, Callable[[Any, set[str], Sequence[str]], bool]] = {
    "all_mentioned_responded": lambda d, spoke, asked: all(name in spoke for name in asked),
    "all_responded": lambda d, spoke, asked: all(name in spoke for name in d.expected_voters()),
    "consensus": lambda d, spoke, asked: d.consensus_result.reached,
}


# What a planner's traits may say of the protocol it plans (cascade.protocol.spec.Shape):
# a run is one wave of whoever is due; personas may be asked by name; the steps are phases,
# not rounds; any number of participants; the verdict is a standing ballot.
SHAPE_TRAITS = ("one_wave", "by_name", "phases", "any_panel", "standing_ballot")


# Who speaks next in a protocol of phases (review, phased): seed 002's rule, "mentioned
# participants or all" -- whoever has new input since they last spoke (cascade.protocol.pending).
@PLANNERS.register("respond", traits=SHAPE_TRAITS)
def respond(run, ledger, basis) -> list:
    """(run, ledger, basis) -> the pending turns (cascade.protocol.pending.Pending)."""
    return pending_turns(ledger, list(run.members), basis)
