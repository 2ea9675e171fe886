"""Personas picked for a topic by their lens: the deterministic pick that auto-invite falls
back on, and the stand-in for a generated panel that cannot be used."""
from __future__ import annotations

import re

_WORD = re.compile(r"[a-z0-9]+")


def by_topic(topic: str, registry, count: int, exclude: set[str]) -> list[str]:
    """The ``count`` voting personas whose words overlap the topic's most (ties: the
    registry's order). Deterministic: the same topic, the same panel."""
    words = {w for w in _WORD.findall(topic.lower()) if len(w) > 2}
    scored = []
    for index, p in enumerate(registry):
        if not p.votes or p.alias in exclude:
            continue
        text = " ".join([p.role, *p.expertise, *p.concerns, p.personality]).lower()
        scored.append((-len(words & set(_WORD.findall(text))), index, p.alias))
    return [alias for _, _, alias in sorted(scored)[:count]]
