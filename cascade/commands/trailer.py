from __future__ import annotations

import sys

from cascade.base.errors import CascadeError
from cascade.base.gitio import git, index_blobs, read_blobs, repo_root, staged_paths
from cascade.loop.discover import discover
from cascade.loop.hook import candidates
from cascade.config.ruleset import RuleSet
from cascade.protocol.discussion import Discussion
from cascade.protocol.setting import setting_of


def trailer(message_file: str) -> int:
    """prepare-commit-msg: add a Cascade-Consensus trailer per involved ledger. Never blocks."""
    try:
        root = repo_root()
        rules = RuleSet(root)
        governed, ledgers = candidates(root, staged_paths(root), rules)
        if not governed and not ledgers:
            return 0
        items = discover(root, governed, ledgers, rules)
        blobs = index_blobs(root, [i.ledger for i in items])
        texts = read_blobs(root, list(blobs.values()))
        lines = []
        for item in items:
            if item.ledger not in blobs:
                continue
            d = Discussion.from_text(texts[blobs[item.ledger]].decode("utf-8", "replace"),
                                     root / item.ledger, setting_of(root), authority=item.authority)
            r = d.consensus_result
            if d.decision is not None:
                lines.append(f"{item.ledger} {d.decision.vote} (decided by {d.decision.by})")
                continue
            total = sum(r.counts.values()) + len(r.missing)
            verdict = r.outcome if r.reached else "not reached"
            word = "READY" if "READY" in r.counts else "ACCEPT"  # a step protocol confirms
            lines.append(f"{item.ledger} {verdict} ({r.counts.get(word, 0)}/{total} {word})")
        for line in lines:
            git(root, "interpret-trailers", "--in-place", "--if-exists", "addIfDifferent",
                "--trailer", f"Cascade-Consensus: {line}", message_file)
    except (CascadeError, OSError) as exc:
        print(f"cascade: no consensus trailer: {exc}", file=sys.stderr)
    return 0
