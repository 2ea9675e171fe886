"""Writes docs/commands.md: `cascade --help` and every command's `--help`, generated from the
commands' declarations (cascade/cli.py). A test fails when the file is not current.

    python docs/commands.py
"""
from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from cascade.cli import reference  # noqa: E402

if __name__ == "__main__":
    (HERE / "commands.md").write_text(reference())
    print(f"wrote {HERE / 'commands.md'}")
