"""Helpers shared by the commands."""
from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from cascade.check.governance import inside, open_at
from cascade.protocol.discussion import LEDGER_SUFFIX, Discussion

_SKIP_DIRS = {"node_modules", "venv", "__pycache__", "site-packages"}


def find_ledgers(start: Path) -> Iterator[Path]:
    """Every ``*.discussion.md`` below ``start``, skipping hidden and vendored folders."""
    for folder, dirs, files in os.walk(start):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIP_DIRS)
        for name in sorted(files):
            if name.endswith(LEDGER_SUFFIX):
                yield Path(folder) / name


def ledger_paths(paths: list[str]) -> list[Path]:
    if paths:
        return [Path(p) for p in paths]
    return list(find_ledgers(Path(".")))


def open_ledger(path: str) -> Discussion:
    """The Discussion at a path a person typed to a command that writes beside it (a ledger,
    or the governed document that stands for its ledger), refused when it lies outside the
    repository (cascade.check.governance.inside). Commands that append take ``writing``."""
    ledger, doc, rule = inside(path)
    return open_at(path, ledger, doc, rule)
