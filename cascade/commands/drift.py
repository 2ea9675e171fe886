"""``cascade drift [PATH...] [--ref REF] [--json]``: the accepted decisions the code has moved
away from (cascade.check.decision_drift), from committed state, no model (docs/cli.md). Exit 0,
silent, when nothing drifted; else exit 1, as a check that found something (a CI step that only
reports drift sets ``continue-on-error``).
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from cascade.check.config import committed_config
from cascade.check.decision_drift import Decision, drifted
from cascade.check.gittree import Blobs, Tree, resolve
from cascade.base.errors import CascadeError
from cascade.base.gitio import repo_root
from cascade.config.ruleset import RuleSet
from cascade.base.text import printable


def _relative(root: Path, paths: list[str]) -> list[str] | None:
    """PATHs (as the user typed them) relative to the top; "" is the top itself."""
    if not paths:
        return None
    out = []
    for p in paths:
        rel = os.path.relpath(Path(p).resolve(), root.resolve())
        if rel == ".." or rel.startswith("../"):
            raise CascadeError("is outside the repository", p)
        out.append("" if rel == "." else Path(rel).as_posix())
    return out


def table(decisions: list[Decision]) -> str:
    """The drifted decisions, each with its commits (newest first)."""
    lines = []
    for d in decisions:
        accepted = (f"accepted at {d.accepted[:7]} ({d.accepted_date})" if d.accepted
                    else "accepted")
        lines.append(f"{d.doc}: {accepted}, governs {', '.join(d.globs)}: "
                     f"{len(d.drift)} commit(s) since changed them")
        rows = [("commit", "date", "author", "subject", "governed paths it changed")]
        rows += [(c.short, c.date, c.author, c.subject, ", ".join(c.paths)) for c in d.drift]
        widths = [max(len(r[i]) for r in rows) for i in range(4)]
        for row in rows:
            cells = [row[i].ljust(widths[i]) for i in range(4)] + [row[4]]
            lines.append("  " + "  ".join(cells).rstrip())
        lines.append("")
    return "\n".join(lines)


def drift(paths: list[str], ref: str | None = None, as_json: bool = False) -> int:
    root = repo_root()
    commit = resolve(root, ref or "HEAD", "--ref" if ref else "HEAD")
    wanted = _relative(root, paths)
    tree = Tree(root, commit, Blobs(root))
    with committed_config(tree) as config_root:
        rules = RuleSet(root, reader=tree, config_root=config_root)
        found = drifted(root, tree, rules, wanted)
    moved = [d for d in found if d.drift]
    for d in found:
        if d.accepted is None:  # its history is cut (a shallow clone) or was rewritten
            print(printable(f"cascade drift: {d.doc}: the commit that accepted it is not in "
                            "the history: not checked"), file=sys.stderr)
    if as_json:
        json.dump({"commit": commit, "decisions": [d.as_dict() for d in found],
                   "drifted": len(moved)}, sys.stdout, indent=2)
        print()
    elif moved:
        print(printable(table(moved)))
        commits = len({c.id for d in moved for c in d.drift})
        print(f"cascade drift: {len(moved)} of {len(found)} accepted decision(s) drifted "
              f"({commits} commit(s))")
    return 1 if moved else 0
