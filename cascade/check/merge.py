"""The append-only rule for a merge commit's version of a ledger (docs/ci.md, 5, *Merges*):
the lines all parents' versions share at the start (the merge base's text, and what both
sides appended alike) begin the merged version unchanged; after them, every *unit* a parent
appended -- a comment block from its ``Name:`` line to its last line, a state event line, or
the text before the first block -- appears in it unchanged and contiguous, each parent's units
in their order. Blank lines and ``---`` delimiters at a unit's edges are not part of it (a
merge may share or duplicate delimiters); text the merge itself adds is an append.
"""
from __future__ import annotations

import re

from cascade.check.appendonly import is_append
from cascade.ledger.parse import parse

_EDGE = re.compile(r"\s*(-{3,}\s*)?\Z")  # a blank line or a bare delimiter


def _lines(data: bytes) -> list[str]:
    text = data.decode("utf-8", "replace")
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


def edges(lines: list[str]) -> tuple[int, int]:
    """Where ``lines`` begin and end without the blank and delimiter lines at their edges."""
    lo, hi = 0, len(lines)
    while lo < hi and _EDGE.match(lines[lo]):
        lo += 1
    while hi > lo and _EDGE.match(lines[hi - 1]):
        hi -= 1
    return lo, hi


def _units(data: bytes, start: int) -> list[tuple[int, list[str]]]:
    """(first line number, lines) of each unit after the first ``start`` lines."""
    lines = _lines(data)
    ledger = parse(data.decode("utf-8", "replace"))
    bounds = sorted({e.line for e in ledger.entries if e.line > start} | {start + 1})
    bounds.append(len(lines) + 1)
    units = []
    for lo, hi in zip(bounds, bounds[1:]):
        chunk = lines[lo - 1:hi - 1]
        first, last = edges(chunk)
        if last > first:
            units.append((lo + first, chunk[first:last]))
    return units


def _find(haystack: list[str], needle: list[str], pos: int) -> int:
    """Index after the first occurrence of ``needle`` in ``haystack[pos:]``, or -1."""
    n = len(needle)
    head = needle[0]
    for i in range(pos, len(haystack) - n + 1):
        if haystack[i] == head and haystack[i:i + n] == needle:
            return i + n
    return -1


def merge_problem(parents: list[tuple[str, bytes]], result: bytes) -> tuple[int, str] | None:
    """``parents``: (parent commit, its version) for each parent that has the ledger.
    Returns (line, reason) for the first text the merge dropped or changed, or None."""
    if all(is_append(data, result) for _, data in parents):
        return None  # every parent's version is a prefix: nothing was dropped
    versions = [(sha, _lines(data), data) for sha, data in parents]
    merged = _lines(result)
    shared = min(len(lines) for _, lines, _ in versions)
    for i in range(shared):
        if len({lines[i] for _, lines, _ in versions}) > 1:
            shared = i
            break
    base = versions[0][1][:shared]
    if merged[:shared] != base:
        line = next(i for i, text in enumerate(base) if i >= len(merged) or merged[i] != text)
        return line + 1, "changes text its parents share"
    for sha, _lines_, data in versions:
        pos = shared
        for line, unit in _units(data, shared):
            pos = _find(merged, unit, pos)
            if pos < 0:
                return line, f"drops or changes text of parent {sha[:7]} (its line {line})"
    return None
