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
- a person's vote counts (people's names are not verified: see the threat model in
  docs/trust.md);
- a person's *decision* (``cascade decide``) for the current revision overrides the panel,
  when the authority lets that person decide.
"""
from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cascade.ledger.consensus import ConsensusResult, calculate_consensus
from cascade.ledger.identity import is_decider, same_person
from cascade.ledger.model import (
    FAILURE,
    OUTCOME,
    PERSONA,
    PHASE_TRANSITION,
    PROBLEM,
    ROUND,
    SETTINGS,
    SOURCE_REVISION,
    TENSION,
    VOTE_RESET,
    Comment,
    Event,
    Ledger,
)
from cascade.ledger.provenance import Replays, verify, verify_event
from cascade.protocol.authority import Authority, header_settings_before
from cascade.protocol.engine import derive as derive_run
from cascade.protocol.engine import members_of, question
from cascade.protocol.panel import panel_of
from cascade.protocol.runstate import Basis
from cascade.protocol.spec import Options

STATUS_OF = {"READY": "ACCEPTED", "REJECT": "REJECTED"}  # the status an outcome sets


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
class Unfounded:
    """An event ``derive`` does not believe (it is ignored), and why."""

    kind: str
    line: int
    reason: str

    def as_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "line": self.line, "reason": self.reason}


@dataclass
class Failure:
    """A participant asked for a revision that did not answer (``FAILURE`` event)."""

    author: str
    alias: str
    line: int
    reason: str
    revision: str | None

    def as_dict(self) -> dict[str, object]:
        return {"author": self.author, "line": self.line, "reason": self.reason,
                "revision": self.revision}


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
    unfounded: list[Unfounded] = field(default_factory=list)  # events not believed
    ignored: frozenset[int] = frozenset()  # lines of unfounded events and copied blocks
    failures: list[Failure] = field(default_factory=list)  # no answer for this revision: blocks
    claims: frozenset[int] = frozenset()  # lines whose author matters (decisions, people's votes)


def block_id(c: Comment) -> str:
    """A short content id for a person's block, for ``VOTE-RESET keep=``."""
    raw = f"{c.author}\n{c.vote}\n{c.body}".encode("utf-8", "surrogatepass")
    return hashlib.sha256(raw).hexdigest()[:12]


def derive(ledger: Ledger, authority: Authority, personas, protocol,
           authors: Mapping[int, str] | None = None) -> State:
    """The state of a ledger under an authority.

    ``personas``: the registry (``of_author``, ``get``); ``protocol``: the authority's
    protocol (its first phase, for a ledger whose header names none; which phases take votes).
    ``authors``: the git identity of the commit that added each line that matters
    (``State.claims``), when the caller knows it (``check``, the hook): a decision, and a
    person's vote that counts toward ``human_required``, counts only when its line was added
    by that person. None: names are taken as written.

    No event is taken on trust: each is believed only when it carries the tool's stamp, is no
    copy of an earlier one, and what it claims holds at its place in the ledger (a vote reset
    right after a new revision of the document, keeping people's votes only; a phase
    transition only forward; an outcome where the votes reach it; ...). Others are ignored
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


_BLOB = re.compile(r"[0-9a-f]{1,64}\Z")  # a blob id
_OUTCOMES = ("READY", "REJECT", "CHANGES", "IMPASSE")


class _Walk:
    """The walk of one ledger's entries, in order, for ``derive``."""

    def __init__(self, ledger: Ledger, authority: Authority, personas, protocol,
                 authors: Mapping[int, str] | None) -> None:
        self.ledger, self.authority, self.personas, self.protocol = (ledger, authority, personas,
                                                                      protocol)
        self.authors = authors
        self.steps = protocol.stepped
        self.participants = {a.lower() for a in authority.participants}
        if self.steps is not None and self.steps.generated:  # the panel's experts vote
            panel = panel_of(ledger.entries)
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
        self.unfounded: list[Unfounded] = []
        self.ignored: set[int] = set()
        self.failures: dict[str, Failure] = {}  # persona alias -> its failure for the revision
        self.replays = Replays()
        self.fresh = False  # the last entry taken is a new revision: a vote reset may follow
        self.switched = False  # the last entry taken changed the protocol (SETTINGS)
        self.round = 1  # the round under way since the last new revision (round 1: at once)
        self.claims: set[int] = set()
        self.path = ledger.header.source  # the document's path, as last recorded
        self.taken = 0  # entries walked
        self._tallied: _Tally | None = None  # the votes of the segment, as last counted

    def feed(self, ledger: Ledger) -> None:
        """Walk the entries of ``ledger`` after those taken: ``ledger`` is the one the walk
        began with, grown by appends (the entries taken are its first ones)."""
        self.ledger = ledger
        entries = ledger.entries
        for index in range(self.taken, len(entries)):
            entry = entries[index]
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
            problem = verify(entry)
            if problem or entry.origin != "ai" or entry.author != persona.name:
                self.forged.append(Discounted(entry.author, entry.line,
                                              problem or "not written as a persona's turn", True))
            elif entry.provenance.get("revision") in (self.revision, None):
                self.failures.pop(persona.alias, None)  # it answered
        if entry.origin == "decision" and persona is None:
            problem = verify(entry)
            p = entry.provenance
            reason = entry.body.split("\n\n", 1)[1] if "\n\n" in entry.body else entry.body
            self.decisions.append(Decision(entry.author, p.get("by", entry.author),
                                           p.get("vote", ""), reason, entry.line,
                                           p.get("revision"), note=problem or ""))
            self.claims.add(entry.line)
            return
        self.segment.append(entry)

    def event(self, index: int, entry: Event) -> None:
        copy = self.replays.copy_of(entry)
        fresh, switched = self.fresh, self.switched
        problem = (f"a copy of the event at line {copy}" if copy is not None
                   else verify_event(entry))
        if problem is None:
            handler = _CHECKS.get(entry.kind)
            problem = handler(self, index, entry, fresh, switched) if handler else None
        if problem:
            self.unfounded.append(Unfounded(entry.kind, entry.line, problem))
            self.ignored.add(entry.line)
            return
        self.fresh = self.fresh if entry.kind == SOURCE_REVISION else False
        self.switched = self.switched if entry.kind == SETTINGS else False

    # Each handler checks what the event claims; None: it holds (and the event is applied).

    def _source_revision(self, index: int, e: Event, fresh: bool, switched: bool) -> str | None:
        words = e.value.split()
        new = words[0] if words else ""
        if not _BLOB.match(new):
            return "it names no revision of the document"
        same, core = e.fields.get("same-as"), e.fields.get("core")
        carried = bool(same) and (same == new or bool(core) and self.cores.get(same) == core)
        if not carried and new == self.revision and self.cores.get(new) == core \
                and e.fields.get("path") in (None, self.path):
            return "it records again the revision already recorded"
        if self.revision is not None:
            self.earlier[self.revision] = (list(self.segment), set(self.reviewed), self.status,
                                           dict(self.failures))
        if carried:
            # The document differs from a revision this ledger recorded only in its status,
            # spacing or path (the same core): that revision's review holds.
            if same != self.revision and same in self.earlier:  # back to an earlier text
                segment, reviewed, status, failures = self.earlier[same]  # type: ignore[index]
                self.segment, self.reviewed = list(segment), set(reviewed)
                self.status, self.failures = status, dict(failures)
            self.reviewed = self.reviewed | {new}
            self.carried.add(e.line)
            self.carried_now = True
        else:
            self.carried_now = False
            self.reviewed = {new}
            self.status = "OPEN"
            self.failures = {}
            self.round = 1
        if core:
            self.cores[new] = core
        self.fresh = not carried and self.revision is not None
        self.revision = new
        self.path = e.fields.get("path") or self.path
        return None


    def _vote_reset(self, index: int, e: Event, fresh: bool, switched: bool) -> str | None:
        if not fresh:
            return ("a vote reset is written only right after a new revision of the document, "
                    "and none precedes it")
        keep = [k for k in e.fields.get("keep", "").split(",") if k]
        people = {block_id(c): c for c in self.segment
                  if c.vote and c.origin is None and self.personas.of_author(c.author) is None}
        self.segment = [c for k, c in people.items() if k in keep]
        others = [k for k in keep if k not in people]
        if others:  # the reset stands; what it may not keep is not kept (fail closed)
            self.unfounded.append(Unfounded(e.kind, e.line, f"keep= names {len(others)} block(s) "
                                            "that are not a person's vote of this revision: "
                                            "not kept"))
        return None

    def _phase_transition(self, index: int, e: Event, fresh: bool, switched: bool) -> str | None:
        to, frm = e.fields.get("to"), e.fields.get("from")
        order = self.protocol.phase_ids()
        if not to:
            return "it names no phase to enter"
        if to not in order:
            return f"{to} is not a phase of protocol {self.protocol.name}"
        if self.phase not in order or switched:  # a change of protocol starts at its first phase
            if to != order[0]:
                return f"a change of protocol enters its first phase, {order[0]}, not {to}"
        elif frm is not None and frm != self.phase:
            return f"it leaves {frm}, but the discussion is in {self.phase}"
        elif order.index(to) <= order.index(self.phase):
            return f"it goes from {self.phase} to {to}: phases only go forward"
        else:
            problem = self._trigger(index, e.fields.get("trigger"))
            if problem:
                return problem
        self.phase = to
        self.segment = []
        return None

    def _trigger(self, index: int, trigger: str | None) -> str | None:
        """An automatic transition names its trigger: it must hold where it was written."""
        if trigger is None or trigger == "all_mentioned_responded":
            return None  # a person's advance, or the wave that was asked all answered
        if trigger == "consensus":
            result = self.verdict_at(index)[1]
            return None if result.reached else "its trigger, consensus, does not hold there"
        if trigger == "all_responded":
            spoke = {c.author for c in self.segment}
            missing = [p.name for a in self.authority.participants
                       if (p := self.personas.get(a)) is not None and p.votes
                       and p.name not in spoke]
            return f"its trigger, all_responded, does not hold: {', '.join(missing)} did " \
                   "not respond" if missing else None
        return f"unknown trigger {trigger}"

    def _outcome(self, index: int, e: Event, fresh: bool, switched: bool) -> str | None:
        words = e.value.split()
        word = words[0].upper() if words else ""
        if word not in _OUTCOMES:
            return f"{word or 'nothing'} is not an outcome"
        decision, result = self.verdict_at(index)
        reached = result.outcome if result.reached else None
        run = getattr(result, "run", None)
        if run is not None and run.outcome is not None:
            reached = run.outcome
        if reached != word and not (decision is not None and decision.vote == word):
            return (f"the discussion does not reach {word} there ("
                    f"{result.reason or 'no consensus'})")
        self.status = STATUS_OF.get(word, word)
        return None

    def _settings(self, index: int, e: Event, fresh: bool, switched: bool) -> str | None:
        # A governed ledger is decided by its rule, whatever it records: SETTINGS only says
        # what the rule was. A change of protocol lets the transition to its first phase follow.
        protocol = e.fields.get("protocol")
        self.switched = bool(protocol) and protocol != header_settings_before(self.ledger, e)
        return None

    def _round(self, index: int, e: Event, fresh: bool, switched: bool) -> str | None:
        words = e.value.split()
        number = int(words[0]) if words and words[0].isdigit() else 0
        if number != self.round + 1:  # round 1 begins with the revision, unannounced
            return f"round {words[0] if words else '?'} does not follow round {self.round}"
        self.round = number
        return None

    def _failure(self, index: int, e: Event, fresh: bool, switched: bool) -> str | None:
        alias = e.fields.get("alias", "")
        persona = self.personas.get(alias) if alias else None
        if persona is None or alias.lower() not in self.participants:
            return f"{alias or 'nobody'} is not a participant"
        if e.fields.get("revision") != self.revision:
            return "it is for another revision of the document"
        self.failures[alias] = Failure(persona.name, alias, e.line,
                                       e.fields.get("reason", "no answer"), self.revision)
        return None

    def _panel_part(self, index: int, e: Event, fresh: bool, switched: bool) -> str | None:
        """A generated panel's events follow the turn that proposed them, together."""
        for before in reversed(self.ledger.entries[:index]):
            if before.line in self.ignored:
                continue
            if isinstance(before, Event):
                if before.kind in (PERSONA, TENSION, PROBLEM):
                    return None
                break
            return None if before.origin == "ai" and "panel" in before.provenance else \
                "it does not follow the turn that proposed the panel"
        return "it does not follow the turn that proposed the panel"

    # ---- the verdict ----------------------------------------------------------------------------

    def verdict_at(self, index: int) -> tuple[Decision | None, ConsensusResult]:
        """The decision in force and the consensus the entries before ``index`` reach."""
        result, _, _, _, _ = self._count()
        decision, _ = _in_force(self.decisions, self.revision, self.reviewed, self.authority,
                                self.authors)
        if self.steps is not None:
            prefix = dataclasses.replace(self.ledger, entries=self.ledger.entries[:index])
            run, result = self._step_result(prefix, self.carried, {},
                                            self.reviewed if self.revision else None)
            result.run = run  # type: ignore[attr-defined]
        elif not self._voting():
            result.reached, result.outcome = False, None
        if decision is not None:
            result = _decided(decision, result)
        return decision, self._blocked(result, decision)

    def _voting(self) -> bool:
        return self.protocol.votes_count_in(self.phase)

    def _tally(self) -> _Tally:
        """The votes of the current segment, counted on from the last count when the
        segment has only grown since, for the same revision."""
        t = self._tallied
        if t is None or t.segment is not self.segment or t.reviewed is not self.reviewed \
                or t.revision != self.revision:
            t = self._tallied = _Tally(self.segment, self.reviewed, self.revision)
        t.forged.update(d.line for d in self.forged[t.forged_seen:])
        t.forged_seen = len(self.forged)
        votes, advisory, discounted, forged_lines = t.votes, t.advisory, t.discounted, t.forged
        for c in self.segment[t.counted:]:
            if c.vote is not None:
                t.latest[c.author] = c.line
            if c.vote is None:
                if c.provenance.get("cut") and c.line not in forged_lines:
                    # A reply over its budget was cut and its vote dropped: the persona's
                    # earlier vote is no longer its word either (fail closed).
                    cut = self.personas.of_author(c.author)
                    if cut is not None and votes.pop(cut.name, None) is not None:
                        discounted.append(Discounted(cut.name, c.line, "its latest reply was cut"
                                                     " (over the reply budget): no vote counts"))
                continue
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
            votes[persona.name] = c.vote
        t.counted = len(self.segment)
        return t

    def _count(self, claims: set[int] | None = None):
        """Votes of the current segment: each voter's latest vote that counts. The lines whose
        author matters go to ``claims`` (default: the walk's)."""
        t = self._tally()
        votes, advisory, cast = dict(t.votes), dict(t.advisory), t.cast
        # A discounted block only matters if no later valid vote of that persona replaced it.
        discounted = [d for d in t.discounted
                      if not (d.author in votes and t.latest.get(d.author, 0) != d.line)]
        expected = [p.name for a in self.authority.participants
                    if (p := self.personas.get(a)) is not None and p.votes]
        config = self.authority.consensus
        humans = [n for n in votes if self.personas.of_author(n) is None]
        if config.human_required:
            (self.claims if claims is None else claims).update(cast[n] for n in humans)
            humans = [n for n in humans if self._by_them(cast[n], n)]
        if config.advisory:
            counted = {n: v for n, v in votes.items() if self.personas.of_author(n) is None}
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
        if config.human_required and not result.reached and \
                result.reason == "a human READY vote is required":
            added = [n for n in votes if self.personas.of_author(n) is None and n not in humans
                     and votes[n] == "READY"]
            if added:
                result.reason += (f" ({', '.join(added)}'s READY was added in a commit by "
                                  "someone else)")
        result.advisory = advisory
        return result, votes, advisory, discounted, expected

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
        result, votes, advisory, discounted, expected = self._count(claims)
        run = None
        if self.steps is not None:
            run, result = self._step_result(self.ledger, carried, advisory,
                                            self.reviewed if self.revision is not None else None)
        if not self._voting() and run is None:
            after = self.protocol.next_phase(self.phase)
            result.reached = False
            result.outcome = None
            result.reason = f"phase {self.phase} does not take votes" + (
                f"; advance to {after}" if after else "")
        decisions = [dataclasses.replace(d) for d in self.decisions]
        decision, notes = _in_force(decisions, self.revision, self.reviewed,
                                    self.authority, self.authors)
        for d in decisions:
            if not d.note and d.line in notes:
                d.note = notes[d.line]
            d.in_force = d is decision
        if decision is not None:
            result = _decided(decision, result)
        result = self._blocked(result, decision)
        failing = [f for f in self.failures.values() if f.revision == self.revision]
        return State(self.phase, self.status, self.revision, votes, advisory, expected,
                     discounted, list(self.forged), decisions, decision, result,
                     list(self.segment), carried, self.cores.get(self.revision or ""),
                     self.carried_now, run, list(self.unfounded), frozenset(self.ignored),
                     failing, frozenset(claims))

    def _step_result(self, ledger: Ledger, carried: set[int], advisory: dict[str, str],
                     reviewed: set[str] | None):
        """A step protocol's verdict (cascade.protocol.engine): READY only from its own outcome
        rule over the turns cascade wrote for this text, explained by that rule; an impasse is
        never READY."""
        personas, steps, authority = self.personas, self.protocol.stepped, self.authority
        members, fixed = members_of(steps, authority.participants)
        run = derive_run(ledger, steps, Basis(
            personas, tuple(members), fixed, frozenset(carried),
            frozenset(reviewed) if reviewed is not None else None,
            Options.of_header(ledger.header.extra), authority.consensus, frozenset(self.ignored)))
        verdict = run.verdict
        counts = dict(verdict.tally) if verdict is not None else {}
        for vote in run.verdicts.values() if verdict is None else ():  # the round's so far
            counts[vote] = counts.get(vote, 0) + 1
        if verdict is not None and run.outcome is not None:  # the outcome rule explains it
            reached = run.outcome in ("READY", "REJECT")
            return run, ConsensusResult(reached, run.outcome if reached else None, counts,
                                        list(verdict.against), list(verdict.missing), verdict.why,
                                        advisory)

        def names(aliases) -> list[str]:
            return [personas.get(a).name if personas.get(a) else a for a in aliases]

        if run.deciding:
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

    def _vote_problem(self, c: Comment, persona, forged: bool) -> str | None:
        """Why a persona's vote does not count (None: it does): forged, not a participant, for
        another revision, or having seen only part of the document."""
        revision, reviewed, ledger = self.revision, self.reviewed, self.ledger
        if forged:
            return verify(c) or "not written as a persona's turn"
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


class _Tally:
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
        self.forged_seen = 0


# What each kind of event must hold to be believed (and, when it does, its effect); a kind
# not listed (NEXT: an answer like a person's) needs only the tool's stamp.
_CHECKS = {
    SOURCE_REVISION: _Walk._source_revision,
    VOTE_RESET: _Walk._vote_reset,
    PHASE_TRANSITION: _Walk._phase_transition,
    OUTCOME: _Walk._outcome,
    SETTINGS: _Walk._settings,
    ROUND: _Walk._round,
    FAILURE: _Walk._failure,
    PERSONA: _Walk._panel_part,
    TENSION: _Walk._panel_part,
    PROBLEM: _Walk._panel_part,
}


def _in_force(decisions: list[Decision], revision: str | None, reviewed: set[str],
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


def _decided(decision: Decision, result: ConsensusResult) -> ConsensusResult:
    verdict = {"READY": (True, "READY"), "REJECT": (True, "REJECT")}.get(decision.vote,
                                                                       (False, None))
    out = ConsensusResult(verdict[0], verdict[1], result.counts, [], result.missing,
                          f"decided {decision.vote} by {decision.by}", result.advisory)
    out.decided = True  # type: ignore[attr-defined]
    return out
