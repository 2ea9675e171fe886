"""Walk every commit of the range and prove that no ledger's earlier text was rewritten.

For each commit (merges included) and each ``*.discussion.md`` it modifies or renames, the
append-only rule (appendonly.py) compares the parent's version with the commit's; a merge
uses merge.py. Bytes are not enough: the entries parsed from the old text (authors, votes,
bodies, stamps, events) must read the same at the start of the new one, and a merge must keep
every parent's entries (cascade.ledger.meaning). A ledger deleted while its document (the
header's ``Source:``) still exists in that commit is a failure too.
"""
from __future__ import annotations

from pathlib import Path

from cascade.check.appendonly import extends, first_edit, is_append
from cascade.check.gittree import Blobs, Change, commit_diffs
from cascade.check.merge import merge_problem
from cascade.check.report import Problem
from cascade.ledger.meaning import changed_by_append, merge_lost
from cascade.ledger.parse import parse, sealed
from cascade.loop.gitio import git
from cascade.resources import LEDGER_SUFFIX

_EDIT_REASONS = {
    "edited": "ledger text edited in {sha}",
    "removed": "ledger text removed in {sha}",
    "inserted": "text inserted into the ledger's earlier text in {sha}",
}


def _is_sealed(old: bytes) -> bool:
    return sealed(old.decode("utf-8", "replace"))


def _is_ledger(path: str | None) -> bool:
    return path is not None and path.endswith(LEDGER_SUFFIX)


class History:
    def __init__(self, root: Path, blobs: Blobs) -> None:
        self.root = root
        self.blobs = blobs
        self.problems: list[Problem] = []
        # (commit, path, old blob, new blob) pairs for the append-only byte test
        self._appends: list[tuple[str, str, str, str]] = []
        # (commit, path, [(parent, blob)], merged blob)
        self._merges: list[tuple[str, str, list[tuple[str, str]], str]] = []
        self._deleted: list[tuple[str, str, str]] = []  # (commit, path, old blob)
        self.recreated: set[str] = set()  # ledger paths deleted or added in some commit
        self._parsed: dict[str, object] = {}
        self._sealed: dict[bytes, bool] = {}  # the old text (a prefix of the new) -> sealed

    def _seal(self, pairs: list[tuple[bytes, int | None]]) -> None:
        """Whether each old text is sealed, decided in bulk (split with a worker when large)."""
        from cascade.check.ledgers import split_map

        heads = [new[:size] for new, size in pairs if size]
        flags = split_map(_is_sealed, heads, [len(h) for h in heads])
        self._sealed = dict(zip(heads, flags))
    def check(self, commits: list[tuple[str, list[str]]]) -> list[Problem]:
        pairs = [(c, p) for c, parents in commits for p in (parents or [None])]
        sections = iter(commit_diffs(self.root, pairs))
        for commit, parents in commits:
            diffs = [next(sections) for _ in (parents or [None])]
            if len(parents) > 1:
                self._merge(commit, parents, diffs)
            else:
                self._single(commit, diffs[0])
        # One read for everything: new versions, merge parents, deleted ledgers. Old versions
        # are not read unless the hash test fails (appendonly.extends).
        wanted = [new for *_, new in self._appends] + [b for _, _, b in self._deleted]
        for _, _, versions, merged in self._merges:
            wanted += [b for _, b in versions] + [merged]
        self.blobs.fetch(wanted)
        sizes = self.blobs.sizes([old for _, _, old, _ in self._appends])
        self._seal([(self.blobs.get(new), sizes.get(old)) for _, _, old, new in self._appends])
        for commit, path, old_blob, new_blob in self._appends:
            self._append(commit, path, old_blob, new_blob, sizes.get(old_blob))
        for commit, path, versions, merged in self._merges:
            found = merge_problem([(p, self.blobs.get(b)) for p, b in versions],
                                  self.blobs.get(merged))
            if not found:
                found = self._merge_meaning(versions, merged)
            if found:
                line, reason = found
                self.problems.append(Problem(path, line, f"merge {commit[:7]} {reason}", "merge",
                                             commit))
        self._deletions()
        return self.problems

    def _ledger(self, blob: str):
        if blob not in self._parsed:
            self._parsed[blob] = parse(self.blobs.get(blob).decode("utf-8", "replace"),
                                       details=False)
        return self._parsed[blob]

    def _merge_meaning(self, versions: list[tuple[str, str]], merged: str):
        return merge_lost([(sha[:7], self._ledger(blob)) for sha, blob in versions],
                          self._ledger(merged))

    def _single(self, commit: str, changes: list[Change]) -> None:
        for ch in changes:
            if ch.status in "AD":
                for p in (ch.path, ch.old_path):
                    if _is_ledger(p):
                        self.recreated.add(p)  # type: ignore[arg-type]
            if not _is_ledger(ch.old_path):
                continue
            if ch.status in "MRT" and ch.old_blob and ch.blob and ch.path:
                self._appends.append((commit, ch.path, ch.old_blob, ch.blob))
            elif ch.status == "D" and ch.old_blob:
                self._deleted.append((commit, ch.old_path, ch.old_blob))  # type: ignore[arg-type]

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
                self._merges.append((commit, path, versions, blob))
        # deleted by the merge itself: every parent had it and the result does not
        for path, blob in deleted[0].items():
            if all(path in gone for gone in deleted[1:]):
                self._deleted.append((commit, path, blob))

    def _append(self, commit: str, path: str, old_blob: str, new_blob: str,
                old_size: int | None) -> None:
        new = self.blobs.get(new_blob)
        if old_size is not None and extends(old_blob, old_size, new):
            self._meaning(commit, path, old_blob, new_blob, new[:old_size])
            return
        old = self.blobs.get(old_blob)
        if is_append(old, new):
            self._meaning(commit, path, old_blob, new_blob, old)
            return
        line, kind = first_edit(self.root, old_blob, new_blob, old)
        self.problems.append(Problem(path, line, _EDIT_REASONS[kind].format(sha=commit[:7]),
                                     kind, commit))

    def _meaning(self, commit: str, path: str, old_blob: str, new_blob: str, old: bytes) -> None:
        """Bytes were only appended; the entries read from the old text must not change. A
        sealed old text (ending outside blocks, fences and its header) cannot change."""
        known = self._sealed.get(old)
        if known if known is not None else sealed(old.decode("utf-8", "replace")):
            return
        found = changed_by_append(self._ledger(old_blob), self._ledger(new_blob))
        if found:
            line, what = found
            self.problems.append(Problem(path, line, f"an append in {commit[:7]} changes what "
                                         f"the earlier text says: {what}", "meaning", commit))

    def _deletions(self) -> None:
        """A deleted ledger whose document still exists in that commit."""
        checks = []
        for commit, path, blob in self._deleted:
            source = parse(self.blobs.get(blob).decode("utf-8", "replace")).header.source
            if source:
                checks.append((commit, path, source))
        if not checks:
            return
        query = "".join(f"{c}:{s}\n" for c, _, s in checks).encode("utf-8", "surrogateescape")
        out = git(self.root, "cat-file", "--batch-check", input=query).decode().splitlines()
        for (commit, path, source), answer in zip(checks, out):
            if not answer.endswith("missing"):
                self.problems.append(Problem(
                    path, 1, f"ledger deleted in {commit[:7]} while its document {source} "
                             "still exists", "deleted", commit))
