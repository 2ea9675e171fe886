"""The checks of a ledger's events, as its walk meets them (cascade.protocol.derivation): no
event is taken on trust. Each is believed only when it carries the tool's stamp, written for
this ledger (cascade.ledger.provenance.Binding), is no copy of an earlier one, and what it
claims holds at its place in the ledger (each claim: docs/trust.md). An event that does not
hold is listed as unfounded and ignored; one that holds is applied to the walk."""
from __future__ import annotations

import re

from cascade.ledger.records import (
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
    Event,
)
from cascade.protocol.authority import header_settings_before
from cascade.protocol.state import STATUS_OF, Failure, Unfounded, block_id

_BLOB = re.compile(r"[0-9a-f]{1,64}\Z")  # a blob id
_OUTCOMES = ("READY", "REJECT", "CHANGES", "IMPASSE")
# an event's kind -> the method that checks (and applies) it
_CHECKS = {SOURCE_REVISION: "_source_revision", VOTE_RESET: "_vote_reset",
           PHASE_TRANSITION: "_phase_transition", OUTCOME: "_outcome", SETTINGS: "_settings",
           ROUND: "_round", FAILURE: "_failure", PERSONA: "_panel_part",
           TENSION: "_panel_part", PROBLEM: "_panel_part"}


class EventChecks:
    """The event half of the walk (cascade.protocol.derivation._Walk): its fields are the walk's,
    and ``verdict_at`` (what the votes before an entry reach) is the walk's own."""

    def event(self, index: int, entry: Event) -> None:
        copy = self.replays.copy_of(entry)
        problem = (f"a copy of the event at line {copy}" if copy is not None
                   else self.binding.check(entry))
        if problem is None:
            handler = _CHECKS.get(entry.kind)
            problem = getattr(self, handler)(index, entry) if handler else None
        if problem:
            self.unfounded.append(Unfounded(entry.kind, entry.line, problem))
            self.ignored.add(entry.line)
            return
        self.fresh = self.fresh if entry.kind == SOURCE_REVISION else False
        self.switched = self.switched if entry.kind == SETTINGS else False

    # Each handler checks what the event claims; None: it holds (and the event is applied).

    def _source_revision(self, index: int, e: Event) -> str | None:
        new = (e.value.split() or [""])[0]
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
            self.round, self.opened = 1, False
        if core:
            self.cores[new] = core
        self.fresh = not carried and self.revision is not None
        self.revision = new
        self.path = e.fields.get("path") or self.path
        return None

    def _vote_reset(self, index: int, e: Event) -> str | None:
        if not self.fresh:
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

    def _phase_transition(self, index: int, e: Event) -> str | None:
        to, frm = e.fields.get("to"), e.fields.get("from")
        order = self.protocol.phase_ids()
        if not to:
            return "it names no phase to enter"
        if to not in order:
            return f"{to} is not a phase of protocol {self.protocol.name}"
        if self.phase not in order or self.switched:  # a new protocol starts at its first phase
            if to != order[0]:
                return f"a change of protocol enters its first phase, {order[0]}, not {to}"
        elif frm is not None and frm != self.phase:
            return f"it leaves {frm}, but the discussion is in {self.phase}"
        elif order.index(to) <= order.index(self.phase):
            return f"it goes from {self.phase} to {to}: phases only go forward"
        elif problem := self._trigger(index, e.fields.get("trigger")):
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

    def _outcome(self, index: int, e: Event) -> str | None:
        word = (e.value.split() or [""])[0].upper()
        if word not in _OUTCOMES:
            return f"{word or 'nothing'} is not an outcome"
        decision, result, run = self.verdict_at(index)
        reached = result.outcome if result.reached else None
        if run is not None and run.outcome is not None:  # a step protocol's (verdict_at)
            reached = run.outcome
        if reached != word and not (decision is not None and decision.vote == word):
            return (f"the discussion does not reach {word} there ("
                    f"{result.reason or 'no consensus'})")
        self.status = STATUS_OF.get(word, word)
        return None

    def _settings(self, index: int, e: Event) -> str | None:
        # A governed ledger is decided by its rule, whatever it records: SETTINGS only says
        # what the rule was. A change of protocol lets the transition to its first phase follow.
        protocol = e.fields.get("protocol")
        self.switched = bool(protocol) and protocol != header_settings_before(self.ledger, e)
        return None

    def _round(self, index: int, e: Event) -> str | None:
        words = e.value.split()
        number = int(words[0]) if words and words[0].isdigit() else 0
        if number == 1 and self.round == 1 and not self.opened:
            self.opened = True  # round 1 begins with the revision, announced with its phase
            return None
        if number != self.round + 1:
            return f"round {words[0] if words else '?'} does not follow round {self.round}"
        self.round, self.opened = number, True
        return None

    def _failure(self, index: int, e: Event) -> str | None:
        alias = e.fields.get("alias", "")
        persona = self.personas.get(alias) if alias else None
        if persona is None or alias.lower() not in self.participants:
            return f"{alias or 'nobody'} is not a participant"
        if e.fields.get("revision") != self.revision:
            return "it is for another revision of the document"
        self.failures[alias] = Failure(persona.name, alias, e.line,
                                       e.fields.get("reason", "no answer"), self.revision)
        return None

    def _panel_part(self, index: int, e: Event) -> str | None:
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
