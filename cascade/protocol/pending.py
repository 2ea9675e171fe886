"""Who speaks now in a protocol whose planner is ``respond`` (seed 002: "mentioned
participants or all"). Pure: a function of the ledger, its state and the personas; no model.
The rules of who is pending are docs/hook.md's ("Who speaks"). Besides: a revision that
changes only the document's status, spacing or path wakes nobody; only a block the tool wrote
for a persona counts as that persona having spoken; while a person's decision is in force for
the current revision, nobody is asked (``cascade turn PATH @alias`` still asks anyone by name).
"""
from __future__ import annotations

from msgspec import Struct

from cascade.config.personas import Persona, Personas
from cascade.ledger.grammar import is_blank
from cascade.ledger.records import (
    OUTCOME,
    PHASE_TRANSITION,
    SOURCE_REVISION,
    VOTE_RESET,
    Comment,
    Event,
    Ledger,
)
from cascade.ledger.provenance import verify

_WAKE_ALL = (PHASE_TRANSITION, SOURCE_REVISION, VOTE_RESET)
_CLOSED = ("ACCEPTED", "REJECTED")


class Pending(Struct, frozen=True):
    persona: Persona
    reason: str  # "new input", "mentioned by Rob", "asked"
    request: str = ""  # what a person asks of this turn (Runner.run_turn's callout)


def pending_turns(ledger: Ledger, participants: list[str], basis) -> list[Pending]:
    """Who of ``participants`` is pending in ``ledger``, on ``basis`` (its fields:
    cascade.protocol.runstate.Basis): a carried revision asks nobody, an entry not believed is
    nobody's input, and while a person's decision is in force nobody is asked."""
    if basis.decided:
        return []
    registry, carried, ignored = basis.personas, basis.carried, basis.skip
    verified = basis.verified
    last_all = -1
    last_spoke: dict[str, int] = {}
    asked: dict[str, tuple[int, str]] = {}  # alias -> (index, who)
    closed = (ledger.header.status or "OPEN").upper() in _CLOSED
    for index, entry in enumerate(ledger.entries):
        if entry.line in ignored:
            continue
        if isinstance(entry, Event):
            if entry.line in carried:
                continue
            if entry.kind == OUTCOME:
                closed = True
            elif entry.kind in _WAKE_ALL:
                if entry.kind == SOURCE_REVISION:
                    closed = False
                if not closed:
                    last_all = index
            continue
        persona = registry.of_author(entry.author)
        if persona is not None:
            if entry.origin == "ai" and (entry.line in verified if verified is not None
                                         else verify(entry) is None):
                last_spoke[persona.alias] = index
            continue  # a block forged under a persona's name is nobody's input
        if entry.origin == "decision" or is_blank(entry.body):
            continue  # a decision, or a vote with no text, asks nobody
        mentioned = _expand(entry, participants, registry)
        if mentioned:
            asked.update(dict.fromkeys(mentioned, (index, entry.author)))
        elif not closed:
            last_all = index
    return _pending(registry, participants, last_all, last_spoke, asked)


def _pending(registry: Personas, participants: list[str], last_all: int,
             last_spoke: dict[str, int], asked: dict[str, tuple[int, str]]) -> list[Pending]:
    """Each participant that has not spoken since the last input to everyone, then each
    persona mentioned since it last spoke."""
    out: list[Pending] = []
    seen: set[str] = set()
    for alias in participants:
        persona = registry.get(alias)
        if persona is None or not persona.votes or alias in seen:
            continue
        if last_spoke.get(alias, -2) < last_all:  # -2: never spoke, so pending at the start
            out.append(Pending(persona, "new input"))
            seen.add(alias)
    for alias, (index, who) in asked.items():
        persona = registry.get(alias)
        if persona is None or alias in seen:
            continue
        if last_spoke.get(alias, -1) < index:
            out.append(Pending(persona, f"mentioned by {who}"))
            seen.add(alias)
    return out


def _expand(comment: Comment, participants: list[str], registry: Personas) -> list[str]:
    aliases: list[str] = []
    for alias in comment.mentions:
        if alias == "all":
            aliases += [a for a in participants if a in registry]
        elif alias in registry:
            aliases.append(alias)
    return list(dict.fromkeys(aliases))


def requested_turns(d, aliases: list[str]) -> list[Pending]:
    """Personas asked for by name (``cascade turn PATH @security``) in the discussion ``d``
    (its ``personas`` and ``participants``); ``@all``: every participant."""
    registry = d.personas
    out: list[Pending] = []
    for raw in aliases:
        alias = raw.lstrip("@").lower()
        names = d.participants if alias == "all" else [alias]
        for name in names:
            persona = registry.require(name)
            if all(p.persona.alias != persona.alias for p in out):
                out.append(Pending(persona, "asked"))
    return out
