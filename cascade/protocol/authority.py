"""What decides for one ledger: the governing rule's settings (``Authority``), and the
ledger's own settings (its header, as changed by stamped ``SETTINGS`` events) that a header
may record and never loosens the verdict with."""
from __future__ import annotations

from msgspec import Struct, field

from cascade.ledger.consensus import VotingConfig, voting_config
from cascade.ledger.records import SETTINGS, Event, Ledger
from cascade.ledger.provenance import Replays, ledger_id, verify_event
from cascade.protocol.findings import Policy


class Authority(Struct, frozen=True):
    """What decides for one ledger."""

    participants: tuple[str, ...]
    protocol: str
    consensus: VotingConfig
    deciders: tuple[str, ...] = ()  # names or e-mail addresses; empty: any person may decide
    revote_on_change: bool = True
    rule: str | None = None  # "rule 'adr' (.ai-rules.yml:3)" when a rule governs the ledger
    policy: Policy = field(default_factory=Policy)  # what each finding severity asks of a vote

    @property
    def where(self) -> str:
        return self.rule or "the ledger's header"


def header_settings(ledger: Ledger) -> dict[str, object]:
    """The ledger's own settings: its header, as changed by its last ``SETTINGS`` event."""
    own = OwnSettings(ledger.header)
    own.take(ledger.entries)
    return own.settings


class OwnSettings:
    """``header_settings``, entry by entry: ``take`` the ledger's entries in order (those
    appended since, as they come); ``settings`` are those of the entries taken."""

    def __init__(self, header) -> None:
        self._out: dict[str, object] = {"participants": tuple(header.participants),
                                        "protocol": header.protocol,
                                        "consensus": dict(header.consensus)}
        self._replays = Replays()
        self._ledger = ledger_id(header)  # what its own stamps name

    @property
    def settings(self) -> dict[str, object]:
        consensus = self._out["consensus"]
        return {**self._out, "consensus": dict(consensus)}  # type: ignore[call-overload]

    def take(self, entries) -> None:
        out, replays = self._out, self._replays
        for event in entries:
            if not isinstance(event, Event):
                continue
            if event.kind == SETTINGS and replays.copy_of(event) is None \
                    and verify_event(event, self._ledger) is None:
                f = event.fields
                if "participants" in f:
                    out["participants"] = tuple(f["participants"].replace(",", " ").split())
                if "protocol" in f:
                    out["protocol"] = f["protocol"]
                if "consensus" in f:
                    out["consensus"] = dict(kv.split("=", 1) for kv in f["consensus"].split()
                                            if "=" in kv)


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


def consensus_text(c: VotingConfig) -> str:
    """Consensus settings as a ledger's header and its ``SETTINGS`` events record them."""
    return (f"threshold_ready={c.threshold_ready} threshold_reject={c.threshold_reject} "
            f"human_required={str(c.human_required).lower()}"
            + (" persona_votes=advisory" if c.advisory else ""))


def settings_fields(authority: Authority) -> dict[str, str]:
    """The fields of a ``SETTINGS`` event that records an authority's settings."""
    return {"participants": ", ".join(authority.participants), "protocol": authority.protocol,
            "consensus": consensus_text(authority.consensus)}


def header_settings_before(ledger: Ledger, event: Event) -> str | None:
    """The protocol the ledger records before ``event`` (its header, as changed by SETTINGS)."""
    protocol, own = ledger.header.protocol, ledger_id(ledger.header)
    for e in ledger.events:
        if e is event:
            break
        if e.kind == SETTINGS and e.fields.get("protocol") and verify_event(e, own) is None:
            protocol = e.fields["protocol"]
    return protocol
