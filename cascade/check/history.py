"""Walk every commit of the range and prove that no ledger's earlier text was rewritten
(docs/ci.md, 5): each ``*.discussion.md`` a commit modifies or renames extends the parent's
version (appendonly.py; a merge: merge.py) and keeps what its entries say
(cascade.ledger.meaning); a ledger deleted while its document (its ``Source:``) still exists
in that commit is a failure too.

The proofs run from the newest step back, so that a version is read from the later version
that holds it (versions.py) and proved to begin it from the delta git's pack stores
(packs.py) rather than by hashing it again: the cost grows with what was appended, not with
the sum of every version's size. The problems are reported in the walk's order.
"""
from __future__ import annotations

from pathlib import Path

from msgspec import Struct

from cascade.check.appendonly import EDITS, extends, first_edit, is_append
from cascade.check.gittree import Blobs, Change, commit_diffs
from cascade.check.merge import merge_problem
from cascade.check.packs import Packs
from cascade.check.report import Problem
from cascade.check.versions import MEANING, MERGE, SOURCE, Anchor, Versions, scan
from cascade.base.gitio import BlobReader, git
from cascade.ledger.meaning import merge_lost
from cascade.ledger.parse import parse
from cascade.base.resources import LEDGER_SUFFIX

APPEND, MERGED, DELETED = "append", "merge", "delete"  # the kinds of step


def _is_ledger(path: str | None) -> bool:
    return path is not None and path.endswith(LEDGER_SUFFIX)


class Step(Struct, frozen=True):
    """One ledger version a commit made (or deleted), and what it must keep."""

    kind: str  # APPEND, MERGED or DELETED
    index: int  # in the walk's order
    commit: str
    path: str
    blob: str  # the new version, the merged one, or the deleted one
    olds: tuple[tuple[str, str], ...] = ()  # (parent commit, its version) it must extend


class History:
    def __init__(self, root: Path, blobs: Blobs) -> None:
        self.root = root
        self.blobs = blobs
        self.problems: list[Problem] = []
        self.recreated: set[str] = set()  # ledger paths deleted or added in some commit
        self._steps: list[Step] = []
        self._found: dict[int, Problem] = {}  # step -> its problem
        self._sources: dict[int, str | None] = {}  # deletion step -> the header's Source:
        self._sizes: dict[str, int] = {}  # the old versions' sizes
        self._packs: Packs | None = None

    def check(self, commits: list[tuple[str, list[str]]]) -> list[Problem]:
        pairs = [(c, p) for c, parents in commits for p in (parents or [None])]
        sections = iter(commit_diffs(self.root, pairs))
        for commit, parents in commits:
            diffs = [next(sections) for _ in (parents or [None])]
            if len(parents) > 1:
                self._merge(commit, parents, diffs)
            else:
                self._single(commit, diffs[0])
        self._prove()
        for kind in (APPEND, MERGED):
            self.problems += [self._found[s.index] for s in self._steps
                              if s.kind == kind and s.index in self._found]
        self._deletions()
        return self.problems

    def _add(self, kind: str, commit: str, path: str, blob: str,
             olds: tuple[tuple[str, str], ...] = ()) -> None:
        self._steps.append(Step(kind, len(self._steps), commit, path, blob, olds))

    def _single(self, commit: str, changes: list[Change]) -> None:
        for ch in changes:
            if ch.status in "AD":
                for p in (ch.path, ch.old_path):
                    if _is_ledger(p):
                        self.recreated.add(p)  # type: ignore[arg-type]
            if not _is_ledger(ch.old_path):
                continue
            if ch.status in "MRT" and ch.old_blob and ch.blob and ch.path:
                self._add(APPEND, commit, ch.path, ch.blob, (("", ch.old_blob),))
            elif ch.status == "D" and ch.old_blob:
                self._add(DELETED, commit, ch.old_path, ch.old_blob)  # type: ignore[arg-type]

    def _merge(self, commit: str, parents: list[str], diffs: list[list[Change]]) -> None:
        """A ledger the merge changed against any parent: collect each parent's version."""
        merged: dict[str, str] = {}  # path -> merged blob
        per_parent: list[dict[str, str | None]] = []  # path -> parent's blob (None: absent)
        deleted: list[dict[str, str]] = []
        for changes in diffs:
            seen: dict[str, str | None] = {}
            gone: dict[str, str] = {}
            for ch in changes:
                if ch.path and _is_ledger(ch.path) and ch.blob:
                    merged[ch.path] = ch.blob
                    had = ch.status in "MT" or (ch.status == "R" and _is_ledger(ch.old_path))
                    seen[ch.path] = ch.old_blob if had else None
                elif ch.status == "D" and _is_ledger(ch.old_path) and ch.old_blob:
                    gone[ch.old_path] = ch.old_blob  # type: ignore[index]
            per_parent.append(seen)
            deleted.append(gone)
        for path, blob in merged.items():
            versions = []
            for parent, seen in zip(parents, per_parent):
                version = seen.get(path, blob)  # not listed: the parent has the merged version
                if version is not None:
                    versions.append((parent, version))
            if versions:
                self._add(MERGED, commit, path, blob, tuple(versions))
        # deleted by the merge itself: every parent had it and the result does not
        for path, blob in deleted[0].items():
            if all(path in gone for gone in deleted[1:]):
                self._add(DELETED, commit, path, blob)

    # ---- the proofs, newest first ----------------------------------------------------------

    def _prove(self) -> None:
        first_use: dict[str, int] = {}
        for step in self._steps:
            first_use.setdefault(step.blob, step.index)
        self._sizes = self.blobs.sizes([b for s in self._steps for _, b in s.olds])
        if not self._steps:
            return
        with BlobReader(self.root) as reader, Packs(self.root, len(self._steps[0].blob)) as packs:
            self._packs = packs
            versions = Versions(reader, self.blobs, first_use)
            for step in reversed(self._steps):
                for anchor in versions.expired(step.index):
                    self._answer(anchor)
                if step.kind == APPEND:
                    self._append(versions, step)
                elif step.kind == MERGED:
                    self._merged(versions, step)
                else:
                    anchor, data = versions.read(step.blob, step.index)
                    anchor.asks.append((SOURCE, step.index, len(data)))
            for anchor in versions.expired(-1):
                self._answer(anchor)
        self._packs = None

    def _append(self, versions: Versions, step: Step) -> None:
        anchor, new = versions.read(step.blob, step.index)
        old_blob = step.olds[0][1]
        size = self._sizes.get(old_blob)
        if size is not None and extends(old_blob, size, new,
                                        self._begins(versions, anchor, old_blob, step.blob, size)):
            versions.prove(old_blob, anchor, size)
            anchor.asks.append((MEANING, step.index, size, len(new)))
            return
        old = bytes(versions.read(old_blob, step.index)[1])
        if is_append(old, bytes(new)):
            anchor.asks.append((MEANING, step.index, len(old), len(new)))
            return
        line, kind = first_edit(self.root, old_blob, step.blob, old)
        self._found[step.index] = Problem(step.path, line, f"{EDITS[kind]} in {step.commit[:7]}",
                                          kind, step.commit)

    def _begins(self, versions: Versions, anchor: Anchor, old: str, new: str, size: int) -> bool:
        """Whether the packs prove ``old`` (``size`` bytes) the first bytes of ``new`` (read
        from ``anchor``): ``new`` stored as a copy of all of ``old`` and more, or ``old`` as a
        copy of the first bytes of a version already proved to begin ``anchor``."""
        assert self._packs is not None
        self._packs.locate(old)
        stored = self._packs.delta(new)
        if stored and stored.base == old and stored.base_size == size and stored.common >= size:
            return True
        stored = self._packs.delta(old)
        return bool(stored and stored.base and stored.size == size and stored.common >= size
                    and versions.holds(stored.base, anchor))

    def _merged(self, versions: Versions, step: Step) -> None:
        """Every parent's version a prefix of the merged one (the usual case) keeps its
        entries unless one ends open (scan); otherwise merge.py decides, from the bytes."""
        anchor, merged = versions.read(step.blob, step.index)
        sizes = []
        for _, blob in step.olds:
            size = self._sizes.get(blob)
            if size is None or not (blob == step.blob or extends(
                    blob, size, merged, self._begins(versions, anchor, blob, step.blob, size))):
                break
            versions.prove(blob, anchor, size)
            sizes.append(size)
        else:
            anchor.asks.append((MERGE, step.index, sizes, len(merged)))
            return
        parents = [(sha, bytes(versions.read(blob, step.index)[1])) for sha, blob in step.olds]
        self._merge_found(step, merge_problem(parents, bytes(merged))
                          or merge_lost(*_ledgers(parents, bytes(merged))))

    def _merge_found(self, step: Step, found: tuple[int, str] | None) -> None:
        if found:
            line, reason = found
            self._found[step.index] = Problem(step.path, line,
                                              f"merge {step.commit[:7]} {reason}", "merge",
                                              step.commit)

    def _answer(self, anchor: Anchor) -> None:
        """Read an anchor no step needs any more, for what its steps asked of it."""
        if not anchor.asks:
            return
        answers = scan(anchor.data, anchor.asks)
        for ask in anchor.asks:
            what, index = ask[0], ask[1]
            step = self._steps[index]
            if what == SOURCE:
                self._sources[index] = answers[(SOURCE, index)]  # type: ignore[assignment]
            elif what == MEANING:
                found = answers[(MEANING, index)]
                if found:
                    line, text = found  # type: ignore[misc]
                    self._found[index] = Problem(
                        step.path, line, f"an append in {step.commit[:7]} changes what the "
                                         f"earlier text says: {text}", "meaning", step.commit)
            elif not answers[(MERGE, index)]:  # a parent ends open: compare them whole
                parents = [(sha, anchor.data[:size]) for (sha, _), size in zip(step.olds, ask[2])]
                self._merge_found(step, merge_lost(*_ledgers(parents, anchor.data[:ask[3]])))

    def _deletions(self) -> None:
        """A deleted ledger whose document still exists in that commit."""
        checks = []
        for step in self._steps:
            source = self._sources.get(step.index) if step.kind == DELETED else None
            if source:
                checks.append((step.commit, step.path, source))
        if not checks:
            return
        query = "".join(f"{c}:{s}\n" for c, _, s in checks).encode("utf-8", "surrogateescape")
        out = git(self.root, "cat-file", "--batch-check", input=query).decode().splitlines()
        for (commit, path, source), answer in zip(checks, out):
            if not answer.endswith("missing"):
                self.problems.append(Problem(
                    path, 1, f"ledger deleted in {commit[:7]} while its document {source} "
                             "still exists", "deleted", commit))


def _ledgers(parents: list[tuple[str, bytes]], merged: bytes):
    """``merge_lost``'s arguments: each parent's ledger and the merged one, parsed whole."""
    return ([(sha[:7], parse(data.decode("utf-8", "replace"), details=False))
             for sha, data in parents],
            parse(merged.decode("utf-8", "replace"), details=False))
