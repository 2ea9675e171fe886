"""A ledger's state, derived from its log alone, and the queries over it. It is derived once
per reading of the text: an append gives a new reading, and the derivation kept goes on from
the entries it had taken (appending costs what is appended, not what the ledger holds).
"""
from __future__ import annotations

from typing import Any

from cascade.base.errors import CascadeError
from cascade.ledger.consensus import ConsensusResult
from cascade.ledger.growing import continues
from cascade.ledger.ledger_file import LedgerFile
from cascade.ledger.ledger_view import LedgerView
from cascade.ledger.records import DRIFT_REVIEW, SOURCE_REVISION, Comment, Event, Ledger
from cascade.protocol.derivation import derivation
from cascade.protocol.findings import Finding
from cascade.protocol.ledger_setting import LedgerSetting
from cascade.protocol.state import State


class DerivedView(LedgerView):
    """One ledger's state: ``file`` read under ``ledger_setting``; ``authors``: who added the
    lines whose author matters (cascade.check.attribution; None: unknown, names are taken as
    written)."""

    def __init__(self, file: LedgerFile, ledger_setting: LedgerSetting,
                 authors: dict[int, str] | None = None) -> None:
        super().__init__(file)
        self.ledger_setting = ledger_setting
        self._authors = authors
        self._settled: Ledger | None = None  # the ledger last settled (LedgerSetting.settle)
        self._state: tuple[Ledger, State] | None = None  # the state, and the ledger it is of
        # the derivation, kept with what it was derived under: an append feeds it the new entries
        self._kept: tuple[Any, tuple[Any, ...], Any] | None = None

    @property
    def ledger(self) -> Ledger:
        """The text read, base and appends, its entries settled (LedgerSetting.settle)."""
        ledger = self.file.ledger
        if ledger is not self._settled:
            self.ledger_setting.settle(ledger)
            self._settled = ledger
        return ledger

    @property
    def state(self) -> State:
        ledger = self.ledger
        if self._state is None or self._state[0] is not ledger:
            self._state = (ledger, self._derive(ledger))
        return self._state[1]

    def _derive(self, ledger: Ledger) -> State:
        """The state, from the derivation kept when it was derived under the same authority,
        personas, protocol and authors from the entries ``ledger`` begins with (it takes
        the entries appended since), else from a new one."""
        under = self.ledger_setting
        inputs = (under.authority(ledger), under.personas(ledger), under.protocol(ledger),
                  self._authors)
        kept, entries = self._kept, ledger.entries
        if kept is not None and kept[1][0] == inputs[0] \
                and all(a is b for a, b in zip(kept[1][1:], inputs[1:])) \
                and continues(entries, kept[0].taken, kept[2]):
            walk = kept[0]
            walk.feed(ledger)
        else:
            walk = derivation(ledger, *inputs)
        self._kept = (walk, inputs, entries[-1] if entries else None)
        return walk.finish()

    @property
    def events(self) -> list[Event]:
        """The events derive believes (cascade.protocol.derivation): an event that does not
        hold, or a copy, is not among them (``ledger.events`` has every one)."""
        ignored = self.state.ignored
        return [e for e in self.ledger.events if e.line not in ignored]

    @property
    def phase(self) -> str:
        return self.state.phase

    @property
    def current_phase(self) -> str:
        """The phase the discussion is in; one its protocol does not have is an error."""
        phase = self.phase
        protocol = self.ledger_setting.protocol(self.ledger)
        if not protocol.has_phase(phase):
            raise CascadeError(f"phase {phase!r} is not in protocol {protocol.name!r} "
                               f"({', '.join(protocol.phase_ids())})", self.path)
        return phase

    @property
    def status(self) -> str:
        return self.state.status

    @property
    def source_revision(self) -> str | None:
        """The revision of the source document the ledger last recorded."""
        return self.state.source_revision

    def current_comments(self) -> list[Comment]:
        """Comments since the last phase transition or vote reset (and the ones it kept),
        decisions aside."""
        return list(self.state.current)

    def responses(self) -> list[Comment]:
        """The current comments that answer the discussion: not a table the tool wrote, nor
        a drift review (a later change's question, cascade.loop.driftreview)."""
        return [c for c in self.state.current if c.origin != "tool"
                and c.provenance.get("step") != DRIFT_REVIEW]

    @property
    def votes(self) -> dict[str, str]:
        """Each voter's latest vote that counts, in the current phase since the last reset."""
        return dict(self.state.votes)

    def expected_voters(self) -> list[str]:
        return list(self.state.expected)

    @property
    def consensus_result(self) -> ConsensusResult:
        return self.state.result

    def has_consensus(self) -> bool:
        return self.consensus_result.reached

    @property
    def decision(self):
        """The person's decision in force for the current revision, or None."""
        return self.state.decision

    @property
    def findings(self) -> list[Finding]:
        """Every finding, numbered F1, F2... in ledger order, with its status, as the state
        derives it (cascade.protocol.finding_life)."""
        return self.state.findings

    @property
    def source(self) -> str | None:
        """The document's path: the header's ``Source:``, or the path the last
        ``SOURCE-REVISION`` recorded (a renamed document's discussion follows it)."""
        moved = self._source_event()
        return moved.fields["path"] if moved is not None else self.header.source

    def _source_event(self) -> Event | None:
        if not self.header.source:
            return None
        last = next((e for e in reversed(self.events)
                     if e.kind == SOURCE_REVISION and e.fields.get("path")), None)
        return None if last is None or last.fields["path"] == self.header.source else last

    @property
    def source_line(self) -> int | None:
        """The line that names the document (the header's ``Source:`` field, or the
        revision event that recorded its new path), for messages about it."""
        moved = self._source_event()
        if moved is not None:
            return moved.line
        h = self.header
        if not h.source or not h.line:
            return None
        lines = self.text.split("\n")
        return next((number for number in range(h.line, max(h.end_line, h.line) + 1)
                     if "source:" in lines[number - 1].lower()), h.line)
