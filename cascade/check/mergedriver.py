"""Merge two versions of a ledger that both only appended to their common base: what the git
merge driver (``cascade merge-driver %O %A %B %P``) writes, so that two branches that each
add a comment no longer conflict (both append at the end of the file).

The result is the base's bytes, then the whole text one side appended, then the whole blocks
(and state events) the other side appended that the first did not already write, each side's
text verbatim. Blocks both sides appended alike (the same cached persona reply, the same
``SOURCE-REVISION`` event) are kept once when the later side begins with them; a block in
common elsewhere is kept twice rather than reordered. Between the two sides the merge adds
only what a ledger adds before its first append (``LedgerFile._lead``: a missing final
newline, the ``---`` closing a block the first side left open, a blank line), and the opening
``---`` of a block whose delimiter the other side shared with a block in common.

Order. A merge cannot know which side's comments came first, and the ledger's state is read
in file order (each voter's *latest* vote counts; a phase transition or vote reset ends the
votes before it), so the order is fixed, and chosen to fail closed:

- a side whose new entries change the state (a ``PHASE-TRANSITION``, ``VOTE-RESET``,
  ``SOURCE-REVISION``, ``OUTCOME`` or ``SETTINGS`` event the other side did not also write)
  goes last when the other side wrote none: the other side's comments and votes, cast in the
  base's state (the earlier revision, the earlier phase), are then reset by that change as
  they would have been, not counted as answers to it;
- otherwise "ours" (``%A``, the branch merged into; in a rebase, the upstream) comes first
  and "theirs" (``%B``, the branch merged in; in a rebase, the commit replayed) last: a
  person who voted differently on the two branches is read as having voted last on theirs.

A merge never adds, removes or changes a vote; the order decides only which of one voter's
two votes is the latest, what a reset ends when both sides wrote one, which question a plain
``A:`` answers. The gate judges the merged ledger against the merged document like any other
version (a document changed on both sides is a new revision: stale until the panel reviews it).

Anything else is a conflict (``None`` and the reason): a ledger both branches created (no
base: two headers), a side that is not an append of the base or whose append changes what
the base's text says, a version that is not UTF-8, a side that ends inside a code fence or an
unfinished header, or a result the merge rules of ``cascade check`` and of the hook
(``merge_problem``, ``merge_lost``) would not accept: every result is checked with them.
"""
from __future__ import annotations

import re

from msgspec import Struct, field

from cascade.check.appendonly import is_append
from cascade.check.merge import edges, merge_problem
from cascade.ledger.grammar import is_delimiter, name_of
from cascade.ledger.meaning import changed_by_append, merge_lost
from cascade.ledger.records import Comment, Ledger
from cascade.ledger.parse import parse

_LINE = re.compile(r"[^\n]*\n|[^\n]+")  # a line with its ending; the parser splits on \n


def _bare(line: str) -> str:
    return line.removesuffix("\n").removesuffix("\r")


class _Side(Struct):
    name: str
    text: str
    ledger: Ledger
    lines: list[str]  # with their endings
    units: list[tuple[int, tuple[str, ...]]] = field(default_factory=list)  # (start, key)
    events: list[tuple[str, ...]] = field(default_factory=list)  # keys of new events


def _key(lines: list[str]) -> tuple[str, ...]:
    """A unit's lines without line endings and without blank or delimiter lines at its edges."""
    bare = [_bare(ln) for ln in lines]
    lo, hi = edges(bare)
    return tuple(bare[lo:hi])


def _side(name: str, text: str, base_text: str) -> _Side:
    ledger = parse(text, details=False)
    lines = _LINE.findall(text)
    nb = len(_LINE.findall(base_text))
    side = _Side(name, text, ledger, lines)
    # Where each new entry starts (0-based index into lines): a comment at its own opening
    # delimiter, or at its Name: line when that delimiter closed the block before it (or is
    # the base's); an event at its line.
    starts: list[tuple[int, bool]] = []
    prev_close = 0
    for entry in ledger.entries:
        if isinstance(entry, Comment):
            if entry.line > nb:
                start = entry.line - 1
                j = start - 1
                while j >= nb and not _bare(lines[j]).strip(" \t"):
                    j -= 1
                if j >= nb and j + 1 != prev_close and is_delimiter(_bare(lines[j])):
                    start = j
                starts.append((start, False))
            prev_close = entry.end_line + 1  # 1-based line of its closing delimiter
        elif entry.line > nb:
            starts.append((entry.line - 1, True))
    bounds = [s for s, _ in starts] + [len(lines)]
    lead = _key(lines[nb:bounds[0]])
    if lead:  # text before the first new entry (not only blank lines and delimiters)
        side.units.append((nb, lead))
    for (start, is_event), end in zip(starts, bounds[1:]):
        key = _key(lines[start:end])
        side.units.append((start, key))
        if is_event:
            side.events.append(key)
    return side


def _matched(first: _Side, second: _Side) -> int:
    """How many of ``second``'s units, from its first, ``first`` already has, in order."""
    keys = [k for _, k in first.units]
    pos = 0
    for n, (_, key) in enumerate(second.units):
        try:
            pos = keys.index(key, pos) + 1
        except ValueError:
            return n
    return len(second.units)


def _changes_state(side: _Side, other: _Side) -> bool:
    theirs = set(other.events)
    return any(key not in theirs for key in side.events)


def _join(first: _Side, rest: list[str]) -> str:
    """``first``'s text, then ``rest`` (whole units of the other side), as an append would."""
    text = first.text
    if not rest:
        return text
    nl = first.ledger.newline
    glue = ""
    if text and not text.endswith("\n"):
        glue += nl
    if first.ledger.open_block:
        glue += "---" + nl
    if text and not (text + glue).replace("\r\n", "\n").endswith("\n\n"):
        glue += nl
    if name_of(_bare(rest[0])) is not None:  # its opening delimiter was shared: write one
        glue += "---" + nl
    return text + glue + "".join(rest)


def merge_versions(base: bytes, ours: bytes, theirs: bytes) -> tuple[bytes | None, str]:
    """(merged bytes, "") or (None, why the versions are a conflict)."""
    if ours == theirs or theirs == base:
        return ours, ""
    if ours == base:
        return theirs, ""
    if not base:  # both branches created it (git's add/add): two headers, two discussions
        return None, "both branches created this ledger"
    try:
        texts = [data.decode("utf-8") for data in (base, ours, theirs)]
    except UnicodeDecodeError:
        return None, "a version is not UTF-8"
    base_ledger = parse(texts[0], details=False)
    sides = []
    for name, data, text in (("ours", ours, texts[1]), ("theirs", theirs, texts[2])):
        if not is_append(base, data):
            return None, f"{name} changed the earlier text (not only appended)"
        side = _side(name, text, texts[0])
        found = changed_by_append(base_ledger, side.ledger)
        if found:
            return None, f"{name}'s append changes the earlier text's line {found[0]}: {found[1]}"
        if side.ledger.open_fence:
            return None, f"{name} ends inside a code fence (line {side.ledger.open_fence_line})"
        if side.ledger.header_open:
            return None, f"{name} ends inside the header"
        sides.append(side)
    first, second = sides
    if _changes_state(first, second) and not _changes_state(second, first):
        first, second = second, first
    matched = _matched(first, second)
    rest = second.lines[second.units[matched][0]:] if matched < len(second.units) else []
    merged = _join(first, rest).encode("utf-8")
    parents = [("ours", ours), ("theirs", theirs)]
    result_ledger = parse(merged.decode("utf-8"), details=False)
    found = (None if is_append(base, merged) else (1, "does not begin with the base"))
    found = found or merge_problem(parents, merged) or merge_lost(
        [(s.name, s.ledger) for s in sides], result_ledger)
    if found:  # a safety net: the construction above should never get here
        return None, f"the merged version would not pass cascade check (line {found[0]}: {found[1]})"
    return merged, ""
