"""Derive each committed ledger's state -- the same way the hook does -- in bulk.

Parsing dominates the check's time: ledgers are parsed without markers and mentions (the
gate needs votes, events and line numbers only), and a large batch is split between this
process and one forked worker (Linux; elsewhere it stays serial).

Results are plain data. A CascadeError that names the ledger (not UTF-8, a protocol or phase
the repository does not have, bad consensus settings) is the ledger's problem; any other (a
broken persona or protocol file) is a configuration error.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from cascade.config.yamlio import decode_utf8
from cascade.errors import CascadeError, display_path
from cascade.ledger.discussion import Discussion
from cascade.ledger.model import SOURCE_REVISION

PARALLEL_BYTES = 4_000_000  # below this, starting workers costs more than it saves


@dataclass
class LedgerState:
    path: str  # repository-relative
    error: tuple[int, str] | None = None  # (line, message): the ledger does not parse
    config_error: tuple[str | None, int | None, str] | None = None  # (file, line, message)
    warnings: list[tuple[int, str]] = field(default_factory=list)
    source: str | None = None
    source_revision: str | None = None
    revision_line: int = 1  # the line of the last SOURCE-REVISION event
    last_line: int = 1
    reached: bool = False
    outcome: str | None = None
    reason: str = ""
    missing: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)


def evaluate(rel: str, raw: bytes, root: Path, config_root: Path) -> LedgerState:
    """Parse one ledger and derive what the gate needs: consensus and reviewed revision."""
    state = LedgerState(rel)
    path = root / rel
    try:
        d = Discussion(path, decode_utf8(raw, path), root=config_root, raw=raw, details=False)
        fence = getattr(d.ledger, "open_fence", None)
        state.warnings = [w for w in d.warnings if not (fence and w[1].startswith("unclosed code fence"))]
        if fence:
            state.error = (d.ledger.open_fence_line,  # type: ignore[attr-defined]
                           f"unclosed code fence {fence}: whatever is appended after it becomes "
                           "part of the comment it opens in; close it")
        d.current_phase  # an unknown phase is the ledger's error, as in the hook
        result = d.consensus_result
        state.source = d.source
        state.source_revision = d.source_revision
        revisions = [e.line for e in d.events if e.kind == SOURCE_REVISION]
        state.revision_line = revisions[-1] if revisions else (d.header.line or 1)
        state.last_line = max(d.ledger.line_count, 1)
        state.reached, state.outcome, state.reason = result.reached, result.outcome, result.reason
        state.missing, state.counts = list(result.missing), dict(result.counts)
    except CascadeError as exc:
        if exc.path in (None, display_path(path)):
            state.error = (exc.line or 1, exc.message)
        else:
            state.config_error = (exc.path, exc.line, exc.message)
    return state


_BATCH: list[tuple[str, bytes]] = []  # inherited by the forked worker, never pickled


def _evaluate_batch(indices: list[int], root: Path, config_root: Path) -> list[LedgerState]:
    return [evaluate(*_BATCH[i], root, config_root) for i in indices]


def evaluate_all(items: list[tuple[str, bytes]], root: Path,
                 config_root: Path) -> dict[str, LedgerState]:
    """{path: state}. A large batch is split by size between this process and a worker."""
    global _BATCH
    order = sorted(range(len(items)), key=lambda i: -len(items[i][1]))
    total = sum(len(raw) for _, raw in items)
    if total < PARALLEL_BYTES or len(items) < 2 or not _can_fork():
        _BATCH = items
        try:
            return {s.path: s for s in _evaluate_batch(order, root, config_root)}
        finally:
            _BATCH = []
    halves: list[list[int]] = [[], []]
    sizes = [0, 0]
    for i in order:  # largest first, to the lighter half
        k = 0 if sizes[0] <= sizes[1] else 1
        halves[k].append(i)
        sizes[k] += len(items[i][1])
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    _BATCH = items
    try:
        with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork")) as pool:
            theirs = pool.submit(_evaluate_batch, halves[1], root, config_root)
            states = _evaluate_batch(halves[0], root, config_root) + theirs.result()
    finally:
        _BATCH = []
    return {s.path: s for s in states}


def _can_fork() -> bool:
    return sys.platform.startswith("linux") and (os.cpu_count() or 1) > 1
