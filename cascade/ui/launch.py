"""``cascade ui [PATH]``: the terminal UI (cascade.ui.app) on a folder's discussions or one
ledger. Textual is the ``ui`` extra: without it, one line says how to install it."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from cascade.base.errors import CascadeError
from cascade.check.governance import resolve


def ui(path: str) -> int:
    target = Path(path)
    if not target.exists():
        raise CascadeError("no such file or folder", target)
    if target.is_file() and not target.name.endswith(".discussion.md"):
        target = resolve(path)[0]  # a governed document: its ledger (else exit 2, said)
        if not target.is_file():
            raise CascadeError("no discussion yet: stage the document and commit, or cascade "
                               "turn it", target)
    if importlib.util.find_spec("textual") is None:
        raise CascadeError("the terminal UI needs Textual: pip install 'cascadingdev[ui]'")
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise CascadeError("the terminal UI needs a terminal (stdin and stdout)")
    from cascade.ui.app import CascadeApp  # Textual: only when the UI runs

    code = CascadeApp(target).run()
    return int(code or 0)
