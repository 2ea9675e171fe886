"""Atomic file writes: a temp file in the same folder, fsync, rename. A reader sees the old
file or the new one, never half of one; an interrupted write leaves the old file as it was.
A temp file is named for its process (``.<name>.<pid>.<random>.tmp``), so that the next write
of the same file removes the ones a killed process left (SIGKILL, an out-of-memory kill)."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from cascade.base.errors import CascadeError
from cascade.base.safepath import LINK_HINT, refuse_links


def atomic_write(path: Path, data: bytes, mode: int | None = None, *,
                 durable: bool = True) -> None:
    """Replace ``path`` with ``data``; ``mode`` keeps an existing file's permissions.
    ``durable=False`` skips the fsync: for a cache, whose entry a reader that finds it torn
    after a power loss takes as a miss -- still never half of one while the system runs.

    An operating-system failure (disk full, file too large, permission denied, ...) leaves
    ``path`` as it was, removes the temp file, and is raised as an ``OSError`` naming
    ``path`` (not the temp file; a failed ``write`` names no file at all).

    A ``path`` that is a symbolic link is refused (one line, exit 2): renaming onto it would
    replace the link with a file, and following it would write outside the repository."""
    if os.path.islink(path):
        raise CascadeError(f"is a symbolic link: {LINK_HINT}", path)
    _sweep(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp",
                                   dir=path.parent)
    except OSError as exc:
        raise _naming(exc, path) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode & 0o7777)
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except OSError as exc:
        _discard(tmp)
        raise _naming(exc, path) from None
    except BaseException:
        _discard(tmp)
        raise


def write_inside(root: Path, path: Path, data: bytes, what: str, *,
                 durable: bool = True) -> None:
    """``atomic_write`` of a file kept beside a ledger, refused (one line, exit 2, naming it
    ``what``) when it or a folder of it below the work tree ``root`` is a symbolic link."""
    try:
        rel = path.resolve().relative_to(root.resolve()).as_posix()
        refuse_links(root, rel, what)
    except ValueError:
        pass  # a ledger outside any repository: its own folder
    atomic_write(path, data, durable=durable)


def _sweep(path: Path) -> None:
    """Remove the temp files earlier writes of ``path`` left behind when their process was
    killed: named for a process that no longer runs. (A live writer's, another user's, and
    any file not of this form are left alone; POSIX only: Windows has no signal 0.)"""
    if os.name != "posix":
        return
    prefix = f".{path.name}."
    try:
        found = [e.name for e in os.scandir(path.parent)
                 if e.name.startswith(prefix) and e.name.endswith(".tmp")]
    except OSError:
        return  # the write itself says what is wrong with the folder
    for name in found:
        pid = name[len(prefix):].split(".", 1)[0]
        if pid.isdigit() and not _running(int(pid)):
            _discard(str(path.parent / name))


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process (EPERM): it runs
        return True
    return True


def _discard(tmp: str) -> None:
    try:
        os.unlink(tmp)
    except OSError:  # already gone, or the folder refuses: the original error matters more
        pass


def _naming(exc: OSError, path: Path) -> OSError:
    """``exc`` as the same kind of error (``OSError(errno, ...)`` picks the subclass) about
    ``path``; one without an errno is not an operating-system error: kept as it is."""
    if exc.errno is None:
        return exc
    return OSError(exc.errno, exc.strerror or os.strerror(exc.errno), str(path))
