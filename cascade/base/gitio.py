"""Git, through the git command -- the one way the tool runs git: what is staged, read
from the index git is using; blobs; identity and configuration.

Every call inherits the environment, so ``GIT_INDEX_FILE`` -- set by ``git commit -a``
(``.git/index.lock``) and ``git commit <path>`` (``.git/next-index-*.lock``) -- is honoured;
``index=`` reads another index file. Nothing here writes to the index (the hook stages its
own writes through cascade.loop.staging).
"""
from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Self

from msgspec import Struct

from cascade.base.errors import CascadeError


def git(root: Path | None, *args: str, input: bytes | None = None, check: bool = True,
        index: str | None = None) -> bytes:
    """``git args`` in ``root``; ``index``: the index file to use instead of the one in the
    environment."""
    env = None if index is None else {**os.environ, "GIT_INDEX_FILE": index}
    try:
        proc = subprocess.run(["git", *args], cwd=root, input=input, capture_output=True,
                              check=False, env=env)
    except FileNotFoundError:
        raise CascadeError("git is not installed (or not on PATH)") from None
    if check and proc.returncode != 0:
        message = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise CascadeError(f"git {args[0]} failed: {message[-1] if message else proc.returncode}")
    return proc.stdout


def git_or_none(root: Path | None, *args: str) -> bytes | None:
    """What ``git args`` prints, or None when it fails (or git is missing): for the questions
    whose "no" is an exit status (``check-ignore``, ``diff-index`` before the first commit)."""
    try:
        proc = subprocess.run(["git", *args], cwd=root, capture_output=True, check=False)
    except FileNotFoundError:
        return None
    return proc.stdout if proc.returncode == 0 else None


def staged_changes(root: Path, paths: list[str]) -> list[str] | None:
    """Of ``paths``, those whose staged content differs from HEAD's (one ``git diff-index``);
    None before the first commit, or when git cannot tell."""
    out = git_or_none(root, "--literal-pathspecs", "diff-index", "--cached", "--name-only", "-z",
                      "--no-renames", "HEAD", "--", *paths)
    return None if out is None else [p for p in out.decode("utf-8", "surrogateescape")
                                     .split("\0") if p]


class Author(Struct, frozen=True):
    """A person as git writes a commit's author: a name and an e-mail address ('' if none)."""

    name: str
    email: str = ""

    @property
    def ident(self) -> str:
        """``Name <email>`` (the name alone when there is no address)."""
        return f"{self.name} <{self.email}>" if self.email else self.name

    @classmethod
    def parse(cls, text: str) -> Author:
        """``"Name <email>"`` as ``git commit --author`` takes it; a bare name has no address."""
        name, sep, rest = text.partition("<")
        email = rest.split(">", 1)[0].strip() if sep else ""
        return cls(" ".join(name.split()), email)


def next_author(root: Path | None = None, given: str | None = None) -> Author:
    """Who authors the next commit made in ``root`` (default: here), as git will write it: a
    person's comment, decision or waiver records this identity, so the commit that adds it is
    theirs. ``given`` (an ``--author "Name <email>"`` option, or a bare name) wins; else
    ``git var GIT_AUTHOR_IDENT`` -- ``GIT_AUTHOR_NAME``/``GIT_AUTHOR_EMAIL`` when set, else
    git's configuration (``author.name``, ``user.name``, ...), and inside a hook of
    ``git commit --author``, that author. Unknown: an error (exit 2) saying how to set it."""
    if given is not None and " ".join(given.split()):
        author = Author.parse(given)
        if not author.name:
            raise CascadeError(f"--author {given!r}: give a name, as in --author "
                               "'Your Name <you@example.com>'")
        return author
    out = git_or_none(root, "var", "GIT_AUTHOR_IDENT")
    text = out.decode("utf-8", "replace").strip() if out is not None else ""
    if "<" in text and ">" in text:
        author = Author.parse(text[:text.rindex(">") + 1])
        if author.name:
            return author
    raise CascadeError("no author: git does not know who you are: set git's user.name and "
                       "user.email (git config user.name 'Your Name'), or GIT_AUTHOR_NAME and "
                       "GIT_AUTHOR_EMAIL, or pass --author 'Your Name <you@example.com>'")


def is_ignored(root: Path, rel: str) -> bool:
    """Whether git ignores ``rel`` (tracked or not): False when git cannot tell."""
    return git_or_none(root, "check-ignore", "-q", "--no-index", "--", rel) is not None


def tracked(root: Path) -> list[str]:
    """Every path in the index, relative to the top."""
    out = git(root, "ls-files", "-z", "--cached")
    return [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p]


# What ``git rev-parse --git-dir --git-common-dir`` printed, by the folder it ran in (and the
# variables that move a repository): a work tree's git directories do not change while a
# command runs, and a hook attempt asks for them from three layers (the repository's top, a
# merge in progress, the reply cache). Only answers are kept: a folder that is not yet in a
# repository is asked again.
_GIT_DIRS: dict[tuple[str, ...], tuple[str, str]] = {}


def _dirs_key(folder: Path | None) -> tuple[str, ...]:
    return (os.path.abspath(folder if folder is not None else os.getcwd()),
            *(os.environ.get(v, "") for v in ("GIT_DIR", "GIT_COMMON_DIR", "GIT_WORK_TREE")))


def _git_dirs(folder: Path | None) -> tuple[str, str] | None:
    """(git dir, common git dir) as git prints them in ``folder`` (relative to it, or
    absolute), or None outside a repository (or without git)."""
    key = _dirs_key(folder)
    found = _GIT_DIRS.get(key)
    if found is None:
        out = git_or_none(folder, "rev-parse", "--git-dir", "--git-common-dir")
        lines = out.decode("utf-8", "surrogateescape").splitlines() if out is not None else []
        if len(lines) != 2 or not all(line.strip() for line in lines):
            return None
        found = _GIT_DIRS[key] = (lines[0].strip(), lines[1].strip())
    return found


def repo_root(start: Path | None = None) -> Path:
    """The top of the work tree around ``start`` (default: here). Its git directories come
    with it, for the questions that follow."""
    try:
        out = git(start, "rev-parse", "--show-toplevel", "--git-dir", "--git-common-dir")
    except CascadeError:
        raise CascadeError("not inside a git repository", start or Path.cwd()) from None
    lines = out.decode().splitlines()
    if len(lines) != 3 or not all(line.strip() for line in lines):  # not a plain work tree
        return Path(git(start, "rev-parse", "--show-toplevel").decode().strip())
    _GIT_DIRS[_dirs_key(start)] = (lines[1].strip(), lines[2].strip())
    return Path(lines[0].strip())


def git_dir_or_none(root: Path) -> Path | None:
    """The common git directory, or None outside a repository (or without git)."""
    dirs = _git_dirs(root)
    return root / dirs[1] if dirs is not None else None  # an absolute one: itself


def staged_paths(root: Path) -> list[str]:
    """Paths added, copied, modified or renamed in the index, relative to the top."""
    out = git(root, "diff", "--cached", "--name-only", "--diff-filter=ACMR", "-z", "--no-renames")
    return [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p]


def records(out: bytes) -> Iterator[tuple[list[str], str]]:
    """The ``<fields>\t<path>`` records of a ``-z`` listing (ls-files --stage, ls-tree)."""
    for record in out.decode("utf-8", "surrogateescape").split("\0"):
        if record:
            meta, path = record.split("\t", 1)
            yield meta.split(), path


def index_entries(root: Path, paths: list[str],
                  index: str | None = None) -> dict[str, tuple[str, str]]:
    """{path: (mode, blob id)} for the paths that are in the index (stage 0); ``index``:
    another index file than the environment's."""
    if not paths:
        return {}
    out = git(root, "ls-files", "--stage", "-z", "--", *paths, index=index)
    return {path: (mode, blob) for (mode, blob, stage), path in records(out) if stage == "0"}


def index_blobs(root: Path, paths: list[str], index: str | None = None) -> dict[str, str]:
    """{path: blob id} for the paths that are in the index (stage 0)."""
    return {path: blob for path, (_mode, blob) in index_entries(root, paths, index).items()}


SYMLINK_MODE = "120000"


def read_blobs(root: Path, blobs: list[str]) -> dict[str, bytes]:
    """Contents of blobs, in one ``git cat-file --batch`` call."""
    wanted = list(dict.fromkeys(blobs))
    if not wanted:
        return {}
    out = git(root, "cat-file", "--batch", input=("\n".join(wanted) + "\n").encode())
    result: dict[str, bytes] = {}
    pos = 0
    for blob in wanted:
        end = out.index(b"\n", pos)
        header = out[pos:end].split()
        pos = end + 1
        if len(header) < 3 or header[1] == b"missing":
            continue
        size = int(header[2])
        result[blob] = out[pos:pos + size]
        pos += size + 1
    return result


class BlobReader:
    """Blobs read one at a time, in any order, through one ``git cat-file --batch`` kept open;
    nothing is kept. For a reader that learns what it needs as it goes (the history walk)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._proc: subprocess.Popen[bytes] | None = None

    def read(self, blob: str) -> bytes:
        if self._proc is None:
            try:
                self._proc = subprocess.Popen(["git", "cat-file", "--batch"], cwd=self.root,
                                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                              stderr=subprocess.DEVNULL)
            except FileNotFoundError:
                raise CascadeError("git is not installed (or not on PATH)") from None
        stdin, stdout = self._proc.stdin, self._proc.stdout
        assert stdin is not None and stdout is not None
        stdin.write(f"{blob}\n".encode())
        stdin.flush()
        header = stdout.readline().split()
        if len(header) < 3 or header[1] == b"missing":
            raise CascadeError(f"git object {blob} is missing")
        size = int(header[2])
        data = stdout.read(size)
        stdout.read(1)  # the newline after the contents
        return data

    def close(self) -> None:
        if self._proc is not None:
            for pipe in (self._proc.stdin, self._proc.stdout):
                if pipe is not None:
                    pipe.close()
            self._proc.wait()
            self._proc = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def version_at(root: Path, rel: str, ref: str = "HEAD") -> bytes | None:
    """The bytes of ``rel`` at ``ref`` (None: not there)."""
    out = git(root, "cat-file", "--batch", input=f"{ref}:{rel}\n".encode(), check=False)
    header, _, rest = out.partition(b"\n")
    parts = header.split()
    if len(parts) < 3 or parts[1] != b"blob":
        return None
    return rest[:int(parts[2])]


def merge_head(root: Path) -> str | None:
    """The other parent of a merge in progress, if any."""
    dirs = _git_dirs(root)
    path = root / (dirs[0] if dirs else git(root, "rev-parse", "--git-dir").decode().strip())
    try:
        return (path / "MERGE_HEAD").read_text().split()[0]
    except (OSError, IndexError):
        return None
