"""Personas picked for a topic by their lens: the deterministic pick that auto-invite falls
back on, and the stand-in for a generated panel that cannot be used.

A persona's lens is its role, expertise and concerns (not its personality's prose, whose
common words fit any topic). A topic word fits a lens word of its family (``database`` and
"Data modeling", ``migration`` and "migrate"); the words every sentence has do not count. The
personas whose lens fits the most topic words are picked; when fewer fit than are needed,
the default panel fills the rest, and each pick says why. A persona that fills a fixed role
of some protocol (a moderator, a synthesizer) is the caller's to exclude: never a member.
"""
from __future__ import annotations

import re

from cascade.config.rules import DEFAULT_PARTICIPANTS

_WORD = re.compile(r"[a-z0-9]+")
# Words that say nothing of a topic's subject.
_COMMON = frozenset({
    "about", "after", "all", "also", "and", "any", "are", "because", "been", "before", "being",
    "but", "can", "could", "does", "done", "each", "for", "from", "had", "has", "have", "how",
    "into", "its", "just", "more", "most", "new", "not", "now", "off", "old", "once", "only",
    "onto", "other", "our", "out", "over", "per", "should", "some", "such", "than", "that",
    "the", "their", "them", "then", "there", "these", "they", "this", "those", "too", "under",
    "use", "used", "using", "via", "was", "way", "were", "what", "when", "where", "which",
    "while", "who", "why", "will", "with", "would", "you", "your"})
UNFIT = "the default panel: no other persona's lens fits the topic"


def _words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if len(w) > 2 and w not in _COMMON]


def _kin(a: str, b: str) -> bool:
    """Two words of one family: the same, one the start of the other (four letters at least:
    data, database) or the same first six letters (migration, migrate)."""
    if a == b:
        return True
    short, long_ = sorted((a, b), key=len)
    return (len(short) >= 4 and long_.startswith(short)) or (len(short) >= 6
                                                             and a[:6] == b[:6])


def _fit(topic: list[str], persona) -> dict[str, str]:
    """Each topic word the persona's lens fits, with the lens phrase it fits."""
    phrases = [persona.role, *persona.expertise, *persona.concerns]
    fits: dict[str, str] = {}
    for word in dict.fromkeys(topic):
        phrase = next((ph for ph in phrases if any(_kin(word, w) for w in _words(ph))), None)
        if phrase is not None:
            fits[word] = " ".join(phrase.split())
    return fits


def pick_by_topic(topic: str, registry, count: int, exclude: set[str] | frozenset[str],
                  defaults: tuple[str, ...] = DEFAULT_PARTICIPANTS) -> list[tuple[str, str]]:
    """The ``count`` voting personas (not in ``exclude``) whose lens fits the topic's words
    most (ties: the registry's order), each with why: the words and the lens phrases they fit.
    Too few fit: ``defaults``, then the registry's order, fill the rest, saying so.
    Deterministic: the same topic, the same panel."""
    words = _words(topic)
    scored, rest = [], []
    for index, p in enumerate(registry):
        if not p.votes or p.alias in exclude:
            continue
        fits = _fit(words, p)
        if fits:
            why = "; ".join(f"{w} ~ {ph!r}" for w, ph in fits.items())
            scored.append((-len(fits), index, p.alias, why))
        else:
            rank = defaults.index(p.alias) if p.alias in defaults else len(defaults)
            rest.append((rank, index, p.alias, UNFIT))
    picked = sorted(scored)[:count]
    picked += sorted(rest)[:count - len(picked)]
    return [(alias, why) for _, _, alias, why in picked]


def by_topic(topic: str, registry, count: int, exclude: set[str] | frozenset[str]) -> list[str]:
    """The aliases ``pick_by_topic`` picks."""
    return [alias for alias, _ in pick_by_topic(topic, registry, count, exclude)]


def reasons(picks: list[tuple[str, str]]) -> str:
    """The picks and why, on one line: ``architect (database ~ 'Data modeling'), ...``."""
    return ", ".join(f"{alias} ({why})" for alias, why in picks)
