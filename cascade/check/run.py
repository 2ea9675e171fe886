"""``cascade check``: re-derive every verdict from what is committed. No model, no key.

With a range (``from_ref``..``to_ref``): governed documents added, modified or renamed
between the merge base of the two refs and ``to_ref`` must pass the gate at ``to_ref``; every
ledger changed there must parse; every commit of the range must only append to ledgers.
Without ``from_ref``: every governed document and every ledger at ``to_ref`` (default HEAD),
and no history walk.
"""
from __future__ import annotations

from pathlib import Path

from cascade.check.config import committed_config, repository_path
from cascade.check.documents import find_ledgers, governed, judge
from cascade.check.gittree import Blobs, Tree, commits, diff, merge_base, resolve
from cascade.check.history import History
from cascade.check.ledgers import LedgerState, evaluate_all
from cascade.check.report import Notice, Problem, Report
from cascade.errors import CascadeError
from cascade.loop.rules import Rule, RuleSet
from cascade.resources import LEDGER_SUFFIX


def run_check(root: Path, from_ref: str | None = None, to_ref: str | None = None) -> Report:
    to_commit = resolve(root, to_ref or "HEAD", "--to-ref" if to_ref else "HEAD")
    from_commit = resolve(root, from_ref, "--from-ref") if from_ref else None
    blobs = Blobs(root)
    tree = Tree(root, to_commit, blobs)
    report = Report(from_commit, to_commit)
    with committed_config(tree) as config_root:
        rules = RuleSet(root, reader=tree, config_root=config_root)
        if from_commit:
            base = merge_base(root, from_commit, to_commit)
            changed = [c.path for c in diff(root, base, to_commit) if c.path]
        else:
            changed = list(tree.files)
        items = find_ledgers(governed(changed, rules), tree)
        paths = [p for p in changed if p.endswith(LEDGER_SUFFIX)]
        paths = list(dict.fromkeys(paths + [i.ledger for i in items if i.ledger in tree.files]))
        blobs.fetch([tree.files[p] for p in paths])
        states = evaluate_all([(p, tree.data(p)) for p in paths], root, config_root)
        _raise_config_errors(root, config_root, states)
        for path in paths:
            state = states[path]
            if state.error:
                line, message = state.error
                if message.startswith("unclosed code fence"):
                    report.problems.append(Problem(path, line, message, "unclosed-fence"))
                else:
                    report.problems.append(Problem(path, line,
                                                   f"ledger does not parse: {message}", "parse"))
            report.warnings += [Notice(path, line, message) for line, message in state.warnings]
        for item in items:
            verdict, problem = judge(item, tree, states.get(item.ledger),
                                     _where(item.rule, root, config_root))
            report.verdicts.append(verdict)
            if problem:
                report.problems.append(problem)
        report.documents, report.ledgers = len(items), len(paths)
        if from_commit:
            walk = commits(root, from_commit, to_commit)
            report.commits = len(walk)
            report.problems += History(root, blobs).check(walk)
    return report


def _raise_config_errors(root: Path, config_root: Path, states: dict[str, LedgerState]) -> None:
    for state in states.values():
        if state.config_error:
            shown, line, message = state.config_error
            path = repository_path(shown, config_root)
            raise CascadeError(message, root / path if path else None, line)


def _where(rule: Rule, root: Path, config_root: Path) -> str:
    """Where a rule is written, for messages: ``.ai-rules.yml:3``."""
    for top in (root, config_root):
        try:
            return f"{Path(rule.file).relative_to(top).as_posix()}:{rule.line}"
        except ValueError:
            continue
    return f"preset {Path(rule.file).name}:{rule.line}"
