"""A discussion's state, derived from its log and the authority that governs it. Pure: no
files, no git, no model. The hook, ``cascade check`` and ``cascade status`` all read a ledger
through ``derive()`` and judge it with ``gate()``, so they cannot disagree.

The *authority* is the rule that governs the ledger's document (its participants, protocol,
consensus settings and deciders); only a ledger no rule governs falls back to its own header.
A header that differs from its rule is reported and never loosens the verdict.

What counts:
- a persona's vote counts only from a block the tool wrote for it (a stamp whose digest
  verifies), for the revision of the document the ledger last recorded, having seen the
  whole document, and only if the persona is a participant;
- a person's vote counts (people's names are not verified: see the threat model in the
  README);
- a person's *decision* (``cascade decide``) for the current revision overrides the panel,
  when the authority lets that person decide.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from cascade.config.personas import normal_name
from cascade.ledger.consensus import ConsensusResult, VotingConfig, calculate_consensus, voting_config
from cascade.ledger.model import (
    OUTCOME, PHASE_TRANSITION, SETTINGS, SOURCE_REVISION, VOTE_RESET, Comment, Event, Ledger,
)
from cascade.ledger.provenance import verify

_STATUS = {"READY": "ACCEPTED", "REJECT": "REJECTED"}


@dataclass(frozen=True)
class Authority:
    """What decides for one ledger."""

    participants: tuple[str, ...]
    protocol: str
    consensus: VotingConfig
    deciders: tuple[str, ...] = ()  # names or e-mail addresses; empty: any person may decide
    revote_on_change: bool = True
    rule: str | None = None  # "rule 'adr' (.ai-rules.yml:3)" when a rule governs the ledger

    @property
    def where(self) -> str:
        return self.rule or "the ledger's header"


@dataclass
class Decision:
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


@dataclass
class Discounted:
    """A block under a persona's name whose vote does not count, and why."""

    author: str
    line: int
    reason: str
    forged: bool = False  # no valid stamp: hand-written or edited

    def as_dict(self) -> dict[str, object]:
        return {"author": self.author, "line": self.line, "reason": self.reason,
                "forged": self.forged}


@dataclass
class State:
    phase: str
    status: str  # OPEN, ACCEPTED, REJECTED
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
    # lines of SOURCE-REVISION events whose earlier review holds (same core: status, spacing
    # or path changed only): nobody is asked again
    carried: set[int] = field(default_factory=set)
    core: str | None = None  # the core the current revision's event recorded
    carried_now: bool = False  # the current revision holds an earlier one's review
    run: Any = None  # a step protocol's run (cascade.protocol.engine.Run); None: phases


def block_id(c: Comment) -> str:
    """A short content id for a person's block, for ``VOTE-RESET keep=``."""
    raw = f"{c.author}\n{c.vote}\n{c.body}".encode("utf-8", "surrogatepass")
    return hashlib.sha256(raw).hexdigest()[:12]


def header_settings(ledger: Ledger) -> dict[str, object]:
    """The ledger's own settings: its header, as changed by its last ``SETTINGS`` event."""
    h = ledger.header
    out: dict[str, object] = {"participants": tuple(h.participants), "protocol": h.protocol,
                              "consensus": dict(h.consensus)}
    for event in ledger.events:
        if event.kind == SETTINGS:
            f = event.fields
            if "participants" in f:
                out["participants"] = tuple(p for p in f["participants"].replace(",", " ").split())
            if "protocol" in f:
                out["protocol"] = f["protocol"]
            if "consensus" in f:
                out["consensus"] = dict(kv.split("=", 1) for kv in f["consensus"].split()
                                        if "=" in kv)
    return out


def header_differences(ledger: Ledger, authority: Authority, default_protocol: str) -> list[str]:
    """The settings in which the ledger's header (and SETTINGS events) differs from its rule."""
    own = header_settings(ledger)
    diff = []
    if set(own["participants"]) != set(authority.participants):  # type: ignore[arg-type]
        diff.append("participants")
    if (own["protocol"] or default_protocol) != authority.protocol:
        diff.append("protocol")
    try:
        mine = voting_config(own["consensus"])  # type: ignore[arg-type]
    except Exception:  # noqa: BLE001 - an unreadable header differs
        mine = None
    for key in ("threshold_ready", "threshold_reject", "human_required", "persona_votes"):
        if mine is None or getattr(mine, key) != getattr(authority.consensus, key):
            diff.append(f"consensus.{key}")
    return diff


def settings_fields(authority: Authority) -> dict[str, str]:
    """The fields of a ``SETTINGS`` event that records an authority's settings."""
    c = authority.consensus
    consensus = (f"threshold_ready={c.threshold_ready} threshold_reject={c.threshold_reject} "
                 f"human_required={str(c.human_required).lower()}"
                 + (" persona_votes=advisory" if c.advisory else ""))
    return {"participants": ", ".join(authority.participants), "protocol": authority.protocol,
            "consensus": consensus}


def _identity_matches(by: str, deciders: tuple[str, ...]) -> bool:
    name, _, rest = by.partition("<")
    email = rest.rstrip(">").strip()
    wanted = {normal_name(d) for d in deciders}
    return normal_name(name) in wanted or (bool(email) and normal_name(email) in wanted)


def derive(ledger: Ledger, authority: Authority, personas, protocol) -> State:
    """The state of a ledger under an authority.

    ``personas``: the registry (``of_author``, ``get``); ``protocol``: the authority's
    protocol (its first phase, for a ledger whose header names none; which phases take votes).
    """
    first_phase = protocol.first.id
    participants = {a.lower() for a in authority.participants}
    if protocol.steps is not None and protocol.steps.generated:  # the panel's experts vote
        from cascade.protocol.panel import panel_of

        panel = panel_of(ledger.entries)
        participants |= set(panel.aliases) if panel is not None else set()

    phase = ledger.header.phase or first_phase
    status = (ledger.header.status or "OPEN").upper()
    revision: str | None = None
    reviewed: set[str] = set()  # revisions whose review holds for the current one
    cores: dict[str, str] = {}  # revision -> the core its event recorded (cascade.docstatus)
    earlier: dict[str, tuple[list[Comment], set[str], str]] = {}  # revision -> as it was left
    carried: set[int] = set()
    carried_now = False  # the current revision holds an earlier one's review
    segment: list[Comment] = []
    decisions: list[Decision] = []
    forged: list[Discounted] = []
    for entry in ledger.entries:
        if isinstance(entry, Event):
            if entry.kind == PHASE_TRANSITION and entry.fields.get("to"):
                phase = entry.fields["to"]
                segment = []
            elif entry.kind == VOTE_RESET:
                keep = set(filter(None, entry.fields.get("keep", "").split(",")))
                segment = [c for c in segment if keep and block_id(c) in keep]
            elif entry.kind == SOURCE_REVISION:
                words = entry.value.split()
                new = words[0] if words else None
                if revision is not None:
                    earlier[revision] = (list(segment), set(reviewed), status)
                same, core = entry.fields.get("same-as"), entry.fields.get("core")
                if new is not None and same and (same == new or core and cores.get(same) == core):
                    # The document differs from a revision this ledger recorded only in its
                    # status, spacing or path (the same core): that revision's review holds.
                    if same != revision and same in earlier:  # back to an earlier text
                        segment, reviewed, status = (list(earlier[same][0]),
                                                     set(earlier[same][1]), earlier[same][2])
                    reviewed = reviewed | {new}
                    carried.add(entry.line)
                    carried_now = True
                else:
                    carried_now = False
                    reviewed = {new} if new else set()
                    status = "OPEN"
                if new is not None and core:
                    cores[new] = core
                revision = new
            elif entry.kind == OUTCOME:
                words = entry.value.split()
                word = words[0].upper() if words else ""
                status = _STATUS.get(word, word or status)
            continue
        persona = personas.of_author(entry.author)
        if persona is not None:
            problem = verify(entry)
            if problem or entry.origin != "ai" or entry.author != persona.name:
                forged.append(Discounted(entry.author, entry.line,
                                         problem or "not written as a persona's turn", True))
        if entry.origin == "decision" and persona is None:
            problem = verify(entry)
            p = entry.provenance
            reason = entry.body.split("\n\n", 1)[1] if "\n\n" in entry.body else entry.body
            decisions.append(Decision(entry.author, p.get("by", entry.author), p.get("vote", ""),
                                      reason, entry.line, p.get("revision"),
                                      note=problem or ""))
            continue
        segment.append(entry)

    # Votes of the current segment: each voter's latest vote that counts.
    votes: dict[str, str] = {}
    advisory: dict[str, str] = {}
    discounted: list[Discounted] = []
    forged_lines = {d.line for d in forged}
    for c in segment:
        if c.vote is None:
            if c.provenance.get("cut") and c.line not in forged_lines:
                # A reply over its budget was cut and its vote dropped: the persona's earlier
                # vote is no longer its word either (fail closed).
                cut = personas.of_author(c.author)
                if cut is not None and votes.pop(cut.name, None) is not None:
                    discounted.append(Discounted(cut.name, c.line, "its latest reply was cut "
                                                 "(over the reply budget): no vote counts"))
            continue
        persona = personas.of_author(c.author)
        if persona is None:  # a person
            votes.pop(c.author, None)
            votes[c.author] = c.vote
            continue
        if not persona.votes:
            continue  # background personas never vote
        reason = _persona_vote_problem(c, persona, revision, reviewed, ledger,
                                       c.line in forged_lines, participants)
        if reason == "not a participant":
            advisory[persona.name] = c.vote
            discounted.append(Discounted(persona.name, c.line, f"{persona.alias} is not a "
                                         f"participant of {authority.where}"))
            continue
        if reason:
            discounted.append(Discounted(persona.name, c.line, reason, c.line in forged_lines))
            continue
        votes.pop(persona.name, None)
        votes[persona.name] = c.vote
    # A discounted block only matters if no later valid vote of that persona replaced it.
    discounted = [d for d in discounted
                  if not (d.author in votes and _latest_line(segment, d.author) != d.line)]

    expected = [p.name for a in authority.participants
                if (p := personas.get(a)) is not None and p.votes]
    config = authority.consensus
    humans = [n for n in votes if personas.of_author(n) is None]
    if config.advisory:
        counted = {n: v for n, v in votes.items() if n in humans}
        advisory.update({n: v for n, v in votes.items() if n not in counted})
        result = calculate_consensus(counted, config, humans=humans)
        if not counted:
            result.reason = "waiting for a person's vote; the panel's votes are advisory"
    else:
        result = calculate_consensus(votes, config, expected=expected, humans=humans)
        votes_missing = {d.author for d in discounted}
        if result.missing and votes_missing & set(result.missing):
            notes = "; ".join(f"{d.author}'s vote (line {d.line}) does not count: {d.reason}"
                              for d in discounted if d.author in result.missing)
            result.reason += f" ({notes})"
    result.advisory = advisory
    run = None
    if getattr(protocol, "steps", None) is not None:
        run, result = _step_result(ledger, personas, protocol, authority, carried,
                                   reviewed if revision is not None else None, advisory)
    current = protocol.get(phase)
    if current is not None and not current.voting_mode and run is None:
        result.reached = False
        result.outcome = None
        result.reason = f"phase {phase} does not take votes" + (
            f"; advance to {current.next}" if current.next else "")

    decision = None
    for d in decisions:
        if d.note:
            continue
        if revision is not None and d.revision not in reviewed:
            d.note = "for another revision of the document"
        elif authority.deciders and not _identity_matches(d.by, authority.deciders):
            d.note = (f"{d.by} is not a decider of {authority.where} "
                      f"(deciders: {', '.join(authority.deciders)})")
        else:
            if decision is not None:
                decision.in_force = False
                decision.note = "superseded by a later decision"
            d.in_force = True
            decision = d
    if decision is not None:
        verdict = {"READY": (True, "READY"), "REJECT": (True, "REJECT")}.get(decision.vote,
                                                                           (False, None))
        result = ConsensusResult(verdict[0], verdict[1], result.counts, [], result.missing,
                                 f"decided {decision.vote} by {decision.by}", advisory)
        result.decided = True  # type: ignore[attr-defined]
    return State(phase, status, revision, votes, advisory, expected, discounted, forged,
                 decisions, decision, result, segment, carried, cores.get(revision or ""),
                 carried_now, run)


def _step_result(ledger: Ledger, personas, protocol, authority: Authority, carried: set[int],
                 reviewed: set[str] | None, advisory: dict[str, str]):
    """A step protocol's verdict (cascade.protocol.engine): READY only from its own outcome
    rule over the turns cascade wrote for this text; an impasse is never READY."""
    from cascade.protocol.engine import IMPASSE, derive as derive_run, members_of

    steps = protocol.steps
    asked = ledger.header.extra.get("rounds", "").strip()
    cap = int(asked) if asked.isdigit() and int(asked) >= 1 else None  # discuss --rounds N
    members, fixed = members_of(steps, authority.participants)
    run = derive_run(ledger, personas, steps, members, fixed, carried, reviewed,
                     mode=ledger.header.extra.get("mode") or None, consensus=authority.consensus,
                     cap=cap, strategy=ledger.header.extra.get("strategy")
                     or ledger.header.extra.get("flow") or None,
                     tier=ledger.header.extra.get("tier") or None)
    members = run.members
    counts = ({"ACCEPT": 0, "REJECT": 0} if run.steps.outcome == "all_accept" else
              {"SUPPORT": 0, "STAND-ASIDE": 0, "BLOCK": 0} if run.steps.outcome == "consent"
              else {"READY": 0, "CHANGES": 0, "REJECT": 0})
    fallback = {"consent": "BLOCK"}.get(run.steps.outcome, "REJECT")
    for verdict in run.verdicts.values():
        counts[verdict if verdict in counts else fallback] += 1

    def names(aliases) -> list[str]:
        return [personas.get(a).name if personas.get(a) else a for a in aliases]

    if run.outcome == "READY":
        why = (f"all {len(members)} participants accepted the synthesis in round {run.round}"
               if run.steps.outcome == "all_accept" else
               _vote_line(run, counts, [], []) if run.steps.outcome in ("referee", "consent")
               else f"the closing vote after round {run.round}: {counts['READY']}/{len(members)} "
               "READY")
        return run, ConsensusResult(True, "READY", counts, [], [], why, advisory)
    if run.outcome == IMPASSE:
        against = names(a for a, v in run.verdicts.items() if v != "ACCEPT")
        return run, ConsensusResult(False, None, counts, against, [],
                                    f"impasse after {run.round} rounds ({', '.join(against)} "
                                    "rejected the last synthesis): a person decides", advisory)
    if run.outcome in ("REJECT", "CHANGES"):
        against = names(a for a, v in run.verdicts.items() if v != "READY")
        missing = names(a for a in members if a not in run.verdicts)
        reached = run.outcome == "REJECT"
        return run, ConsensusResult(reached, "REJECT" if reached else None, counts, against,
                                    missing, _vote_line(run, counts, against, missing),
                                    advisory)
    if run.deciding:
        from cascade.protocol.engine import question

        return run, ConsensusResult(False, None, counts, [], [],
                                    f"waiting for a person: {question(run)}", advisory)
    if run.pausing is not None:
        return run, ConsensusResult(False, None, counts, [], [],
                                    f"paused after round {run.pausing}: cascade run resumes it",
                                    advisory)
    step = run.step.title if run.step else "-"
    waiting = names(run.waiting)
    where = f"round {run.round}, step {step}" if run.setup_done else f"setup, step {step}"
    return run, ConsensusResult(False, None, counts, [], waiting, where, advisory)


def _vote_line(run, counts: dict[str, int], against: list[str], missing: list[str]) -> str:
    if run.steps.outcome == "referee":
        return f"the referee's verdict after round {run.round}: {run.outcome}"
    if run.steps.outcome == "consent":
        blocked = [a for a, v in run.verdicts.items() if v == "BLOCK"]
        return (f"no consent after round {run.round}: BLOCK from {', '.join(blocked)}"
                if blocked else f"consent after round {run.round}")
    tally = ", ".join(f"{n} {v}" for v, n in counts.items() if n) or "no votes"
    why = f"the closing vote after round {run.round}: {tally}"
    if against:
        why += f" (not READY: {', '.join(against)})"
    if missing:
        why += f" (no vote: {', '.join(missing)})"
    return why


def _latest_line(segment: list[Comment], author: str) -> int:
    return max((c.line for c in segment if c.author == author and c.vote is not None), default=0)


def _persona_vote_problem(c: Comment, persona, revision: str | None, reviewed: set[str],
                          ledger: Ledger, forged: bool, participants: set[str]) -> str | None:
    if forged:
        return verify(c) or "not written as a persona's turn"
    stamp = c.provenance
    if persona.alias not in participants:
        return "not a participant"
    if revision is not None and stamp.get("revision") not in reviewed:
        seen_rev = stamp.get("revision")
        return (f"it reviewed another revision ({seen_rev[:7]})" if seen_rev
                else "it records no revision of the document")
    seen = stamp.get("seen")
    if ledger.header.source and seen is None and revision is not None:
        return "it does not record how much of the document it saw"
    if seen is not None and seen != "all":
        return f"it saw only part of the document ({seen} characters)"
    return None


@dataclass
class Verdict:
    """The gate's decision on one governed document, as the hook, ``check`` and ``status``
    give it."""

    ok: bool
    reason: str  # one line
    kind: str  # ok | stale-revision | no-revision | no-consensus | rejected

    @property
    def blocked_by_votes(self) -> bool:
        return self.kind in ("no-consensus", "rejected")


def core_problem(state: State, doc: str | None, data: bytes) -> str | None:
    """When the ledger says the document's current text holds an earlier revision's review
    (same core: status, spacing or path changed only), whether ``data`` -- the text being
    committed -- really has that core. Hook and ``check`` both verify it."""
    if not state.carried_now:
        return None
    from cascade.docstatus import core

    return None if core(data) == state.core else changed_core(doc)


def changed_core(doc: str | None) -> str:
    return (f"the ledger says {doc} differs from the reviewed text only in its status, "
            "spacing or path, but its core differs: the review does not hold (commit it through "
            "the hook: it records a new revision and asks the panel)")


def gate(state: State, revision: str | None, doc: str | None,
         data: bytes | None = None) -> Verdict:
    """The verdict for a ledger whose document is at ``revision`` (its blob id; None: the
    ledger has no document; ``data``: its text, to verify a review carried over). The ledger
    must have recorded that revision, and be at consensus READY (or a person in force decided
    READY) for it."""
    problem = core_problem(state, doc, data) if data is not None else None
    if problem:
        return Verdict(False, problem, "changed-core")
    if revision is not None and state.source_revision != revision:
        if state.source_revision:
            return Verdict(False, f"the ledger reviewed another revision of {doc} "
                                  f"({state.source_revision[:7]}; this one is {revision[:7]})",
                           "stale-revision")
        return Verdict(False, f"the ledger records no revision of {doc} (this one is "
                              f"{revision[:7]})", "no-revision")
    result = state.result
    ignored = [d for d in state.decisions if not d.in_force and d.note
               and d.note != "superseded by a later decision"
               and d.note != "for another revision of the document"]
    tail = "".join(f"; {d.by}'s decision (line {d.line}) does not count: {d.note}"
                   for d in ignored)
    if result.reached and result.outcome == "READY":
        return Verdict(True, f"consensus READY ({result.reason})" if state.decision is None
                       else f"{result.reason}: {_gist(state.decision.reason)}", "ok")
    if result.reached:
        what = "the panel rejects" if state.decision is None else "decided against"
        return Verdict(False, f"consensus {result.outcome}: {what} {doc or 'this'} "
                              f"({result.reason}){tail}", "rejected")
    reason = result.reason
    if state.decision is not None:
        reason = f"{result.reason}: {_gist(state.decision.reason)}"
    elif result.missing:
        reason += f"; waiting for {', '.join(result.missing)}"
    return Verdict(False, reason + tail, "no-consensus")


def _gist(text: str, width: int = 60) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1].rstrip() + "…"
