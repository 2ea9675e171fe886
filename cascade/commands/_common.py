"""Helpers shared by the commands."""
from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from cascade.base.resources import LEDGER_SUFFIX

_SKIP_DIRS = {"node_modules", "venv", "__pycache__", "site-packages"}


def find_ledgers(start: Path) -> Iterator[Path]:
    """Every ``*.discussion.md`` below ``start``, skipping hidden and vendored folders."""
    for folder, dirs, files in os.walk(start):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIP_DIRS)
        for name in sorted(files):
            if name.endswith(LEDGER_SUFFIX):
                yield Path(folder) / name
