"""Atomic file writes: a temp file in the same folder, fsync, rename. A reader sees the old
file or the new one, never half of one; an interrupted write leaves the old file as it was."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from cascade.base.errors import CascadeError
from cascade.base.safepath import LINK_HINT


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
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
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
