"""Governed documents at the checked commit, their ledgers, and the gate's verdict on each:
the hook's (cascade.protocol.verdict.gate) on committed content, under the authority of the
rule that governs the document (docs/ci.md, 1).
"""
from __future__ import annotations

import shlex

from msgspec import Struct

from cascade.check.gittree import Tree
from cascade.check.ledgers import LedgerState
from cascade.check.report import Problem, DocumentVerdict
from cascade.config.precommit import CONFIG, hook_filter
from cascade.config.rules import NEVER_GOVERNED, Rule
from cascade.base.docstatus import core
from cascade.ledger.parse import HEADER_BYTES, parse_header
from cascade.config.globs import glob_match
from cascade.config.ruleset import RuleSet
from cascade.protocol.verdict import changed_core
from cascade.base.resources import LEDGER_SUFFIX


class Governed(Struct):
    doc: str
    rule: Rule
    ledger: str  # where the ledger is (or, if missing, where the rule says it belongs)


def governed(paths: list[str], rules: RuleSet) -> dict[str, Rule]:
    """The paths a rule governs, with their rule (nearest rule file wins, as in the hook)."""
    out: dict[str, Rule] = {}
    for path in paths:
        if path.endswith(NEVER_GOVERNED) or path.endswith(LEDGER_SUFFIX):
            continue
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
        ledger = next((p for p in dated[pattern] if source_of(tree, p) == doc), None)
        found.append(Governed(doc, rule, ledger or rule.ledger_path(doc)))
    return found


def source_of(tree: Tree, path: str) -> str | None:
    """The document a committed ledger's header names (only its first bytes are read)."""
    return parse_header(tree.data(path)[:HEADER_BYTES].decode("utf-8", "replace")).source


LEGACY = "legacy, unchanged since adoption (.cascade/baseline): ok"


def _how_to_review(doc: str, tree: Tree) -> str:
    """How the committed document gets its review: ``cascade review`` runs the hook's review
    of the revision a commit holds (the committed one: ``git add`` of it stages nothing, so
    no commit of it would run the hook) and stages the ledger, and ``git commit`` lands the
    ledger through the hook -- unless the pre-commit config keeps the hook from seeing it."""
    if CONFIG in tree.files and CONFIG not in tree.links:
        view = hook_filter(tree.data(CONFIG).decode("utf-8", "replace"))
        if view is not None and view.hides(doc):
            return (f"{CONFIG} runs the cascade hook only for {view.describe()}, which hides "
                    "it: remove that filter, then commit the document again")
    quoted = shlex.quote(doc)
    message = shlex.quote(f"Review of {doc}")
    return (f"review its committed revision and commit the ledger: cascade review {quoted} "
            f"&& git commit -m {message}")


def judge(item: Governed, state: LedgerState | None, where: str, tree: Tree,
          baseline=None) -> tuple[DocumentVerdict, list[Problem]]:
    """The gate's verdict on one governed document; the problems when it blocks. A document
    the adoption baseline vouches for (cascade.check.baseline) needs no ledger."""
    doc, ledger = item.doc, item.ledger
    links = [p for p in (doc, ledger) if p in tree.links]
    if links:
        what = "document" if links[0] == doc else "ledger"
        reason = (f"the {what} {links[0]} is a symbolic link: cascade never follows one "
                  "(commit the file itself)")
        return (DocumentVerdict(doc, ledger, False, reason),
                [Problem(links[0], 1, reason, "symlink")])
    if baseline is not None and baseline.vouches(doc, tree.files.get(doc)):
        return DocumentVerdict(doc, ledger, True, LEGACY), []
    if state is None:
        reason = (f"governed by rule {item.rule.name!r} ({where}) but its ledger {ledger} is "
                  f"not committed: {_how_to_review(doc, tree)}")
        return (DocumentVerdict(doc, ledger, False, reason),
                [Problem(doc, 1, reason, "missing-ledger")])
    if state.error or state.config_error:
        return DocumentVerdict(doc, ledger, False, "ledger does not parse"), []  # reported once
    problems = []
    if state.source and state.source != doc and state.source in tree.files:
        reason = (f"the ledger {ledger} names {state.source} as its document, not {doc}: "
                  f"put {{dir}} in rule {item.rule.name!r}'s discussion: path ({where})")
        problems.append(Problem(ledger, state.header_line, reason, "wrong-ledger"))
    if state.ok and state.carried and doc in tree.files:
        # The ledger says this text differs from the reviewed one only in its status, spacing
        # or path: verify it on the committed text (the hook does the same).
        if core(tree.data(doc)) != state.core:
            reason = changed_core(doc)
            problems.append(Problem(ledger, state.revision_line, reason, "changed-core"))
            return DocumentVerdict(doc, ledger, False, reason, state.votes), problems
    if state.ok:
        return DocumentVerdict(doc, ledger, not problems, state.verdict, state.votes), problems
    revision = state.kind in ("stale-revision", "no-revision")
    line = state.revision_line if revision else state.last_line
    reason = state.verdict
    if state.kind == "no-consensus":
        reason = f"no consensus on {doc}: {state.verdict}"
    elif state.kind in ("stale-revision", "no-revision", "awaited"):
        reason = f"{state.verdict}: {_how_to_review(doc, tree)}"
    elif state.kind == "findings":
        holding = next((f for f in state.findings if f["effect"] == "error"), None)
        line = holding["line"] if holding else line
    if state.ways_out:
        reason += f"; ways out: {state.ways_out}"
    problems.append(Problem(ledger, line, reason, state.kind or "no-consensus"))
    return DocumentVerdict(doc, ledger, False, reason, state.votes), problems
