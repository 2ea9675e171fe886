"""``cascade review PATH...``: the hook's review of a governed document, run for the revision
the index holds whether or not a commit changes it (after ``git commit --no-verify``, which the
hook will not review again): the replies are staged as the hook stages them (docs/cli.md)."""
from __future__ import annotations

import shlex
import sys

from cascade.config.rules import Rule
from cascade.base.errors import CascadeError
from cascade.base.gitio import git_or_none, index_blobs, repo_root
from cascade.check.governance import resolve
from cascade.loop.hook import gate_items
from cascade.config.ruleset import RuleSet
from cascade.base.text import printable


def _documents(paths: list[str]) -> tuple[dict[str, Rule], RuleSet]:
    """The governed documents ``paths`` name (a document, or its ledger), with their rules;
    each must be in the index (the revision reviewed is the one a commit would hold)."""
    root = repo_root()
    rules = RuleSet(root)
    found: dict[str, Rule] = {}
    for path in paths:
        _ledger, doc, _rule = resolve(path, root)
        rule = rules.governing(doc) if doc else None
        if doc is None or rule is None:
            raise CascadeError("no governed document to review: give the document (or the "
                               "ledger of one) that a rule in .ai-rules.yml governs", path)
        found[doc] = rule
    staged = index_blobs(root, list(found))
    for doc in found:
        if doc not in staged:
            raise CascadeError(f"{doc} is not in git's index: stage it (git add "
                               f"{shlex.quote(doc)}), so the review is of the revision a "
                               "commit will hold", doc)
    return found, rules


def review(paths: list[str]) -> int:
    """0: every document is at consensus (its review staged: commit it); 1: not yet (the
    table says what to do, as the hook does)."""
    governed, rules = _documents(paths)
    root = rules.root
    items = gate_items(root, rules, governed, [], sys.stdout, "cascade review")
    if any(not i.verdict.passed for i in items):
        return 1
    ledgers = [i.ledger for i in items]
    if git_or_none(root, "diff", "--cached", "--quiet", "--", *ledgers) is None:
        message = shlex.quote(f"Review of {', '.join(governed)}")
        print(printable(f"cascade: the review is staged: commit it (git commit -m {message})"))
    return 0
