"""Who speaks now.

A participant is pending when it has not spoken since the last *input*: a person's comment,
a source revision, a vote reset or a phase transition (or since the ledger began). A persona
a person @mentions after that persona last spoke is pending too -- background personas only
that way. A persona's own comment is not input: personas never wake each other, so turns
cannot loop.
"""
from __future__ import annotations

from dataclasses import dataclass

from cascade.config.personas import Persona, Personas
from cascade.ledger.discussion import Discussion
from cascade.ledger.model import PHASE_TRANSITION, SOURCE_REVISION, VOTE_RESET, Comment, Event

_INPUT_EVENTS = (PHASE_TRANSITION, SOURCE_REVISION, VOTE_RESET)


@dataclass(frozen=True)
class Pending:
    persona: Persona
    reason: str  # "new input", "mentioned by Rob", "asked"


def pending_turns(d: Discussion) -> list[Pending]:
    registry = d.personas
    last_input = -1
    last_spoke: dict[str, int] = {}
    mentioned: dict[str, tuple[int, str]] = {}  # alias -> (index, who)
    for index, entry in enumerate(d.ledger.entries):
        if isinstance(entry, Event):
            if entry.kind in _INPUT_EVENTS:
                last_input = index
            continue
        persona = registry.by_name.get(entry.author)
        if persona is not None:
            last_spoke[persona.alias] = index
            continue
        last_input = index  # a person's comment
        for alias in _expand(entry, d, registry):
            mentioned[alias] = (index, entry.author)

    out: list[Pending] = []
    seen: set[str] = set()
    for alias in d.participants:
        persona = registry.get(alias)
        if persona is None or not persona.votes or alias in seen:
            continue
        if last_spoke.get(alias, -2) < last_input:  # -2: never spoke, so pending at the start
            out.append(Pending(persona, "new input"))
            seen.add(alias)
    for alias, (index, who) in mentioned.items():
        persona = registry.get(alias)
        if persona is None or alias in seen:
            continue
        if last_spoke.get(alias, -1) < index:
            out.append(Pending(persona, f"mentioned by {who}"))
            seen.add(alias)
    return out


def _expand(comment: Comment, d: Discussion, registry: Personas) -> list[str]:
    aliases: list[str] = []
    for alias in comment.mentions:
        if alias == "all":
            aliases += [a for a in d.participants if a in registry]
        elif alias in registry:
            aliases.append(alias)
    return aliases


def requested_turns(d: Discussion, aliases: list[str]) -> list[Pending]:
    """Personas asked for by name (``cascade turn PATH @security``); ``@all``: every participant."""
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
