"""``cascade check``: re-derive every verdict from what is committed. No model, no key; the
rules it applies are docs/ci.md's.

With a range (``from_ref``..``to_ref``): the governed documents changed since the merge base
pass the gate at ``to_ref`` (all of them, under the configuration at both ends, when the range
changes it); the ledgers changed parse, match their rule and hold no forged block; every
commit only appends to ledgers; the from-ref's ledgers survive into the to-ref's. Without
``from_ref``: every governed document and every ledger at ``to_ref`` (default HEAD), no walk.
"""
from __future__ import annotations

import contextlib
from pathlib import Path

from msgspec import Struct
from msgspec.structs import replace

from cascade.check.appendonly import line_count
from cascade.check.baseline import BASELINE, Baseline
from cascade.check.config import committed_config, repository_path
from cascade.check.documents import LEGACY, Governed, find_ledgers, governed, judge, source_of
from cascade.check.decision_drift import drift_notices
from cascade.check.annotations import place
from cascade.check.gittree import Blobs, Tree, commits, diff, merge_base, resolve
from cascade.check.history import History
from cascade.check.ledgers import Job, LedgerState, evaluate_all
from cascade.check.report import Notice, Problem, Report
from cascade.config.rules import Rule
from cascade.base.errors import CascadeError
from cascade.ledger.meaning import first_lost
from cascade.ledger.parse import parse
from cascade.check.governance import authority, check_shared_ledgers, ledger_rule
from cascade.config.ruleset import RuleSet, is_config
from cascade.protocol.authority import Authority
from cascade.base.resources import LEDGER_SUFFIX


class _End:
    """One end of the range: a commit's tree, its rules and its committed configuration."""

    def __init__(self, root: Path, commit: str, tree: Tree, config_root: Path) -> None:
        self.commit = commit
        self.tree = tree
        self.config_root = config_root
        self.rules = RuleSet(root, reader=tree, config_root=config_root)
        self.root = root
        self._authorities: dict[int, tuple[Rule, Authority]] = {}  # by rule: one per rule

    def where(self, rule: Rule) -> str:
        return rule.where(self.root, self.config_root)

    def authority(self, rule: Rule) -> Authority:
        """The authority ``rule`` gives, worked out once for all the ledgers it governs."""
        kept = self._authorities.get(id(rule))
        if kept is None or kept[0] is not rule:
            kept = self._authorities[id(rule)] = (rule, authority(rule, self.root,
                                                                  self.config_root))
        return kept[1]


def _config(tree: Tree) -> dict[str, str]:
    return {p: b for p, b in tree.files.items() if is_config(p)}


def run_check(root: Path, from_ref: str | None = None, to_ref: str | None = None,
              findings: bool = False) -> Report:
    """The check of a range (``findings``: the open findings of the governed documents'
    ledgers too, placed on the documents' lines)."""
    to_commit = resolve(root, to_ref or "HEAD", "--to-ref" if to_ref else "HEAD")
    from_commit = resolve(root, from_ref, "--from-ref") if from_ref else None
    blobs = Blobs(root)
    report = Report(from_commit, to_commit)
    with contextlib.ExitStack() as stack:
        tree = Tree(root, to_commit, blobs)
        end = _End(root, to_commit, tree, stack.enter_context(committed_config(tree)))
        scope = _scope(end, from_commit, stack)
        docs = governed(scope.changed, end.rules)
        check_shared_ledgers(docs, tree.files, end.rules)
        items = find_ledgers(docs, tree)
        old_items = _old_items(scope.old, scope.changed, tree, docs) if scope.old else []
        ledger_paths = [p for p in scope.changed if p.endswith(LEDGER_SUFFIX)]
        ledger_paths = list(dict.fromkeys(ledger_paths + [i.ledger for i in items
                                                          if i.ledger in tree.files]))
        blobs.fetch([tree.files[p] for p in ledger_paths])
        jobs = _jobs(end, scope.old, items, old_items, ledger_paths)
        if findings:
            jobs = [replace(j, findings=True) if j.doc and j.key == j.path else j
                    for j in jobs]
        states = evaluate_all(jobs)
        _raise_config_errors(root, [end.config_root] + ([scope.old.config_root] if scope.old
                                                        else []), states)
        first_lines = _first_lines(scope.base_tree, ledger_paths, blobs)
        for path in ledger_paths:
            _ledger_problems(report, path, states[path], jobs,
                             first_lines.get(path, 0) if from_commit else None)
        baseline = Baseline(root, tree, scope.base_tree if from_commit else None)
        _judge_all(report, items, states, end, tree, baseline)
        if findings:
            place(report, items, states, tree)
        if from_commit and scope.base_tree is not None and (
                scope.base_tree.files.get(BASELINE) != tree.files.get(BASELINE)):
            report.warnings.append(Notice(BASELINE, 1, _baseline_change(baseline)))
        for item in old_items:
            if baseline.vouches(item.doc, tree.files.get(item.doc)):
                continue  # unchanged since adoption: it needed no ledger before either
            _loosened(report, item, states, scope.old, end, docs)  # type: ignore[arg-type]
        report.warnings += [Notice(*n) for n in drift_notices(root, tree, end.rules)]
        report.documents, report.ledgers = len(items), len(ledger_paths)
        if from_commit:
            walk = commits(root, from_commit, to_commit)
            report.commits = len(walk)
            history = History(root, blobs)
            first = history.check(walk)  # the root causes first: rewritten history
            first += _survival(root, blobs, from_commit, scope.base, tree, history)
            report.problems[:0] = first
    return report


class _Scope(Struct):
    """What a check judges: the paths the range changed (every path, without a range), the
    merge base and its tree, and the configuration at the base when the range changes it."""

    changed: list[str]
    base: str | None = None
    base_tree: Tree | None = None
    old: _End | None = None


def _scope(end: _End, from_commit: str | None, stack: contextlib.ExitStack) -> _Scope:
    root, tree = end.root, end.tree
    if not from_commit:
        return _Scope(list(tree.files))
    base = merge_base(root, from_commit, end.commit)
    changes = diff(root, base, end.commit)
    scope = _Scope([c.path for c in changes if c.path], base,
                   Tree(root, base, tree.blobs) if base else None)
    base_tree = scope.base_tree
    if base_tree is not None and _config(base_tree) != _config(tree):
        # The range changes what decides: judge every governed document again, under the
        # configuration at both ends.
        scope.old = _End(root, base, base_tree, stack.enter_context(committed_config(base_tree)))
        scope.changed = list(tree.files)
    elif base_tree is not None and base_tree.files.get(BASELINE) != tree.files.get(BASELINE):
        scope.changed = list(tree.files)  # the baseline is configuration too: judge all
    # A ledger appended to in the range changes its document's verdict: judge it too.
    scope.changed += _documents_of(tree, scope.changed, end.rules)
    return scope


def _jobs(end: _End, old: _End | None, items: list, old_items: list,
          ledger_paths: list[str]) -> list[Job]:
    """A job per ledger to evaluate: each governed document's (under the rule at the end), each
    other changed ledger, and each document's again under the configuration at the base."""
    root, to_commit, tree = end.root, end.commit, end.tree
    judged = {i.ledger for i in items}
    jobs = [Job(i.ledger, i.ledger, tree.data(i.ledger), root, end.config_root,
                end.authority(i.rule), i.doc, tree.files[i.doc], to_commit)
            for i in items if i.ledger in tree.files]
    for path in ledger_paths:
        if path not in judged:
            rule = ledger_rule(end.rules, path, source_of(tree, path))
            jobs.append(Job(path, path, tree.data(path), root, end.config_root,
                            end.authority(rule) if rule else None, commit=to_commit))
    for i in old_items:
        if i.ledger in tree.files:
            jobs.append(Job(f"{i.ledger}|old", i.ledger, tree.data(i.ledger), root,
                            old.config_root, old.authority(i.rule), i.doc,  # type: ignore[union-attr]
                            tree.files[i.doc], to_commit))
    return jobs


def _ledger_problems(report: Report, path: str, state, jobs: list[Job],
                     new_from: int | None) -> None:
    """What a ledger's own text shows: it does not parse, blocks or events that do not hold
    (a problem from ``new_from`` on, the range's own lines; a warning before), a header that
    differs from its rule."""
    if state.error:
        line, message = state.error
        if message.startswith("unclosed code fence"):
            report.problems.append(Problem(path, line, message, "unclosed-fence"))
        else:
            report.problems.append(Problem(path, line, f"ledger does not parse: {message}",
                                           "parse"))
        return
    report.warnings += [Notice(path, line, message) for line, message in state.warnings]
    found = [(line, f"a block under {author}'s name that cascade did not write "
                    f"({reason}): it does not count", "forged")
             for line, author, reason in state.forged]
    found += [(line, f"a {kind} event that does not hold, not believed: {reason}",
               "unfounded-event") for line, kind, reason in state.unfounded]
    for line, message, kind in sorted(found):
        if new_from is not None and line > new_from:
            report.problems.append(Problem(path, line, message, kind))
        else:
            report.warnings.append(Notice(path, line, message))
    report.warnings += [Notice(path, line, message) for line, message in state.strays]
    if state.header_diff:
        job = next(j for j in jobs if j.key == path)
        report.problems.append(Problem(
            path, state.header_line,
            f"the header differs from {job.authority.where} in "  # type: ignore[union-attr]
            f"{', '.join(state.header_diff)}: the rule decides (a commit through the "
            "hook records the rule's settings)", "header"))


def _judge_all(report: Report, items: list, states: dict, end: _End, tree: Tree,
               baseline: Baseline) -> None:
    legacy = 0
    for item in items:
        verdict, problems = judge(item, states.get(item.ledger), end.where(item.rule), tree,
                                  baseline)
        legacy += verdict.verdict == LEGACY
        report.verdicts.append(verdict)
        report.problems += problems
    report.legacy = legacy  # healthy: said in the summary line, never as a warning


def _documents_of(tree: Tree, changed: list[str], rules: RuleSet) -> list[str]:
    """The documents that ledgers changed in the range name (read from their headers), that
    the to-ref holds -- less the ledgers of documents the range changes anyway."""
    known = {rule.ledger_path(doc) for doc, rule in governed(changed, rules).items()
             if "{date}" not in rule.discussion}
    present = [p for p in changed if p.endswith(LEDGER_SUFFIX) and p in tree.files
               and p not in known]
    tree.blobs.fetch([tree.files[p] for p in present])
    out = []
    for path in present:
        source = source_of(tree, path)
        if source and source in tree.files:
            out.append(source)
    return out


def _baseline_change(baseline: Baseline) -> str:
    """The range changes the adoption baseline: shown like a configuration change. An entry
    the merge base's baseline lacks vouches only for a document this range does not change."""
    added = [p for p, b in baseline.entries.items() if baseline.at_base.get(p) != b]
    removed = [p for p in baseline.at_base if p not in baseline.entries]
    return (f"this range changes the adoption baseline ({len(added)} entr"
            f"{'y' if len(added) == 1 else 'ies'} added or changed, {len(removed)} removed): an "
            "entry vouches only for a document unchanged since adoption and, when added in "
            "the range, unchanged by it")


def _old_items(old: _End, changed: list[str], tree: Tree, docs: dict[str, Rule]) -> list[Governed]:
    """Documents the merge-base configuration governs, with the ledger its rule names."""
    present = [p for p in changed if p in tree.files]
    return [i for i in find_ledgers(governed(present, old.rules), tree) if i.ledger in tree.files
            or i.doc not in docs]


def _loosened(report: Report, item: Governed, states: dict[str, LedgerState], old: _End,
              end: _End, docs: dict[str, Rule]) -> None:
    """A document the old configuration blocks must not pass because the range changed it."""
    new_rule = docs.get(item.doc)
    now = states.get(item.ledger)
    passes_now = new_rule is None or (now is not None and now.ok)
    before = states.get(f"{item.ledger}|old")
    blocked_before = before is None or not before.ok or bool(before.error)
    if not (passes_now and blocked_before):
        return
    why = ("no ledger" if before is None else
           before.error[1] if before.error else before.verdict)
    now_text = ("no rule governs it now" if new_rule is None
                else f"it passes under rule {new_rule.name!r} ({end.where(new_rule)})")
    report.problems.append(Problem(
        item.doc, 1, f"this range loosens the governance of {item.doc}: under rule "
                     f"{item.rule.name!r} ({old.where(item.rule)}) at {old.commit[:7]} it is "
                     f"blocked ({why}); "
                     f"{now_text}", "loosened"))


def _first_lines(base_tree: Tree | None, paths: list[str], blobs: Blobs) -> dict[str, int]:
    """How many lines each ledger had at the merge base (0: it did not exist)."""
    if base_tree is None:
        return {}
    present = {p: base_tree.files[p] for p in paths if p in base_tree.files}
    blobs.fetch(list(present.values()))
    return {path: line_count(blobs.get(blob)) for path, blob in present.items()}


def _survival(root: Path, blobs: Blobs, from_commit: str, base: str | None, tree: Tree,
              history: History) -> list[Problem]:
    """History only grows: every entry of every ledger at the from-ref must be in the
    to-ref's, in order, whatever the ancestry. Where the to-ref descends from the from-ref,
    the commit-by-commit walk proves this except across a ledger deleted and added again;
    otherwise (a rewound or rewritten history, or a branch behind its base) each ledger is
    compared with the from-ref's directly, and the message says how to check instead."""
    descends = base == from_commit
    old_tree = Tree(root, from_commit, blobs)
    problems = []
    behind = "" if descends else (
        f" ({tree.commit[:7]} does not contain {from_commit[:7]}: a rewound or rewritten "
        "history; a branch behind its base must merge or rebase onto it first -- see "
        "docs/ci.md)")
    for path, blob in old_tree.files.items():
        if not path.endswith(LEDGER_SUFFIX):
            continue
        now = tree.files.get(path)
        if now == blob:
            continue
        if descends and path not in history.recreated:
            continue
        old_ledger = parse(blobs.get(blob).decode("utf-8", "replace"), details=False)
        if now is None:
            source = old_ledger.header.source
            if source and source in tree.files:
                problems.append(Problem(path, 1, f"the ledger of {source} at {from_commit[:7]} "
                                        f"is gone at {tree.commit[:7]} while {source} exists"
                                        + behind, "deleted"))
            continue
        new_ledger = parse(blobs.get(now).decode("utf-8", "replace"), details=False)
        found = first_lost(old_ledger, new_ledger)
        if found:
            line, what = found
            problems.append(Problem(path, line, f"history rewritten: {what} -- line {line} of "
                                    f"the ledger at {from_commit[:7]} is not kept at "
                                    f"{tree.commit[:7]}" + behind, "rewritten"))
    return problems


def _raise_config_errors(root: Path, config_roots: list[Path],
                         states: dict[str, LedgerState]) -> None:
    for state in states.values():
        if state.config_error:
            shown, line, message = state.config_error
            for config_root in config_roots:
                path = repository_path(shown, config_root)
                if path != shown:
                    break
            raise CascadeError(message, root / path if path else None, line)
