"""What one ledger is read under: its repository's configuration and the authority that decides.

The repository's ``Setting`` (cascade.protocol.setting) says where personas, protocols and
templates come from. A ledger is read under it and under an authority: the governing rule's
settings when its caller gives them, else the ledger's own header as its SETTINGS events
change it (cascade.protocol.authority). From the two follow the ledger's protocol, its
personas (for a protocol whose panel is generated, with the experts its ledger records) and
the phase of the entries written before its first phase transition. Each is asked of a
ledger as read (cascade.ledger.ledger_file), and kept: read on as the ledger grows.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from cascade.config.personas import Personas
from cascade.ledger.consensus import voting_config
from cascade.ledger.growing import continues
from cascade.ledger.provenance import ledger_id
from cascade.ledger.records import Ledger
from cascade.protocol.authority import Authority, OwnSettings, header_differences
from cascade.protocol.loader import HEADERLESS_PROTOCOL, Protocol
from cascade.protocol.panel import panel_of, personas_of
from cascade.protocol.setting import Setting


class LedgerSetting:
    """One ledger's configuration: ``setting`` (its repository's), ``rule`` (the governing
    rule's settings; None: the ledger's header decides), ``path`` (named in errors)."""

    def __init__(self, setting: Setting, path: Path, rule: Authority | None = None) -> None:
        self.setting = setting
        self.path = path
        self.rule = rule
        self._own: tuple[OwnSettings, int, Any] | None = None  # the header's, read on
        self._protocols: dict[str, Protocol] = {}  # by name: looked up once per ledger
        # (the ledger, the registry, its panel, the personas): see personas
        self._panel: tuple[Ledger, Personas, Any, Personas] | None = None
        # the first phase given to entries read under a header without Phase: (the phase,
        # the entries given it, how many entries were read, the last of them); see settle
        self.first_phase: tuple[str | None, list[Any], int, Any] = (None, [], 0, None)

    @property
    def root(self) -> Path:
        """The repository whose configuration the ledger is read under."""
        return self.setting.root

    def authority(self, ledger: Ledger) -> Authority:
        """What decides: the governing rule's settings when given, else the ledger's header
        (as changed by its SETTINGS events)."""
        if self.rule is not None:
            return self.rule
        own = self._own_settings(ledger)
        participants = tuple(own["participants"]) or tuple(self._speaking(ledger))
        return Authority(participants, self._protocol_name(ledger),
                         voting_config(own["consensus"], self.path))  # type: ignore[arg-type]

    def header_differences(self, ledger: Ledger) -> list[str]:
        """Settings in which the header differs from the governing rule (none if ungoverned)."""
        if self.rule is None:
            return []
        return header_differences(ledger, self.rule, HEADERLESS_PROTOCOL)

    def protocol(self, ledger: Ledger) -> Protocol:
        return self._protocol_named(self._protocol_name(ledger))

    def personas(self, ledger: Ledger) -> Personas:
        """The registry's personas; for a protocol whose panel is generated, also the experts
        of the last panel its ledger records (cascade.protocol.panel)."""
        registry = self.setting.personas
        if not ledger.header.protocol or not self.protocol(ledger).steps.generated:
            return registry
        cached = self._panel
        if cached is None or cached[0] is not ledger or cached[1] is not registry:
            panel = panel_of(ledger.entries, ledger_id(ledger.header))
            if cached is not None and cached[1] is registry and cached[2] == panel:
                extended = cached[3]  # the same panel: the same personas (and derivation)
            else:
                extended = registry.extended(personas_of(panel, self.path)) if panel else registry
            self._panel = cached = (ledger, registry, panel, extended)
        return cached[3]

    def settle(self, ledger: Ledger) -> None:
        """Under a header without ``Phase:``, the entries before the first phase transition
        are in the first phase of the protocol the ledger names (as it names it now)."""
        if ledger.header.phase:
            return
        start, settled, scanned, last = self.first_phase
        entries = ledger.entries
        if continues(entries, scanned, last):
            # the entries read since (and the last one before: an open block is read again)
            since = max(0, scanned - 1)
        else:  # read again: of the entries settled, those read again are the same objects
            since, present = 0, {id(e) for e in entries}
            settled = [e for e in settled if id(e) in present]
        new = [e for e in entries[since:] if not e.phase]
        self.first_phase = (start, settled, len(entries), entries[-1] if entries else None)
        if not new and start is None:
            return
        first = self.protocol(ledger).first_phase
        for entry in (*settled, *new) if first != start else new:
            entry.phase = first
        self.first_phase = (first, [*settled, *new], *self.first_phase[2:])

    def _protocol_name(self, ledger: Ledger) -> str:
        if self.rule is not None:
            return self.rule.protocol
        return str(self._own_settings(ledger)["protocol"] or HEADERLESS_PROTOCOL)

    def _own_settings(self, ledger: Ledger) -> dict[str, object]:
        """The ledger's own settings (cascade.protocol.authority.header_settings), read on from
        those of the entries it began with."""
        entries = ledger.entries
        if self._own is None or not continues(entries, self._own[1], self._own[2]):
            self._own = (OwnSettings(ledger.header), 0, None)
        own = self._own[0]
        own.take(entries[self._own[1]:])
        self._own = (own, len(entries), entries[-1] if entries else None)
        return own.settings

    def _protocol_named(self, name: str) -> Protocol:
        protocol = self._protocols.get(name)
        if protocol is None:  # each lookup checks the configuration folders on disk
            protocol = self._protocols[name] = self.setting.protocol(name, self.path)
        return protocol

    def _speaking(self, ledger: Ledger) -> list[str]:
        """The personas that have spoken in ``ledger``, in the order they first spoke."""
        registry = self.personas(ledger)
        seen: list[str] = []
        for c in ledger.comments:
            persona = registry.by_name.get(c.author)
            if persona and persona.alias not in seen:
                seen.append(persona.alias)
        return seen
