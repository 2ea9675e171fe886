"""The Python API over one ledger (seed 002): load or create, read state, append, save.

State is always derived from the log; the file only ever grows (cascade.ledger.ledger_file:
its reading, appends and atomic save). The state's derivation goes on from the entries it
had taken (cascade.protocol.derivation.derivation): appending costs what is appended, not
what the ledger holds. (Over 400 lines: the one API over a ledger -- load, create, read,
append, save -- whose state is derived in cascade.protocol.derivation and whose markers are
read in cascade.ledger.items.)
"""
from __future__ import annotations

import datetime as _dt
import os
import re
from pathlib import Path
from typing import Any

from cascade.config.personas import Personas
from cascade.base.errors import CascadeError
from cascade.ledger import items
from cascade.ledger.consensus import ConsensusResult, VotingConfig, voting_config
from cascade.ledger.growing import continues
from cascade.ledger.ledger_file import LedgerFile
from cascade.ledger.records import (
    DRIFT_REVIEW,
    OUTCOME,
    PHASE_TRANSITION,
    SOURCE_REVISION,
    VOTES,
    Comment,
    Event,
    Ledger,
)
from cascade.ledger.provenance import LEDGER, ledger_id
from cascade.ledger.render import neutralise, render_comment, render_event, render_header
from cascade.protocol.authority import Authority
from cascade.protocol.state import STATUS_OF, State
from cascade.protocol.findings import Finding
from cascade.protocol.loader import DEFAULT_PROTOCOL, Protocol
from cascade.protocol.ledger_setting import LedgerSetting
from cascade.protocol.setting import Setting, setting_of
from cascade.protocol.derivation import derivation
from cascade.base.resources import LEDGER_SUFFIX

DEFAULT_PARTICIPANTS = ("architect", "security", "pragmatist")


def is_transition(event: Event) -> bool:
    """A phase transition that names the phase it enters (one that does not is ignored)."""
    return event.kind == PHASE_TRANSITION and bool(event.fields.get("to"))


def slugify(title: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
    return slug[:80].strip("-") or "discussion"


class Discussion:
    """One discussion ledger, read under the configuration its caller gives it (``setting``:
    cascade.protocol.setting; ``load``, ``from_text`` and ``create`` find the repository's
    when given none)."""

    def __init__(self, path: str | os.PathLike[str], text: str, setting: Setting, *,
                 raw: bytes | None = None, details: bool = True,
                 authority: Authority | None = None) -> None:
        self.path = Path(path)
        self.setting = setting
        self.file = LedgerFile(path, text, raw=raw, details=details)
        # what it is read under: the setting, and the governing rule's settings (None: the
        # header's)
        self.ledger_setting = LedgerSetting(setting, self.path, authority)
        self._settled: Ledger | None = None  # the ledger last settled (LedgerSetting.settle)
        # who added the lines whose author matters (cascade.check.attribution); None: unknown,
        # names are taken as written
        self._authors: dict[int, str] | None = None  # with_authors
        self._state: tuple[Ledger, State] | None = None  # the state, and the ledger it is of
        # The derivation of the state, kept with what it was derived under: an append feeds
        # it the new entries (cascade.protocol.derivation.derivation)
        self._kept: tuple[Any, tuple[Any, ...], Any] | None = None

    @property
    def root(self) -> Path:
        """The repository whose configuration the ledger is read under."""
        return self.setting.root

    # ---- loading and creating -------------------------------------------------------------

    @classmethod
    def load(cls, path: str | os.PathLike[str], setting: Setting | None = None, *,
             root: Path | None = None, authority: Authority | None = None) -> Discussion:
        """The ledger at ``path``, read under ``setting`` (None: that of ``root``, or of the
        repository that holds the ledger)."""
        file = LedgerFile.read(path)
        d = cls(file.path, "", setting or setting_of(root, file.path.parent),
                authority=authority)
        d.file = file
        return d

    @classmethod
    def from_text(cls, text: str, path: str | os.PathLike[str] = "discussion.md",
                  setting: Setting | None = None, *, root: Path | None = None,
                  authority: Authority | None = None) -> Discussion:
        """The ledger ``text``, as if read at ``path`` (``setting``: as ``load``'s)."""
        return cls(path, text, setting or setting_of(root, Path(path).parent),
                   authority=authority)

    @classmethod
    def create(cls, title: str, template: str = "feature", context: str = "", *,
               path: str | os.PathLike[str] | None = None, source: str | None = None,
               participants: list[str] | tuple[str, ...] | None = None,
               protocol: str | None = None, consensus: dict[str, Any] | None = None,
               root: Path | None = None, created: str | None = None,
               extra: dict[str, str] | None = None,
               setting: Setting | None = None  # long: the Python API's keyword options
               ) -> Discussion:
        """A new discussion, rendered from a template; written by ``save()``. ``extra``:
        further header fields (a step protocol's ``Rounds``). ``setting``: the configuration
        it is created under (None: that of ``root``, or of the repository that holds
        ``path``, else of the working directory)."""
        title = " ".join(title.split())
        if not title:
            raise CascadeError("a discussion needs a title")
        if path is None:
            path = Path("discussions") / (slugify(title) + LEDGER_SUFFIX)
        path = Path(path)
        if setting is None:
            setting = setting_of(root, path.parent if path.parent.exists() else Path.cwd())
        # None: the default panel; [] (a protocol that generates its panel): none named here
        participants = list(DEFAULT_PARTICIPANTS if participants is None else participants)
        registry = setting.personas
        for alias in participants:
            registry.require(alias)
        proto = setting.protocol(protocol or DEFAULT_PROTOCOL)
        config = voting_config(consensus or {})
        created = created or _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        template, body = setting.template(
            "discussions", template, title=title, source=source,
            context=neutralise(context or ""), created=created[:10], participants=participants)
        fields: list[tuple[str, str]] = [("Title", title)]
        if source:
            fields.append(("Source", source))
        fields += [
            ("Template", template),
            ("Protocol", proto.name),
            ("Phase", proto.first_phase),
            ("Status", "OPEN"),
            *([("Participants", ", ".join(participants))] if participants else []),
            ("Consensus", f"threshold_ready={config.threshold_ready} "
                          f"threshold_reject={config.threshold_reject} "
                          f"human_required={str(config.human_required).lower()}"
                          + (" persona_votes=advisory" if config.advisory else "")),
            ("Created", created),
            *(extra or {}).items(),
        ]
        text = render_header(fields) + "\n" + body.rstrip("\n") + "\n"
        d = cls(path, text, setting)
        d.file.exists = False
        return d

    # ---- derived state --------------------------------------------------------------------

    @property
    def text(self) -> str:
        """The ledger's full text, including appends not yet saved."""
        return self.file.text

    @property
    def ledger(self) -> Ledger:
        """The text read, base and appends (entries settled in their phase:
        LedgerSetting.settle)."""
        ledger = self.file.ledger
        if ledger is not self._settled:
            self.ledger_setting.settle(ledger)
            self._settled = ledger
        return ledger

    @property
    def authority(self) -> Authority:
        """What decides: the governing rule's settings when given, else the ledger's header
        (as changed by its SETTINGS events)."""
        return self.ledger_setting.authority(self.ledger)

    def with_authors(self, authors: dict[int, str]) -> Discussion:
        """The same ledger, its state derived knowing who added its lines."""
        d = Discussion(self.path, "", self.setting, authority=self.ledger_setting.rule)
        # the same text, read the same way: read once
        d.file, d._authors = self.file.copy(), authors
        d.ledger_setting.first_phase = self.ledger_setting.first_phase
        return d

    @property
    def governed(self) -> bool:
        return self.ledger_setting.rule is not None

    def header_differences(self) -> list[str]:
        """Settings in which the header differs from the governing rule (none if ungoverned)."""
        return self.ledger_setting.header_differences(self.ledger)

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
        inputs = (self.authority, self.personas, self.protocol, self._authors)
        kept = self._kept
        entries = ledger.entries
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
    def header(self):
        return self.ledger.header

    @property
    def comments(self) -> list[Comment]:
        return self.ledger.comments

    @property
    def events(self) -> list[Event]:
        """The events derive believes (cascade.protocol.derivation): an event that does not hold, or
        a copy, is not among them (``ledger.events`` has every one)."""
        ignored = self.state.ignored
        return [e for e in self.ledger.events if e.line not in ignored]

    @property
    def warnings(self) -> list[tuple[int, str]]:
        return self.ledger.warnings

    @property
    def personas(self) -> Personas:
        """The registry's personas; for a protocol whose panel is generated, also the experts
        of the last panel its ledger records (cascade.protocol.panel)."""
        return self.ledger_setting.personas(self.ledger)

    @property
    def identity(self) -> str:
        """What the stamps written for this ledger name (``ledger=``): its header's identity
        (cascade.ledger.provenance.ledger_id), the same for its whole life."""
        return ledger_id(self.header)

    @property
    def protocol(self) -> Protocol:
        return self.ledger_setting.protocol(self.ledger)

    @property
    def title(self) -> str:
        return self.header.title or self.ledger.title_line or self.path.name.split(".")[0]

    @property
    def source(self) -> str | None:
        """The document's path: the header's ``Source:``, or the path the last
        ``SOURCE-REVISION`` recorded (a renamed document's discussion follows it)."""
        moved = self._source_event()
        return moved.fields["path"] if moved is not None else self.header.source

    def _source_event(self) -> Event | None:
        if not self.header.source:
            return None
        last = None
        for event in self.events:
            if event.kind == SOURCE_REVISION and event.fields.get("path"):
                last = event
        if last is None or last.fields["path"] == self.header.source:
            return None
        return last

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
        for number in range(h.line, max(h.end_line, h.line) + 1):
            if "source:" in lines[number - 1].lower():
                return number
        return h.line

    @property
    def phase(self) -> str:
        return self.state.phase

    @property
    def current_phase(self) -> str:
        """The phase the discussion is in; one its protocol does not have is an error."""
        phase = self.phase
        if not self.protocol.has_phase(phase):
            raise CascadeError(f"phase {self.phase!r} is not in protocol {self.protocol.name!r} "
                               f"({', '.join(self.protocol.phase_ids())})", self.path)
        return phase

    @property
    def status(self) -> str:
        return self.state.status

    @property
    def participants(self) -> list[str]:
        return list(self.authority.participants)

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

    @property
    def voting_config(self) -> VotingConfig:
        return self.authority.consensus

    def expected_voters(self) -> list[str]:
        return list(self.state.expected)

    @property
    def consensus_result(self) -> ConsensusResult:
        return self.state.result

    @property
    def decision(self):
        """The person's decision in force for the current revision, or None."""
        return self.state.decision

    def has_consensus(self) -> bool:
        return self.consensus_result.reached

    @property
    def questions(self) -> list[dict[str, Any]]:
        """Every ``Q:``, numbered Q1, Q2... in ledger order: open, or answered by ``A:`` /
        ``A(Qn):`` (cascade.ledger.items). ``answer`` is the answer that closed the question,
        ``answers`` every answer in ledger order."""
        return items.questions_and_answers(self.comments)[0]

    @property
    def answers(self) -> list[dict[str, Any]]:
        """Every ``A:`` marker, with the question it answers (``"Q2"``, or None: none)."""
        return items.questions_and_answers(self.comments)[1]

    @property
    def decisions(self) -> list[dict[str, Any]]:
        return items.decisions(self.comments)

    @property
    def concerns(self) -> list[dict[str, Any]]:
        return items.concerns(self.comments)

    @property
    def findings(self) -> list[Finding]:
        """Every finding, numbered F1, F2... in ledger order, with its status (open,
        resolved, answered, waived, overridden: cascade.protocol.findings), as the state
        derives it."""
        return self.state.findings

    @property
    def todos(self) -> list[dict[str, Any]]:
        """TODO and ASSIGNED items, numbered T1, T2..., and the DONE markers, in ledger order
        (cascade.ledger.items)."""
        return items.todos(self.comments)

    @property
    def mentions(self) -> list[dict[str, Any]]:
        return items.mentions(self.comments)

    # ---- appending ------------------------------------------------------------------------

    def add_comment(self, author: str, text: str, vote: str | None = None, *,
                    provenance: dict[str, Any] | None = None, untrusted: bool = False,
                    origin: str = "ai") -> None:
        """Append a comment block. ``untrusted``: the text came from a model. ``provenance``:
        the tool's stamp (``origin`` "ai" for a persona's turn, "decision" for a person's
        decision). A stamp names this ledger (``ledger=``): it counts here only."""
        author = " ".join((author or "").split())
        if not author:
            raise CascadeError("a comment needs an author", self.path)
        if vote is not None:
            vote = vote.strip().upper()
            if vote not in VOTES:
                raise CascadeError(f"vote must be READY, CHANGES or REJECT, not {vote!r}",
                                   self.path)
        if provenance is not None:
            provenance = {**provenance, LEDGER: self.identity}
        try:
            block = render_comment(author, text, vote, provenance=provenance, untrusted=untrusted,
                                   origin=origin)
        except ValueError as exc:  # the block would not read back as written: write nothing
            raise CascadeError(str(exc), self.path, exit_code=1) from None
        self._append(block)

    def add_event(self, kind: str, value: str = "", **fields: Any) -> None:
        """Append a state event, with the tool's stamp (derive trusts no other), naming this
        ledger (``ledger=``)."""
        try:
            line = render_event(kind, value, fields, stamp=True, ledger=self.identity)
        except ValueError as exc:
            raise CascadeError(str(exc), self.path, exit_code=1) from None
        self._append(line)
        # The writer and the reader agree: never write an event derive would not believe.
        entries = self.ledger.entries
        if entries and entries[-1].line in self.state.ignored:
            reason = next((u.reason for u in self.state.unfounded
                           if u.line == entries[-1].line), "")
            self.file.discard(last=1)
            raise CascadeError(f"refusing to write a {kind} event that does not hold: {reason}",
                               self.path, exit_code=1)

    def advance(self, to: str | None = None, trigger: str | None = None) -> str:
        """Append a phase transition; returns the new phase. Advancing to the phase the
        discussion is already in appends nothing (and returns it); phases only go forward.
        ``trigger``: the phase's advance trigger that moved it (recorded: derive checks it held)."""
        protocol = self.protocol
        current = self.current_phase
        if to is None:
            to = protocol.next_phase(current)
            if to is None:
                raise CascadeError(f"phase {current!r} is the last phase of protocol "
                                   f"{protocol.name!r}", self.path)
        if not protocol.has_phase(to):
            raise CascadeError(f"unknown phase {to!r} for protocol {protocol.name!r} "
                               f"(phases: {', '.join(protocol.phase_ids())})", self.path)
        if to == current:
            return to  # already there: a second transition would only repeat the first
        order = protocol.phase_ids()
        if order.index(to) < order.index(current):
            raise CascadeError(f"phase {to!r} comes before {current!r}: phases only go "
                               "forward (a new revision of the document asks the panel again)",
                               self.path)
        self.add_event(PHASE_TRANSITION, f"{current} → {to}", trigger=trigger)
        return to

    def record_outcome(self, outcome: str) -> bool:
        """Append an ``OUTCOME`` event; returns whether it was appended. An outcome is recorded
        once: when the status it would set is the status already derived (the same outcome
        recorded since the document's last revision), nothing is appended."""
        words = (outcome or "").split()
        if not words:
            raise CascadeError("an outcome needs a value (READY or REJECT)", self.path)
        word = words[0].upper()
        if STATUS_OF.get(word, word) == self.status:
            return False
        self.add_event(OUTCOME, outcome)
        return True

    def discard(self) -> None:
        """Forget what was appended since the last save (a write that failed): the file is as
        it was, and the next save writes only what comes after."""
        self.file.discard()

    def _append(self, chunk: str) -> None:
        self.file.append(chunk)

    @property
    def pending_text(self) -> str:
        """What save() would append."""
        return self.file.pending_text

    # ---- saving ---------------------------------------------------------------------------

    def save(self) -> Path:
        """Write the appended text atomically. Earlier text is never changed."""
        return self.file.save()

    def refresh(self) -> None:
        """Read what was appended to the file since it was read (another writer's blocks):
        the state is derived from the file as it is now; appends not saved yet stay, after
        it. A file removed or rewritten meanwhile is an error. A writer that takes the
        ledger's lock (cascade.ledger.lock) after loading calls this before it plans."""
        self.file.refresh()

    def __repr__(self) -> str:
        return f"Discussion({str(self.path)!r}, phase={self.phase!r}, status={self.status!r})"
