"""Committed state, read from git objects only: refs, trees, blobs, raw diffs.

Never the working tree or the index: ``cascade check`` must judge what was committed.
"""
from __future__ import annotations

import re
from pathlib import Path

from msgspec import Struct

from cascade.config.yamlio import decode_utf8
from cascade.base.errors import CascadeError
from cascade.base.gitio import git, read_blobs, records

_ZERO = re.compile(r"0+\Z")


def resolve(root: Path, ref: str, option: str) -> str:
    """The commit a ref names; an unknown ref is a usage error (exit 2)."""
    out = ""
    if not ref.startswith("-"):  # not an option in disguise
        out = git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}",
                  check=False).decode().strip()
    if not out:
        raise CascadeError(f"unknown git ref {ref!r} ({option})")
    return out


def is_null_ref(ref: str | None) -> bool:
    """pre-commit passes an all-zero id for 'nothing before this' (a new branch)."""
    return not ref or bool(_ZERO.match(ref))


def empty_tree(root: Path) -> str:
    """The id of the empty tree (differs between SHA-1 and SHA-256 repositories)."""
    return git(root, "hash-object", "-t", "tree", "--stdin", input=b"").decode().strip()


def merge_base(root: Path, a: str, b: str) -> str | None:
    out = git(root, "merge-base", a, b, check=False).decode().strip()
    return out or None


def commits(root: Path, from_commit: str, to_commit: str) -> list[tuple[str, list[str]]]:
    """(commit, parents) for ``from..to``, merges included, oldest first."""
    out = git(root, "rev-list", "--reverse", "--topo-order", "--parents",
              f"{from_commit}..{to_commit}").decode()
    result = []
    for line in out.splitlines():
        ids = line.split()
        if ids:
            result.append((ids[0], ids[1:]))
    return result


class Blobs:
    """Blob contents, fetched in as few ``git cat-file --batch`` calls as possible."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._data: dict[str, bytes] = {}

    def fetch(self, ids: list[str]) -> None:
        wanted = [b for b in dict.fromkeys(ids) if b and b not in self._data]
        if wanted:
            self._data.update(read_blobs(self.root, wanted))

    def sizes(self, ids: list[str]) -> dict[str, int]:
        """Sizes of blobs, without reading them (``git cat-file --batch-check``)."""
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return {}
        out = git(self.root, "cat-file", "--batch-check", input="".join(
            f"{b}\n" for b in wanted).encode()).decode().splitlines()
        sizes = {}
        for line in out:
            parts = line.split()
            if len(parts) == 3 and parts[1] == "blob":
                sizes[parts[0]] = int(parts[2])
        return sizes

    def peek(self, blob: str) -> bytes | None:
        """A blob's contents if already fetched; None otherwise (nothing is read)."""
        return self._data.get(blob)

    def get(self, blob: str) -> bytes:
        if blob not in self._data:
            self.fetch([blob])
        try:
            return self._data[blob]
        except KeyError:
            raise CascadeError(f"git object {blob} is missing") from None


class Tree:
    """One commit's files: ``{path: blob}`` from ``git ls-tree -r``. Also the rule-file reader
    that RuleSet uses (``is_file`` / ``read``)."""

    def __init__(self, root: Path, commit: str, blobs: Blobs) -> None:
        self.root = root
        self.commit = commit
        self.blobs = blobs
        self.files: dict[str, str] = {}
        out = git(root, "ls-tree", "-r", "-z", "--full-tree", commit)
        self.links: set[str] = set()  # symbolic links: their blob is the link text
        for (mode, kind, blob), path in records(out):
            if kind == "blob":
                self.files[path] = blob
                if mode == "120000":
                    self.links.add(path)

    def is_file(self, rel: str) -> bool:
        return rel in self.files

    def data(self, rel: str) -> bytes:
        return self.blobs.get(self.files[rel])

    def read(self, rel: str) -> str:
        """A rule file's text; one committed as a symbolic link is refused, as the hook refuses
        it in the work tree (its blob is only the link's target path)."""
        if rel in self.links:
            raise CascadeError(f"is a symbolic link at {self.commit[:7]}: cascade never reads "
                               "configuration through one (commit the file itself)", rel)
        return decode_utf8(self.data(rel), self.root / rel)


class Change(Struct, frozen=True):
    """One record of ``git diff-tree --raw``."""

    status: str  # A, C, D, M, R, T (U, X: never for committed trees)
    old_path: str | None
    path: str | None  # None when deleted
    old_blob: str | None
    blob: str | None


def _blob(sha: str) -> str | None:
    return None if _ZERO.match(sha) else sha


def parse_raw(fields: list[str], i: int) -> tuple[Change, int]:
    """Read one ``-z --raw`` record starting at ``fields[i]`` (the ':' meta field)."""
    _old_mode, _new_mode, old_blob, new_blob, status = fields[i][1:].split()
    kind = status[0]
    if kind in "RC":
        change = Change(kind, fields[i + 1], fields[i + 2], _blob(old_blob), _blob(new_blob))
        return change, i + 3
    path = fields[i + 1]
    if kind == "D":
        return Change(kind, path, None, _blob(old_blob), None), i + 2
    if kind == "A":
        return Change(kind, None, path, None, _blob(new_blob)), i + 2
    return Change(kind, path, path, _blob(old_blob), _blob(new_blob)), i + 2


def _sections(out: bytes) -> list[list[Change]]:
    """The records of ``git diff-tree -z --raw`` output, a section for each header line (the
    first section: the records before any header)."""
    fields = out.decode("utf-8", "surrogateescape").split("\0")
    if fields and fields[-1] == "":
        fields.pop()
    sections: list[list[Change]] = [[]]
    i = 0
    while i < len(fields):
        if fields[i].startswith(":"):
            change, i = parse_raw(fields, i)
            sections[-1].append(change)
        else:
            sections.append([])
            i += 1
    return sections


def diff(root: Path, old: str | None, new: str) -> list[Change]:
    """What changed from ``old`` (None: the empty tree) to ``new``, renames detected."""
    sections = _sections(git(root, "diff-tree", "-r", "-z", "-M", "--raw",
                             old or empty_tree(root), new))
    return [change for section in sections for change in section]  # after any header too


def commit_diffs(root: Path, pairs: list[tuple[str, str | None]]) -> list[list[Change]]:
    """For each (commit, parent or None), its changes against that parent (or the empty tree),
    in one ``git diff-tree --stdin`` call. ``--always`` prints a header for every input line,
    so output sections line up with ``pairs``."""
    if not pairs:
        return []
    lines = "".join(f"{c} {p}\n" if p else f"{c}\n" for c, p in pairs)
    sections = _sections(git(root, "diff-tree", "--stdin", "--always", "--root", "-r", "-z",
                             "-M", "--raw", input=lines.encode()))[1:]
    if len(sections) != len(pairs):
        raise CascadeError(f"git diff-tree gave {len(sections)} sections for {len(pairs)} commits")
    return sections
