"""``cascade hook``: the pre-commit gate.

For each staged file a rule governs, and each staged ledger: create the ledger if missing,
record a new source revision, run the pending persona turns (concurrently across ledgers and
personas), append to the working tree, stage what it wrote where that cannot touch the
person's own unstaged work (cascade.loop.staging), and decide from the *staged* ledgers
whether the commit may pass (cascade.loop.gate).

This module is the fast path: a commit that touches no governed path returns after reading
the rule files, having imported neither litellm nor Jinja2 (nor the ledger layer).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

from cascade.config.rules import NEVER_GOVERNED, Rule
from cascade.config.ruleset import RuleSet, is_config
from cascade.base.resources import LEDGER_SUFFIX, find_root


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
    """Governed documents and staged ledgers, using nothing heavier than PyYAML.

    Only what this commit changes is reviewed: when anything is governed (or a rule file is
    passed), the paths whose staged blob equals HEAD's are dropped -- ``pre-commit run
    --all-files`` passes every tracked file -- and ``staged`` is narrowed in place to the
    changed paths (so the rule-change check sees only those). A governed document whose
    staged blob is its adoption baseline's (``.cascade/baseline``) is not reviewed either.
    A commit that touches no governed path costs no git call."""
    governed: dict[str, Rule] = {}
    ledgers: list[str] = []
    for path in staged:
        if path.endswith(LEDGER_SUFFIX):
            ledgers.append(path)
            continue
        if path.endswith(NEVER_GOVERNED):
            continue
        rule = rules.governing(path)
        if rule is not None:
            governed[path] = rule
    if governed or ledgers or any(is_config(p) for p in staged):
        _only_changed(root, staged, governed, ledgers)
    return governed, ledgers


def _only_changed(root: Path, staged: list[str], governed: dict[str, Rule],
                  ledgers: list[str]) -> None:
    """Drop the paths whose staged content is HEAD's (one ``git diff-index`` call), and the
    documents whose staged content is their baseline blob (or differs from it only in its
    status or spacing)."""
    from cascade.base.gitio import index_blobs, read_blobs, staged_changes  # subprocess: not for a no-op

    listed = set(ledgers)
    wanted = [p for p in staged if p in governed or p in listed or is_config(p)]
    changed = staged_changes(root, wanted)
    if changed is None:
        return  # no commit yet (or git cannot tell): every path counts as changed
    unchanged = set(wanted) - set(changed)
    if unchanged:
        staged[:] = [p for p in staged if p not in unchanged]
        ledgers[:] = [p for p in ledgers if p not in unchanged]
        for path in unchanged:
            governed.pop(path, None)
    baseline_file = root / ".cascade" / "baseline"
    if governed and baseline_file.is_file():
        from cascade.check.baseline import parse  # with docstatus: not on the no-op path
        from cascade.base.docstatus import core

        entries = parse(baseline_file.read_text(errors="replace"))
        listed = [p for p in governed if p in entries]
        staged_blobs = index_blobs(root, listed)
        differ = {p: b for p, b in staged_blobs.items() if entries.get(p) != b}
        for path in set(staged_blobs) - set(differ):
            del governed[path]
        if differ:  # only the status or spacing changed (adr-tools' "Superseded by"): legacy
            texts = read_blobs(root, list(differ.values()) + [entries[p] for p in differ])
            for path, blob in differ.items():
                old = texts.get(entries[path])
                if old is not None and blob in texts and core(texts[blob]) == core(old):
                    del governed[path]


def _head_governed(root: Path, staged: list[str], governed: dict[str, Rule], out) -> None:
    """The commit changes rule files: a staged document HEAD's rules govern stays governed by
    them (a rule change cannot let the document it accompanies through)."""
    from cascade.check.gittree import Blobs, Tree  # a rule change only: not on the no-op path
    from cascade.base.errors import CascadeError

    try:
        head = Tree(root, "HEAD", Blobs(root))
    except CascadeError:
        return  # no commit yet
    old = RuleSet(root, reader=head)
    for path in staged:
        if path in governed or path.endswith(NEVER_GOVERNED):
            continue
        rule = old.governing(path)
        if rule is not None:
            governed[path] = rule
            print(f"cascade: {path}: this commit changes the rules, and the rule "
                  f"{rule.name!r} at HEAD governs it: it is reviewed under that rule (commit "
                  "the rule change on its own first)", file=out)


def _drift_review(root: Path, rules: RuleSet, staged: list[str], out) -> None:
    """When a rule that applies to a staged path asks for a drift review (``drift_review``,
    opt-in): ask it (cascade.loop.driftreview; advisory, it never blocks)."""
    if any(rule.drift_review for path in staged for folder in rules.files_for(path)
           for rule in rules.rules_in(folder)):
        from cascade.loop.driftreview import review_drift  # the model layers: not for a no-op

        review_drift(root, staged, out)


def run_hook(files: list[str], out=None) -> int:
    out = out or sys.stdout
    if files:  # pre-commit runs hooks at the top of the work tree and passes the staged paths
        root = find_root()
        staged = _relative(root, files)
    else:
        from cascade.base.gitio import repo_root, staged_paths  # a plain git hook: git is asked

        root = repo_root()
        staged = staged_paths(root)
    rules = RuleSet(root)
    governed, ledgers = candidates(root, staged, rules)
    if any(is_config(p) for p in staged):
        _head_governed(root, staged, governed, out)
    _drift_review(root, rules, staged, out)
    if not governed and not ledgers:
        return 0
    return 1 if _blocked(gate_items(root, rules, governed, ledgers, out)) else 0


def gate_items(root: Path, rules: RuleSet, governed: dict[str, Rule], ledgers: list[str], out,
               command: str | None = None):
    """Review ``governed`` (document -> rule) and ``ledgers`` as the gate does, and say how
    each stands (the status table): the items, with their verdicts. ``command``: None for the
    hook (it stages inside a commit only); a command a person runs (``cascade review``,
    cascade.commands.review) stages in the real index, as such commands do."""
    from cascade.base.gitio import repo_root
    from cascade.loop.hook_verdict import decide, status_table  # the ledger layers: not for a no-op
    from cascade.loop.discover import discover
    from cascade.loop.gate import check_models, close, on_consensus, run_turns  # asyncio, the model layers
    from cascade.ledger.lock import ledger_lock
    from cascade.loop.prepare import check_settings, check_staged, prepare
    from cascade.loop.staging import Stager, allowed, artifacts, stage_items
    from cascade.base.text import printable

    root = repo_root(root)
    check_settings(root)  # a bad providers file: exit 2 before anything is written
    items = discover(root, governed, ledgers, rules)
    stager = Stager(root, on=None if command is None else allowed())
    # Each ledger is read (prepare) only once its lock is held: what another writer appended
    # meanwhile decides who is still due. (A ledger behind a link is never read or written.)
    with ledger_lock(*(root / i.ledger for i in items if not i.problems),
                     holder=command or "cascade hook"):
        items = check_staged(root, items)  # before any model call
        problems = [p for item in items for p in item.problems]
        for line in problems:
            print(printable(f"cascade: {line}"), file=out)
        if not problems:
            for item in items:  # what each file held before the hook wrote: may it stage it?
                stager.remember(item.ledger, item.doc)
            prepared = [prepare(root, item, out) for item in items]
            check_models(root, prepared)  # nobody to ask: said before anything is written
            for item in prepared:
                item.ran.discussion.save()
                stager.remember(*artifacts(item))
            items = [close(root, item, out, stager) for item in run_turns(root, prepared, out)]
            items = stage_items(stager, items, out)
        items = decide(root, items)
        for item in items:
            if item.verdict.passed:
                on_consensus(root, item, out)
    blocked = _blocked(items)
    if blocked:
        print(f"\ncascade: {len(blocked)} of {len(items)} discussion(s) "
              + ("block this commit" if command is None else "are not at consensus"),
              file=out)
    if any(i.ran.appended and not i.staged.whole for i in items) and os.environ.get("PRE_COMMIT") == "1":
        # pre-commit stashes unstaged edits and restores them after the hook: its own caveat
        print("cascade: appended to the working tree only. If a ledger also has unstaged edits,"
              " pre-commit rolls these appends back: stage or stash your edits and commit again"
              " (the replies are cached: no new model calls).", file=out)
    print(printable(status_table(items)), file=out)
    for item in items:  # a passing review's open items reach its author
        for line in item.verdict.notes:
            print(printable(f"cascade: {line}"), file=out)
    return items


def _blocked(items) -> list:
    return [i for i in items if not i.verdict.passed]


