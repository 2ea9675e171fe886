"""``cascade merge-driver %O %A %B [%P]``: git's merge driver for ``*.discussion.md``
(``cascade init`` registers it). Two appends are merged whole-block
(cascade.check.mergedriver): exit 0. Anything else stays a conflict: git's usual conflict
markers are written into %A (``git merge-file``), the reason is printed, exit 1. Where
``cascade`` is not on PATH, git cannot start the driver and leaves the file conflicted.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from cascade.base.atomic import atomic_write
from cascade.check.mergedriver import merge_versions
from cascade.base.errors import CascadeError
from cascade.base.text import printable


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise CascadeError("no such file", path) from None
    except OSError as exc:
        raise CascadeError(f"cannot read: {exc.strerror}", path) from None


def merge_driver(ancestor: str, current: str, other: str, path: str | None = None) -> int:
    a, o, b = Path(ancestor), Path(current), Path(other)
    base, ours, theirs = _read(a), _read(o), _read(b)
    merged, reason = merge_versions(base, ours, theirs)
    if merged is not None:
        if merged != ours:
            atomic_write(o, merged, o.stat().st_mode)
        return 0
    name = path or current
    print(printable(f"cascade: {name}: not merged: {reason}; resolve the conflict by hand "
                    "(a ledger only grows: keep both sides' new blocks whole, earlier text "
                    "as it was)"), file=sys.stderr)
    _conflict_markers(o, a, b)
    return 1


def _conflict_markers(current: Path, ancestor: Path, other: Path) -> None:
    """git's own textual merge, with conflict markers, into ``current`` (left as it is when
    git cannot do it). Its result may even have no markers (one side edited earlier text
    the other did not touch): the file is reported conflicted all the same."""
    cmd = ["git", "merge-file", "--stdout", "-L", "ours", "-L", "base", "-L", "theirs"]
    try:
        proc = subprocess.run([*cmd, str(current), str(ancestor), str(other)],
                              capture_output=True, check=False)
    except OSError:
        return
    if proc.returncode < 0 or proc.returncode > 127 or not proc.stdout:
        return  # an error (or nothing to show): %A keeps ours
    atomic_write(current, proc.stdout, current.stat().st_mode)
