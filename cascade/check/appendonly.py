"""The append-only rule for one ledger change, old bytes -> new bytes (docs/ci.md, 5).

An old text that lacks a final newline is extended by one first: appending after it is not an
edit (a diff shows one line removed and added again), lengthening its last line is. The old
text need not be read (``extends``: its blob id, or git's pack, packs.py); only when that
fails is the change diffed (``git diff -U0``) for the first line edited, removed, or with
text inserted before it.
"""
from __future__ import annotations

import hashlib
import re
from pathlib import Path

from cascade.base.gitio import git

_HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")
EDITS = {"edited": "ledger text edited", "removed": "ledger text removed",
         "inserted": "text inserted into the ledger's earlier text"}  # first_edit's kinds


def is_append(old: bytes, new: bytes) -> bool:
    if not old or new == old:
        return True
    if old.endswith(b"\n"):
        return new.startswith(old)
    return new.startswith(old + b"\n") or new.startswith(old + b"\r\n")


def object_id(data: bytes | memoryview, like: str) -> str:
    """git's blob id of ``data``, in the hash ``like`` uses (SHA-1, or SHA-256)."""
    algo = hashlib.sha256 if len(like) == 64 else hashlib.sha1
    digest = algo(b"blob %d\0" % len(data), usedforsecurity=False)
    digest.update(data)
    return digest.hexdigest()


def extends(old_blob: str, old_size: int, new: bytes, begins: bool = False) -> bool:
    """``is_append`` without reading the old blob: the new text's first ``old_size`` bytes
    must hash to the old blob's id -- unless ``begins``: they are proved to be the old text
    already (packs.py), and only where the old text ends is looked at."""
    n = old_size
    if n == 0:
        return True
    if len(new) < n or not (begins or object_id(memoryview(new)[:n], old_blob) == old_blob):
        return False
    return (len(new) == n or new[n - 1:n] == b"\n" or new[n:n + 1] == b"\n"
            or new[n:n + 2] == b"\r\n")


def line_count(data: bytes) -> int:
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def first_edit(root: Path, old_blob: str, new_blob: str, old: bytes) -> tuple[int, str]:
    """(line in the old text, "edited" | "removed" | "inserted") of the first change that is
    not an append, from the hunks of ``git diff -U0`` of the two blobs."""
    out = git(root, "diff", "--no-color", "--no-ext-diff", "--no-textconv", "--text", "-U0",
              old_blob, new_blob)
    last = line_count(old)
    for start, length, removed, added in hunks(out.decode("utf-8", "replace")):
        for number, value in enumerate(removed, start):
            if number == last and not old.endswith(b"\n") and added[:1] == [value]:
                continue  # the missing final newline, added back: not an edit
            return number, "edited" if added else "removed"
        if added and start < last and length == 0:
            return start + 1, "inserted"
    return 1, "edited"  # nothing line-based to show (e.g. only a byte order mark changed)


def hunks(diff: str) -> list[tuple[int, int, list[str], list[str]]]:
    """The hunks of a ``git diff -U0`` of one file: (its first line in the old text, how many
    old lines it covers, the lines removed, the lines added), each line without its end. With
    no context, a hunk's removed lines are those from its first line on, before its added
    ones; the file's header lines come before the first hunk, and a "\\ No newline at end of
    file" mark is no line."""
    found: list[tuple[int, int, list[str], list[str]]] = []
    for line in diff.split("\n"):
        m = _HUNK.match(line)
        if m is not None:
            found.append((int(m.group(1)), int(m.group(2) or 1), [], []))
        elif found and line[:1] in ("-", "+"):
            found[-1][2 if line[0] == "-" else 3].append(line[1:].rstrip("\r"))
    return found
