"""Short forms of a reply's markdown, for the summaries, tables and records the tool writes:
its first sentence, a table cell, its headings nested under one of the record's."""
from __future__ import annotations

import re

_SENTENCE_END = re.compile(r"(?<=[.!?])\s")
_HEADING = re.compile(r"^(#{1,5})(?=\s)", re.M)


def sentence(text: str, limit: int = 200) -> str:
    """The text's first sentence on one line, if it ends within ``limit`` characters; else
    its first ``limit`` characters, ``...`` marking the cut."""
    one = " ".join(text.split())
    m = _SENTENCE_END.search(one)
    if m and m.start() < limit:
        return one[:m.start()]
    return one[:limit - 3] + "..." if len(one) > limit else one


def cell(text: str, empty: str = "") -> str:
    """The text as one markdown table cell: on one line, its pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|") or empty


def nested(body: str, level: int = 3) -> str:
    """A reply's markdown under a heading of the record: its headings one level deeper, and
    never above ``level``."""
    return _HEADING.sub(lambda m: "#" * max(level, len(m.group(1)) + 1), body)
