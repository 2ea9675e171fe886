"""The ledger's line grammar: the one definition of structure, shared by the parser and the
writer, so that the writer's idea of where a fence, a block or a vote begins and ends is
exactly the parser's.

A line is structural only at column 0 and outside a fenced code block. Whitespace here is
the space and the tab, nothing else: a line indented by U+00A0, U+3000 or a form feed is text,
for the parser and the writer alike.

- A fence opens with up to three spaces or tabs, then three or more backticks (an info string
  without backticks may follow) or three or more tildes; it closes with up to three spaces or
  tabs, then at least as many of the same character, then only spaces or tabs.
- A *delimiter* is three or more ``-``, then only spaces or tabs. Inside a comment block the
  first delimiter outside a fence ends the block, whatever follows it: an append can never
  turn a block's end into a thematic break. Outside a block, a delimiter opens a block when
  the next non-blank line is a ``Name:`` line.
- Inside a block: ``VOTE:`` lines (any case) and the tool's stamp (``<!-- cascade:ai ... -->``,
  ``<!-- cascade:decision ... -->``); everything else is the comment's markdown.
- Between blocks: state events, one HTML comment line each (``<!-- VOTE-RESET: ... -->``).
"""
from __future__ import annotations

import re

DELIMITER = re.compile(r"-{3,}[ \t]*\Z")
NAME = re.compile(r"Name:[ \t]*([^ \t].*?)[ \t]*\Z")
VOTE = re.compile(r"(?i:vote):[ \t]*(.*?)[ \t]*\Z")
FENCE_OPEN = re.compile(r"[ \t]{0,3}(`{3,}(?=[^`]*\Z)|~{3,})")
_FENCE_CLOSE = re.compile(r"[ \t]{0,3}(`{3,}|~{3,})[ \t]*\Z")
STAMP = re.compile(r"<!--[ \t]*cascade:(ai|decision|tool)\b(.*?)-->[ \t]*\Z")
EVENT = re.compile(r"<!--[ \t]*([A-Z][A-Z-]+[A-Z])[ \t]*:?[ \t]*(.*?)[ \t]*-->[ \t]*\Z")


FENCE_FIRST = frozenset(" \t`~")  # the only first characters a fence line can have


def is_blank(line: str) -> bool:
    return not line.strip(" \t")


def fence_opens(line: str) -> str | None:
    """The fence a line opens (e.g. ``"````"``), or None."""
    m = FENCE_OPEN.match(line)
    return m.group(1) if m else None


def fence_closes(line: str, fence: str) -> bool:
    if line[:1] not in FENCE_FIRST:  # most lines in a fence: no pattern to run
        return False
    m = _FENCE_CLOSE.match(line)
    return bool(m) and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence)


def is_delimiter(line: str) -> bool:
    return line[:1] == "-" and DELIMITER.match(line) is not None


def name_of(line: str) -> str | None:
    if not line.startswith("Name:"):
        return None
    m = NAME.match(line)
    return m.group(1) if m else None


def is_vote_line(line: str) -> bool:
    return line[:5].lower() == "vote:"


def structural_in_block(line: str) -> bool:
    """Would the parser read this line, inside a block and outside a fence, as anything but
    markdown? The writer indents every such line by one space (markdown renders it the same).
    ``Name:`` and every ``<!--`` line are included too: they are structure between blocks."""
    first = line[:1]
    if first == "-":
        return is_delimiter(line)
    if first == "N":
        return line.startswith("Name:")
    if first in "Vv":
        return is_vote_line(line)
    if first == "<":
        return line.startswith("<!--")
    return False


def trimmed(lines: list[str]) -> str:
    """``lines`` joined, without the blank lines at either end (as a block's body is read)."""
    lo, hi = 0, len(lines)
    while lo < hi and is_blank(lines[lo]):
        lo += 1
    while hi > lo and is_blank(lines[hi - 1]):
        hi -= 1
    return "\n".join(lines[lo:hi])


def fence_state(lines: list[str], fence: str | None = None) -> str | None:
    """The fence still open after ``lines`` (None: none), tracked as the parser tracks it."""
    for line in lines:
        if fence is not None:
            if fence_closes(line, fence):
                fence = None
        else:
            fence = fence_opens(line)
    return fence
