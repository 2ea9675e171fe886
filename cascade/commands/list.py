from __future__ import annotations

from pathlib import Path

from cascade.commands._common import find_ledgers
from cascade.errors import CascadeError, display_path
from cascade.loop.governance import open_discussion
from cascade.text import printable


def list_(status: str | None) -> int:
    rows = []
    for path in find_ledgers(Path(".")):
        try:
            d = open_discussion(path)
            if status and d.status.lower() != status.lower():
                continue
            votes = d.consensus_result.counts
            tally = f"{votes['READY']} ready / {votes['CHANGES']} changes / {votes['REJECT']} reject"
            rows.append((display_path(path), d.title, d.phase, d.status, tally))
        except CascadeError as exc:
            rows.append((display_path(path), f"(error: {exc.message})", "", "", ""))
    if not rows:
        print("No discussions found (looked for *.discussion.md below this folder).")
        return 0
    rows = [tuple(printable(c) for c in row) for row in rows]  # titles come from ledgers
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)) + "  " + row[4])
    return 0
