"""Derive each committed ledger's state -- through the same ``derive`` and ``gate`` as the hook
-- in bulk. Parsing dominates the check's time: ledgers are parsed without markers unless one
bears on the verdict, and a large batch is shared by this process and one forked worker, each
taking the next ledgers when free (Linux; elsewhere it stays serial).

Results are plain data. A CascadeError that names the ledger (not UTF-8, a protocol or phase
the repository does not have, bad consensus settings) is the ledger's problem; any other (a
broken persona or protocol file) is a configuration error.
"""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any

from msgspec import Struct, field

from cascade.config.yamlio import decode_utf8
from cascade.base.errors import CascadeError, display_path
from cascade.ledger.records import SOURCE_REVISION
from cascade.check.attribution import committed
from cascade.protocol.authority import Authority
from cascade.protocol.discussion import Discussion
from cascade.protocol.setting import setting_of
from cascade.protocol.verdict import gate

PARALLEL_BYTES = 4_000_000  # below this, starting workers costs more than it saves
# Markers that bear on the verdict: A(Fn) and WAIVE(Fn) close a finding; a CONCERN is a major
# finding, which holds only under a rule's hold: major or below. A ledger holding none that
# bears is read without markers (faster), with the same verdict.
_ANSWER = re.compile(rb"A\([ \t]*[Ff]")
_CONCERN_HOLDS = ("major", "minor", "info")


class Job(Struct, frozen=True):
    """One ledger to evaluate, under one authority (None: its own header)."""

    key: str  # unique within a batch (a ledger may be judged under two rules)
    path: str  # repository-relative
    raw: bytes
    repo: Path  # the repository top (names the ledger in errors; never read)
    config_root: Path  # where its personas and protocols are looked up
    authority: Authority | None = None
    doc: str | None = None  # the governed document, when there is one
    blob: str | None = None  # its committed revision
    commit: str | None = None  # the commit the ledger is read at (who added its lines)
    findings: bool = False  # read its markers whatever it holds (a slower parse)


def _markers_bear(job: Job) -> bool:
    """Whether ``job``'s ledger must be read with its markers for its verdict (or asks)."""
    raw = job.raw  # plain substring tests first: a regex scan of every ledger costs more
    if job.findings or b"WAIVE" in raw or (b"A(" in raw and _ANSWER.search(raw) is not None):
        return True
    policy = job.authority.policy if job.authority is not None else None
    return policy is not None and policy.hold in _CONCERN_HOLDS and b"CONCERN" in raw


class LedgerState(Struct):
    key: str
    path: str  # repository-relative
    error: tuple[int, str] | None = None  # (line, message): the ledger does not parse
    config_error: tuple[str | None, int | None, str] | None = None  # (file, line, message)
    warnings: list[tuple[int, str]] = field(default_factory=list)
    source: str | None = None
    header_line: int = 1
    revision_line: int = 1  # the line of the last SOURCE-REVISION event
    last_line: int = 1
    ok: bool = False  # the gate's verdict, for a governed document
    verdict: str = ""
    kind: str = ""
    counts: dict[str, int] = field(default_factory=dict)
    advisory: int = 0
    decided: str | None = None
    header_diff: list[str] = field(default_factory=list)
    carried: bool = False  # the current revision holds an earlier one's review (same core)
    core: str | None = None  # the core the ledger recorded for the current revision
    forged: list[tuple[int, str, str]] = field(default_factory=list)  # (line, author, reason)
    unfounded: list[tuple[int, str, str]] = field(default_factory=list)  # (line, kind, reason)
    findings: list[dict] = field(default_factory=list)  # open ones, each with its effect
    strays: list[tuple[int, str]] = field(default_factory=list)  # A(Fn)/WAIVE(Fn) of no finding
    ways_out: str = ""  # what ends the block (cascade.protocol.verdict.Judgement.ways_out)

    @property
    def votes(self) -> str:
        text = " ".join(f"{v}:{n}" for v, n in self.counts.items() if n) or "-"
        if self.advisory:
            text += f" (+{self.advisory} advisory)"
        return text + (f" (decided {self.decided})" if self.decided else "")


def evaluate(job: Job) -> LedgerState:
    """Parse one ledger and derive what the gate needs."""
    state = LedgerState(job.key, job.path)
    path = job.repo / job.path  # never read: only names the ledger in errors
    try:
        d = Discussion(path, decode_utf8(job.raw, path), setting_of(job.config_root), raw=job.raw,
                       details=_markers_bear(job), authority=job.authority)
        ledger = d.ledger
        fence = ledger.open_fence
        state.warnings = [w for w in ledger.warnings
                          if not (fence and w[1].startswith("unclosed code fence"))]
        if fence:
            state.error = (ledger.open_fence_line,
                           f"unclosed code fence {fence}: whatever is appended after it becomes "
                           "part of the comment it opens in; close it")
        d.current_phase  # an unknown phase is the ledger's error, as in the hook
        s = d.state
        if s.claims and job.commit is not None:  # decisions, people's votes: who added them
            d = d.with_authors(committed(job.repo, job.commit, job.path, s.claims))
            s = d.state
        state.source = d.source
        state.header_line = ledger.header.line or 1
        revisions = [e.line for e in d.events if e.kind == SOURCE_REVISION]
        state.revision_line = revisions[-1] if revisions else state.header_line
        state.last_line = max(ledger.line_count, 1)
        state.counts = dict(s.result.counts)
        state.advisory = len(s.result.advisory)
        state.decided = s.decision.vote if s.decision else None
        state.forged = [(f.line, f.author, f.reason) for f in s.forged]
        state.unfounded = [(u.line, u.kind, u.reason) for u in s.unfounded]
        state.header_diff = d.header_differences()
        state.carried, state.core = s.carried_now, s.core
        state.strays = [(x.line, x.reason) for x in s.strays]
        if job.doc is not None:
            verdict = gate(s, job.blob, job.doc)
            state.ok, state.verdict, state.kind = verdict.ok, verdict.reason, verdict.kind
            state.ways_out = verdict.ways_out(job.doc)
            state.findings = [{**f.as_dict(), "effect": verdict.effect(f)}
                              for f in verdict.findings if f.status == "open"]
    except CascadeError as exc:
        if exc.path in (None, display_path(path)):
            state.error = (exc.line or 1, exc.message)
        else:
            state.config_error = (exc.path, exc.line, exc.message)
    return state


_WORK: tuple = ()  # (function, items, order, cursor): inherited by the forked worker
CHUNK = 4  # items taken at a time from the shared cursor


def _take_turns() -> list[tuple[int, Any]]:
    """Evaluate the batch's next items, heaviest first, until none is left: this process and
    the worker each take the next ones when free, so neither waits on a half fixed in advance
    (a core slowed by other work takes fewer)."""
    func, items, order, cursor = _WORK
    out = []
    while True:
        with cursor.get_lock():
            start = cursor.value
            cursor.value = start + CHUNK
        if start >= len(order):
            return out
        out.extend((i, func(items[i])) for i in order[start:start + CHUNK])


def split_map(func, items: list, weights: list[int]) -> list:
    """``[func(item) for item in items]``, shared with one forked worker when the batch is
    large enough to repay starting it (Linux; elsewhere serial)."""
    global _WORK
    if sum(weights) < PARALLEL_BYTES or len(items) < 2 or not _can_fork():
        return [func(item) for item in items]
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("fork")
    order = sorted(range(len(items)), key=lambda i: -weights[i])
    _WORK = (func, items, order, context.Value("q", 0))
    try:
        with ProcessPoolExecutor(1, mp_context=context) as pool:
            theirs = pool.submit(_take_turns)
            results = dict(_take_turns())
            results.update(theirs.result())
    finally:
        _WORK = ()
    return [results[i] for i in range(len(items))]


def evaluate_all(jobs: list[Job]) -> dict[str, LedgerState]:
    """{key: state}. A large batch is split by size between this process and a worker."""
    states = split_map(evaluate, jobs, [len(job.raw) for job in jobs])
    return {s.key: s for s in states}


def _can_fork() -> bool:
    return sys.platform.startswith("linux") and (os.cpu_count() or 1) > 1
