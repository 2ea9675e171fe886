"""``cascade hook``: the pre-commit gate.

For each staged file a rule governs, and each staged ledger: create the ledger if missing,
record a new source revision, run the pending persona turns (concurrently across ledgers and
personas), append to the working tree -- never the index -- and decide from the *staged*
ledgers whether the commit may pass (cascade.loop.gate).

This module is the fast path: a commit that touches no governed path returns after reading
the rule files, having imported neither litellm nor Jinja2 (nor the ledger layer).
"""
from __future__ import annotations

import sys
from pathlib import Path

from cascade.loop.rules import NEVER_GOVERNED, Rule, RuleSet, is_config
from cascade.resources import LEDGER_SUFFIX, find_root


def _relative(root: Path, files: list[str]) -> list[str]:
    out = []
    for f in files:
        p = Path(f)
        if p.is_absolute():
            try:
                p = p.resolve().relative_to(root)
            except ValueError:
                continue
        out.append(p.as_posix())
    return out


def candidates(root: Path, staged: list[str], rules: RuleSet) -> tuple[dict[str, Rule], list[str]]:
    """Governed documents and staged ledgers, using nothing heavier than PyYAML."""
    governed: dict[str, Rule] = {}
    ledgers: list[str] = []
    for path in staged:
        if path.endswith(LEDGER_SUFFIX):
            ledgers.append(path)
            continue
        if path.endswith(NEVER_GOVERNED) or not rules.files_for(path):
            continue
        rule = rules.governing(path)
        if rule is not None:
            governed[path] = rule
    return governed, ledgers


def _head_governed(root: Path, staged: list[str], governed: dict[str, Rule], out) -> None:
    """The commit changes rule files: a staged document HEAD's rules govern stays governed by
    them (a rule change cannot let the document it accompanies through)."""
    from cascade.check.gittree import Blobs, Tree
    from cascade.errors import CascadeError

    try:
        head = Tree(root, "HEAD", Blobs(root))
    except CascadeError:
        return  # no commit yet
    old = RuleSet(root, reader=head)
    for path in staged:
        if path in governed or path.endswith(NEVER_GOVERNED) or not old.files_for(path):
            continue
        rule = old.governing(path)
        if rule is not None:
            governed[path] = rule
            print(f"cascade: {path}: this commit changes the rules, and the rule "
                  f"{rule.name!r} at HEAD governs it: it is reviewed under that rule (commit "
                  "the rule change on its own first)", file=out)


def run_hook(files: list[str], out=None) -> int:
    out = out or sys.stdout
    if files:  # pre-commit runs hooks at the top of the work tree and passes the staged paths
        root = find_root()
        staged = _relative(root, files)
    else:
        from cascade.loop.gitio import repo_root, staged_paths

        root = repo_root()
        staged = staged_paths(root)
    rules = RuleSet(root)
    governed, ledgers = candidates(root, staged, rules)
    if any(is_config(p) for p in staged):
        _head_governed(root, staged, governed, out)
    if not governed and not ledgers:
        return 0
    from cascade.loop.gate import (
        check_staged, decide, discover, on_consensus, prepare, run_turns, status_table,
    )
    from cascade.loop.gitio import git_dir, repo_root
    from cascade.loop.lock import repo_lock
    from cascade.text import printable

    root = repo_root(root)
    with repo_lock(git_dir(root)):
        items = discover(root, governed, ledgers, rules)
        check_staged(root, items)  # before any model call
        problems = [p for item in items for p in item.problems]
        for line in problems:
            print(printable(f"cascade: {line}"), file=out)
        if not problems:
            for item in items:
                prepare(root, item, out)
            run_turns(root, items, out)
        decide(root, items)
        for item in items:
            if item.passed:
                on_consensus(root, item, out)
    blocked = [i for i in items if not i.passed]
    if blocked:
        print(f"\ncascade: {len(blocked)} of {len(items)} discussion(s) block this commit",
              file=out)
    if any(i.appended for i in items):
        print("cascade: appended to the working tree only. If a ledger also has unstaged edits,"
              " pre-commit rolls these appends back: stage or stash your edits and commit again"
              " (the replies are cached: no new model calls).", file=out)
    print(printable(status_table(items)), file=out)
    return 1 if blocked else 0


