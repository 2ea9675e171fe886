"""Governed documents at the checked commit, their ledgers, and the gate's verdict on each.

The verdict is the hook's (cascade.loop.gate.decide) applied to committed content: the
ledger must exist, must have reviewed the committed revision of the document (its last
``SOURCE-REVISION`` is the document's blob id), and must be at consensus with outcome READY.
"""
from __future__ import annotations

from dataclasses import dataclass

from cascade.check.gittree import Tree
from cascade.check.ledgers import LedgerState
from cascade.check.report import Problem, Verdict
from cascade.ledger.parse import parse
from cascade.loop.globs import glob_match
from cascade.loop.rules import NEVER_GOVERNED, Rule, RuleSet
from cascade.resources import LEDGER_SUFFIX


@dataclass
class Governed:
    doc: str
    rule: Rule
    ledger: str  # where the ledger is (or, if missing, where the rule says it belongs)


def governed(paths: list[str], rules: RuleSet) -> dict[str, Rule]:
    """The paths a rule governs, with their rule (nearest rule file wins, as in the hook)."""
    out: dict[str, Rule] = {}
    for path in paths:
        if path.endswith(NEVER_GOVERNED) or path.endswith(LEDGER_SUFFIX):
            continue
        if rules.files_for(path):
            rule = rules.governing(path)
            if rule is not None:
                out[path] = rule
    return out


def find_ledgers(docs: dict[str, Rule], tree: Tree) -> list[Governed]:
    """Each document's ledger at the commit. For a ``{date}`` pattern, the first (sorted)
    matching ledger whose header names the document as its Source, as the hook does."""
    found = []
    dated: dict[str, list[str]] = {}
    for doc, rule in docs.items():
        if "{date}" not in rule.discussion:
            found.append(Governed(doc, rule, rule.ledger_path(doc)))
            continue
        pattern = rule.ledger_path(doc, date="*")
        if pattern not in dated:
            dated[pattern] = sorted(p for p in tree.files if glob_match(pattern, p))
        tree.blobs.fetch([tree.files[p] for p in dated[pattern]])
        ledger = next((p for p in dated[pattern] if _source(tree, p) == doc), None)
        found.append(Governed(doc, rule, ledger or rule.ledger_path(doc)))
    return found


def _source(tree: Tree, path: str) -> str | None:
    return parse(tree.data(path).decode("utf-8", "replace")).header.source


def _votes(state: LedgerState) -> str:
    return " ".join(f"{v}:{n}" for v, n in state.counts.items() if n) or "-"


def judge(item: Governed, tree: Tree, state: LedgerState | None,
          rules_file: str) -> tuple[Verdict, Problem | None]:
    """The gate's verdict on one governed document; a Problem when it blocks."""
    doc, ledger = item.doc, item.ledger

    def blocked(file: str, line: int, reason: str, kind: str, votes: str = "-"):
        return Verdict(doc, ledger, False, reason, votes), Problem(file, line, reason, kind)

    if state is None:
        return blocked(doc, 1, f"governed by rule {item.rule.name!r} ({rules_file}) but its "
                               f"ledger {ledger} is not committed", "missing-ledger")
    if state.error or state.config_error:
        return Verdict(doc, ledger, False, "ledger does not parse"), None  # reported once
    votes = _votes(state)
    blob = tree.files[doc]
    if state.source_revision != blob:
        reason = (f"the ledger reviewed another revision of {doc} "
                  f"({state.source_revision[:7]}; committed: {blob[:7]})"
                  if state.source_revision else
                  f"the ledger records no revision of {doc} (committed: {blob[:7]})")
        return blocked(ledger, state.revision_line, reason, "stale-revision", votes)
    if state.reached and state.outcome == "READY":
        return Verdict(doc, ledger, True, f"consensus READY ({state.reason})", votes), None
    if state.reached:
        reason = f"consensus {state.outcome}: the panel rejects {doc} ({state.reason})"
    else:
        reason = f"no consensus on {doc}: {state.reason}"
        if state.missing:
            reason += f"; waiting for {', '.join(state.missing)}"
    return blocked(ledger, state.last_line, reason, "no-consensus", votes)
