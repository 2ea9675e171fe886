"""The Python API over one ledger (seed 002): load or create, read state, append, save.

A ``Discussion`` puts three parts together (docs/api.md): the ledger's file, what it is read
under and the state derived from its log alone. What is left here is creating a ledger,
appending to it what the protocol allows, and the API's names for the parts.
"""
from __future__ import annotations

import datetime as _dt
import os
import re
from pathlib import Path
from typing import Any

from cascade.base.errors import CascadeError
from cascade.base.resources import LEDGER_SUFFIX
from cascade.config.personas import Personas
from cascade.config.rules import DEFAULT_PARTICIPANTS
from cascade.ledger.consensus import VotingConfig, voting_config
from cascade.ledger.ledger_file import LedgerFile
from cascade.ledger.provenance import LEDGER
from cascade.ledger.records import OUTCOME, PHASE_TRANSITION, VOTES, Event
from cascade.ledger.render import neutralise, render_comment, render_event, render_header
from cascade.protocol.authority import Authority, consensus_text
from cascade.protocol.derived_view import DerivedView
from cascade.protocol.ledger_setting import LedgerSetting
from cascade.protocol.loader import DEFAULT_PROTOCOL, Protocol
from cascade.protocol.setting import Setting, setting_of
from cascade.protocol.state import STATUS_OF


def is_transition(event: Event) -> bool:
    """A phase transition that names the phase it enters (one that does not is ignored)."""
    return event.kind == PHASE_TRANSITION and bool(event.fields.get("to"))


def slugify(title: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
    return slug[:80].strip("-") or "discussion"


class Discussion(DerivedView):
    """One discussion ledger, read under the configuration its caller gives it (``setting``:
    cascade.protocol.setting; ``load``, ``from_text`` and ``create`` find the repository's
    when given none), and under the governing rule's settings when given (``authority``;
    None: its header's). Its state and the queries over it are DerivedView's."""

    def __init__(self, path: str | os.PathLike[str], text: str, setting: Setting, *,
                 raw: bytes | None = None, details: bool = True,
                 authority: Authority | None = None) -> None:
        super().__init__(LedgerFile(path, text, raw=raw, details=details),
                         LedgerSetting(setting, Path(path), authority))
        self.setting = setting

    # ---- loading and creating -------------------------------------------------------------

    @classmethod
    def load(cls, path: str | os.PathLike[str], setting: Setting | None = None, *,
             root: Path | None = None, authority: Authority | None = None) -> Discussion:
        """The ledger at ``path``, read under ``setting`` (None: that of ``root``, or of the
        repository that holds the ledger)."""
        file = LedgerFile.read(path)
        d = cls(file.path, "", setting or setting_of(root, file.path.parent),
                authority=authority)
        d.file = file  # as read, bytes and all
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
        fields = [("Title", title), *([("Source", source)] if source else []),
                  ("Template", template), ("Protocol", proto.name),
                  ("Phase", proto.first_phase), ("Status", "OPEN"),
                  *([("Participants", ", ".join(participants))] if participants else []),
                  ("Consensus", consensus_text(config)), ("Created", created),
                  *(extra or {}).items()]
        text = render_header(fields) + "\n" + body.rstrip("\n") + "\n"
        d = cls(path, text, setting)
        d.file.exists = False
        return d

    def with_authors(self, authors: dict[int, str]) -> Discussion:
        """The same ledger, its state derived knowing who added its lines."""
        d = Discussion(self.path, "", self.setting, authority=self.ledger_setting.rule)
        d.file, d._authors = self.file.copy(), authors  # the same text, read once
        d.ledger_setting.first_phase = self.ledger_setting.first_phase
        return d

    # ---- what it is read under ------------------------------------------------------------

    @property
    def root(self) -> Path:
        """The repository whose configuration the ledger is read under."""
        return self.setting.root

    @property
    def authority(self) -> Authority:
        """What decides: the governing rule's settings when given, else the ledger's header
        (as changed by its SETTINGS events)."""
        return self.ledger_setting.authority(self.ledger)

    @property
    def governed(self) -> bool:
        return self.ledger_setting.rule is not None

    def header_differences(self) -> list[str]:
        """Settings in which the header differs from the governing rule (none if ungoverned)."""
        return self.ledger_setting.header_differences(self.ledger)

    @property
    def protocol(self) -> Protocol:
        return self.ledger_setting.protocol(self.ledger)

    @property
    def personas(self) -> Personas:
        """The registry's personas; for a protocol whose panel is generated, also the experts
        of the last panel its ledger records (cascade.protocol.panel)."""
        return self.ledger_setting.personas(self.ledger)

    @property
    def participants(self) -> list[str]:
        return list(self.authority.participants)

    @property
    def voting_config(self) -> VotingConfig:
        return self.authority.consensus

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
        self.file.append(block)

    def add_event(self, kind: str, value: str = "", **fields: Any) -> None:
        """Append a state event with the tool's stamp (derive trusts no other), naming this
        ledger (``ledger=``)."""
        try:
            line = render_event(kind, value, fields, stamp=True, ledger=self.identity)
        except ValueError as exc:
            raise CascadeError(str(exc), self.path, exit_code=1) from None
        self.file.append(line)
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

    # ---- the file ---------------------------------------------------------------------------

    @property
    def pending_text(self) -> str:
        """What save() would append."""
        return self.file.pending_text

    def discard(self) -> None:
        """Forget what was appended since the last save (a write that failed): the file is as
        it was, and the next save writes only what comes after."""
        self.file.discard()

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
