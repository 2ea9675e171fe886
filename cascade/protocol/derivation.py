"""A discussion's state, derived from its log and the authority that governs it (the rule
that governs its document; only a ledger no rule governs falls back to its own header). Pure:
no files, no git, no model. The hook, ``cascade check`` and ``cascade status`` all read a
ledger through ``derive()`` and judge it with ``gate()``, so they cannot disagree. What
counts (a persona's vote, a person's, a decision) and why: docs/trust.md.
"""
from __future__ import annotations

import functools
from collections.abc import Mapping

import msgspec.structs

from cascade.ledger.consensus import ConsensusResult
from cascade.ledger.identity import same_person
from cascade.ledger.records import Comment, Event, Ledger
from cascade.ledger.provenance import Binding, Replays, ledger_id, verify
from cascade.protocol.authority import Authority
from cascade.protocol.ballot import Ballot, Tally, result_of, with_people
from cascade.protocol.ballot import counted as counted_by_rule
from cascade.protocol.behaviours import Ruling
from cascade.protocol.decisions import decided, in_force
from cascade.protocol.state import (STATUS_OF, Decision, Discounted, Failure, State,
                                      Unfounded, conclusion)
from cascade.protocol.engine import derive as derive_run
from cascade.protocol.engine import members_of, question
from cascade.protocol.events import EventChecks
from cascade.protocol.finding_life import Stray, numbered, overridden
from cascade.protocol.findings import counted
from cascade.protocol.options import Options
from cascade.protocol.panel import panel_of
from cascade.protocol.runstate import Basis, Run


def derive(ledger: Ledger, authority: Authority, personas, protocol,
           authors: Mapping[int, str] | None = None) -> State:
    """The state of a ledger under an authority.

    ``personas``: the registry (``of_author``, ``get``); ``protocol``: the authority's
    protocol (its first phase, for a ledger whose header names none; which phases take votes).
    ``authors``: the git identity of the commit that added each line that matters
    (``State.claims``), when the caller knows it (``check``, the hook): a decision, and a
    person's vote that counts toward ``human_required``, counts only when its line was added
    by that person. None: names are taken as written.

    No event is taken on trust (cascade.protocol.events): one that does not hold is ignored
    and listed in ``State.unfounded``. A copy of a stamped block does not count either.
    """
    return derivation(ledger, authority, personas, protocol, authors).finish()


def derivation(ledger: Ledger, authority: Authority, personas, protocol,
               authors: Mapping[int, str] | None = None) -> _Walk:
    """``derive``, kept open: the walk over ``ledger``'s entries, to be fed the same ledger
    grown by appends (``feed``) and finished at any point (``finish``, as often as needed) --
    the state it gives is ``derive``'s for the whole, without walking again what it took."""
    walk = _Walk(ledger, authority, personas, protocol, authors)
    walk.feed(ledger)
    return walk


class _Walk(EventChecks):
    """The walk of one ledger's entries, in order, for ``derive`` (the checks of its events:
    cascade.protocol.events)."""

    def __init__(self, ledger: Ledger, authority: Authority, personas, protocol,
                 authors: Mapping[int, str] | None) -> None:
        self.ledger, self.authority, self.authors = ledger, authority, authors
        self.personas, self.protocol = personas, protocol
        self.steps = protocol.steps
        self.participants = {a.lower() for a in authority.participants}
        self.binding = Binding(ledger_id(ledger.header))  # its stamps name it
        if self.steps.generated:  # the panel's experts vote
            panel = panel_of(ledger.entries, self.binding.identity)
            self.participants |= set(panel.aliases) if panel is not None else set()
        self.phase = ledger.header.phase or protocol.first_phase
        self.status = (ledger.header.status or "OPEN").upper()
        self.revision: str | None = None
        self.reviewed: set[str] = set()  # revisions whose review holds for the current one
        self.cores: dict[str, str] = {}  # revision -> the core its event recorded
        # revision -> (segment, reviewed, status, failures) as it was left
        self.earlier: dict[str, tuple[list[Comment], set[str], str, dict[str, Failure]]] = {}
        self.carried: set[int] = set()
        self.carried_now = False
        self.segment: list[Comment] = []
        self.decisions: list[Decision] = []
        self.forged: list[Discounted] = []
        self.verified: set[int] = set()  # lines of the persona blocks whose stamp verifies
        self.unfounded: list[Unfounded] = []
        self.ignored: set[int] = set()
        self.failures: dict[str, Failure] = {}  # persona alias -> its failure for the revision
        self.replays = Replays()
        self.fresh = False  # the last entry taken is a new revision: a vote reset may follow
        self.switched = False  # the last entry taken changed the protocol (SETTINGS)
        self.round = 1  # the round under way since the last new revision (round 1: at once)
        self.opened = False  # round 1 was announced (a round with a phase to record)
        self.claims: set[int] = set()
        self.path = ledger.header.source  # the document's path, as last recorded
        self.taken = 0  # entries walked
        self._tallied: Tally | None = None  # the votes of the segment, as last counted

    def feed(self, ledger: Ledger) -> None:
        """Walk the entries of ``ledger`` after those taken: ``ledger`` is the one the walk
        began with, grown by appends (the entries taken are its first ones)."""
        self.ledger = ledger
        entries = ledger.entries
        for index, entry in enumerate(entries[self.taken:], self.taken):
            if isinstance(entry, Event):
                self.event(index, entry)
            else:
                self.comment(entry)
        self.taken = len(entries)

    # ---- entries ------------------------------------------------------------------------------

    def comment(self, entry: Comment) -> None:
        copy = self.replays.copy_of(entry)
        persona = self.personas.of_author(entry.author)
        if copy is not None:
            self.ignored.add(entry.line)
            if persona is not None or entry.origin == "decision":
                self.forged.append(Discounted(entry.author, entry.line, f"a copy of the block "
                                              f"at line {copy}: it does not count", True))
            return
        self.fresh = self.switched = False
        if persona is not None:
            problem = self.binding.check(entry)
            if problem or entry.origin != "ai" or entry.author != persona.name:
                self.forged.append(Discounted(entry.author, entry.line,
                                              problem or "not written as a persona's turn", True))
            else:
                self.verified.add(entry.line)
                if entry.provenance.get("revision") in (self.revision, None):
                    self.failures.pop(persona.alias, None)  # it answered
        if entry.origin == "decision" and persona is None:
            problem = self.binding.check(entry)
            if entry.line in self.binding.refused:  # a copy from another ledger: named
                self.forged.append(Discounted(entry.author, entry.line, problem, True))
            p = entry.provenance
            reason = entry.body.split("\n\n", 1)[-1]
            self.decisions.append(Decision(entry.author, p.get("by", entry.author),
                                           p.get("vote", ""), reason, entry.line,
                                           p.get("revision"), note=problem or ""))
            self.claims.add(entry.line)
            return
        if persona is None:  # a person's waiver of a finding counts like a decision: by whom
            self.claims.update(m.line for m in entry.markers if m.kind == "WAIVE")
        self.segment.append(entry)

    # ---- the verdict ----------------------------------------------------------------------------

    def verdict_at(self, index: int) -> tuple[Decision | None, ConsensusResult, Run | None]:
        """The decision in force and the consensus the entries before ``index`` reach; for a
        step protocol, the run they derive when the votes decide it (no decision in force, no
        participant blocking), else None."""
        ballot, _, advisory, discounted, _ = self._count()
        decision, _ = in_force(self.decisions, self.revision, self.reviewed, self.authority,
                                self.authors)
        if not self.steps.phased:
            prefix = msgspec.structs.replace(self.ledger, entries=self.ledger.entries[:index])
            run, result = self._step_result(prefix, self.carried, {},
                                            self.reviewed if self.revision else None)
        else:
            run, result = None, self._panel(self._counted(ballot), ballot, advisory, discounted)
        result = with_people(result, ballot, self.authority.consensus)
        if decision is not None:
            return decision, decided(decision, result), None
        shown = self._blocked(result, decision)
        return decision, shown, run if shown is result else None

    def _counted(self, ballot: Ballot) -> Ruling | None:
        """A protocol of phases: the ballot counted by its outcome rule (None: the phase
        takes no votes)."""
        return counted_by_rule(self.steps, ballot, self.authority.consensus) \
            if self.protocol.votes_count_in(self.phase) else None

    def _tally(self) -> Tally:
        """The votes of the current segment, counted on from the last count when the
        segment has only grown since, for the same revision."""
        t = self._tallied
        if t is None or t.segment is not self.segment or t.reviewed is not self.reviewed \
                or t.revision != self.revision:
            t = self._tallied = Tally(self.segment, self.reviewed, self.revision)
        t.forged.update(d.line for d in self.forged[t.forged_seen:])
        t.forged_seen = len(self.forged)
        votes, advisory, discounted, forged_lines = t.votes, t.advisory, t.discounted, t.forged
        for c in self.segment[t.counted:]:
            if c.vote is None:
                if c.provenance.get("cut") and c.line not in forged_lines:
                    # A reply over its budget was cut and its vote dropped: the persona's
                    # earlier vote is no longer its word either (fail closed).
                    cut = self.personas.of_author(c.author)
                    if cut is not None and votes.pop(cut.name, None) is not None:
                        discounted.append(Discounted(cut.name, c.line, "its latest reply was cut"
                                                     " (over the reply budget): no vote counts"))
                continue
            t.latest[c.author] = c.line
            persona = self.personas.of_author(c.author)
            if persona is None:  # a person
                votes.pop(c.author, None)
                votes[c.author] = c.vote
                t.cast[c.author] = c.line
                continue
            if not persona.votes:
                continue  # background personas never vote
            reason = self._vote_problem(c, persona, c.line in forged_lines)
            if reason == "not a participant":
                advisory[persona.name] = c.vote
                discounted.append(Discounted(persona.name, c.line, f"{persona.alias} is not a "
                                             f"participant of {self.authority.where}"))
                continue
            if reason:
                discounted.append(Discounted(persona.name, c.line, reason,
                                             c.line in forged_lines))
                continue
            votes.pop(persona.name, None)
            weighed = counted(c.vote, c.provenance, self.authority.policy)  # its findings
            t.weighed.pop(persona.name, None)
            t.weighed.update({persona.name: weighed.why} if weighed.why else {})
            advisory.pop(persona.name, None)
            (advisory if weighed.advisory else votes)[persona.name] = weighed.vote
        t.counted = len(self.segment)
        return t

    def _count(self, claims: set[int] | None = None):
        """Votes of the current segment: each voter's latest vote that counts, as the ballot
        the outcome rule and the rule's settings about people count (cascade.protocol.ballot).
        The lines whose author matters go to ``claims`` (default: the walk's)."""
        t = self._tally()
        votes, advisory, cast = dict(t.votes), dict(t.advisory), t.cast
        # A discounted block only matters if no later valid vote of that persona replaced it.
        discounted = [d for d in t.discounted
                      if not (d.author in votes and t.latest.get(d.author, 0) != d.line)]
        voters = [p for a in self.authority.participants
                  if (p := self.personas.get(a)) is not None and p.votes
                  and not (p.name in advisory and p.name in t.weighed)]  # advisory: spoke
        people = [n for n in votes if self.personas.of_author(n) is None]
        if self.authority.consensus.human_required:
            (self.claims if claims is None else claims).update(cast[n] for n in people)
        if self.authority.consensus.advisory:
            advisory.update({n: v for n, v in votes.items() if n not in people})
        ballot = Ballot(votes, frozenset(people),
                        frozenset(n for n in people if self._by_them(cast[n], n)),
                        tuple(p.name for p in voters))
        return ballot, votes, advisory, discounted, [p.name for p in voters]

    def _panel(self, verdict: Ruling | None, ballot: Ballot, advisory: dict[str, str],
               discounted: list[Discounted]) -> ConsensusResult:
        """A protocol of phases: its outcome rule's verdict over the ballot (None: the phase
        takes no votes; they are counted to be shown, and close nothing)."""
        if verdict is None:
            after = self.protocol.next_phase(self.phase)
            shown = result_of(counted_by_rule(self.steps, ballot, self.authority.consensus),
                              advisory)
            why = f"phase {self.phase} does not take votes" + (f"; advance to {after}"
                                                                if after else "")
            return msgspec.structs.replace(shown, reached=False, outcome=None, reason=why)
        result = result_of(verdict, advisory)
        notes = "; ".join(f"{d.author}'s vote (line {d.line}) does not count: {d.reason}"
                          for d in discounted if d.author in result.missing)
        if notes and not self.authority.consensus.advisory:
            result.reason += f" ({notes})"
        return result

    def _by_them(self, line: int, name: str) -> bool:
        if self.authors is None:
            return True
        author = self.authors.get(line)
        return author is not None and same_person(name, author)

    def _blocked(self, result: ConsensusResult, decision: Decision | None) -> ConsensusResult:
        """A participant that did not answer for the revision blocks until it does, or a
        person decides: READY is never reached over it."""
        failing = [f for f in self.failures.values()
                   if f.revision == self.revision or self.revision is None]
        if decision is not None or not failing or (result.reached and result.outcome != "READY"):
            return result
        names = "; ".join(f"{f.author} did not answer for this revision ({f.reason}, line "
                          f"{f.line})" for f in failing)
        return ConsensusResult(False, None, result.counts, [f.author for f in failing],
                               result.missing, f"{names}: commit again to ask again, or a "
                               "person decides", result.advisory)

    def finish(self) -> State:
        """The state of the entries taken. The walk is left as it was (it may be fed more):
        what the state holds is its own."""
        claims = set(self.claims)
        carried = set(self.carried)
        ballot, votes, advisory, discounted, expected = self._count(claims)
        decisions = [msgspec.structs.replace(d) for d in self.decisions]
        decision, notes = in_force(decisions, self.revision, self.reviewed,
                                    self.authority, self.authors)
        reviewed = self.reviewed if self.revision is not None else None
        if not self.steps.phased:
            run, result = self._step_result(self.ledger, carried, advisory, reviewed)
        else:  # its run (who is due) is derived when first read: its verdict needs none
            ledger = msgspec.structs.replace(self.ledger, entries=list(self.ledger.entries))
            run = functools.partial(derive_run, ledger, self.steps, self._basis(
                ledger, carried, reviewed, decision is not None, ballot))
            result = self._panel(self._counted(ballot), ballot, advisory, discounted)
        result = with_people(result, ballot, self.authority.consensus)
        for d in decisions:
            if not d.note and d.line in notes:
                d.note = notes[d.line]
            d.in_force = d is decision
        # what it came to: a decision in force supersedes what the rounds reached (an impasse)
        reached = None if self.steps.phased else run
        if decision is not None:
            concluded = conclusion(decision, result, reached)
            result = decided(decision, result, concluded.why)
        result = self._blocked(result, decision)
        if decision is None:
            concluded = conclusion(None, result, reached)
        failing = [f for f in self.failures.values() if f.revision == self.revision]
        status = self.status
        # It is the status too, over the outcome recorded. (A protocol of phases moves on
        # from a decision in an earlier phase: its outcome is recorded when it closes.)
        if decision is not None and (status != "OPEN" or not self.steps.phased):
            status = STATUS_OF.get(decision.vote, decision.vote)
        strays: list[Stray] = []
        found = overridden(numbered(
            [c for c in self.ledger.comments if c.line not in self.ignored],
            self.authority.deciders, lambda name: self.personas.of_author(name) is None,
            self.authors, strays, trusted=self.verified),
            decision)
        return State(self.phase, status, self.revision, votes, advisory, expected,
                     discounted, list(self.forged), decisions, decision, result,
                     list(self.segment), carried, self.cores.get(self.revision or ""),
                     self.carried_now, run, list(self.unfounded), frozenset(self.ignored),
                     failing, frozenset(claims), dict(self._tally().weighed), found, strays,
                     self._awaited(decision, result, votes, advisory, expected, failing),
                     self.authority.policy, concluded)

    def _awaited(self, decision, result: ConsensusResult, votes, advisory, expected,
                 failing) -> list[str]:
        """The participants not heard on the current revision: no counted reply for it, no
        failure recorded, and no person's decision in force over it. A protocol of phases:
        each voting participant without a vote; a step protocol: those its run waits for."""
        if decision is not None:
            return []
        if not self.steps.phased:
            return list(result.missing)
        failed = {f.author for f in failing}
        return [n for n in expected if n not in votes and n not in advisory and n not in failed]

    def _step_result(self, ledger: Ledger, carried: set[int], advisory: dict[str, str],
                     reviewed: set[str] | None):
        """A step protocol's verdict (cascade.protocol.engine): READY only from its own outcome
        rule over the turns cascade wrote for this text, explained by that rule; an impasse is
        never READY."""
        run = derive_run(ledger, self.steps, self._basis(ledger, carried, reviewed))
        verdict = run.verdict
        counts = dict(verdict.tally) if verdict is not None else {}
        for vote in run.closing.verdicts.values() if verdict is None else ():  # the round's so far
            counts[vote] = counts.get(vote, 0) + 1
        if verdict is not None and run.outcome is not None:  # the outcome rule explains it
            return run, result_of(verdict, advisory)
        waiting: list[str] = []
        if run.deciding:
            why = f"waiting for a person: {question(run)}"
        elif run.pauses.pausing is not None:
            why = f"paused after round {run.pauses.pausing}: cascade run resumes it"
        else:
            step = run.step.title if run.step else "-"
            why = f"round {run.round}, step {step}" if run.setup.done else f"setup, step {step}"
            waiting = [p.name if (p := self.personas.get(a)) else a for a in run.waiting]
        return run, ConsensusResult(False, None, counts, [], waiting, why, advisory)

    def _basis(self, ledger: Ledger, carried: set[int], reviewed: set[str] | None,
               decided: bool = False, ballot: Ballot | None = None) -> Basis:
        """What the run of ``ledger`` is derived on (cascade.protocol.runstate.Basis)."""
        members, fixed = members_of(self.steps, self.authority.participants)
        return Basis(self.personas, tuple(members), fixed, frozenset(carried),
                     frozenset(reviewed) if reviewed is not None else None,
                     Options.of_header(ledger.header.extra), self.authority.consensus,
                     frozenset(self.ignored), self.phase, decided, self.authority.policy,
                     frozenset(self.verified), ballot,
                     document=bool(self.path) or self.authority.rule is not None)

    def _vote_problem(self, c: Comment, persona, forged: bool) -> str | None:
        """Why a persona's vote does not count (None: it does): forged, not a participant, for
        another revision, or having seen only part of the document."""
        revision, reviewed, ledger = self.revision, self.reviewed, self.ledger
        if forged:
            why = self.binding.refused.get(c.line) or verify(c)
            return why or "not written as a persona's turn"
        stamp = c.provenance
        if persona.alias not in self.participants:
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
