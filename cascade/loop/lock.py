"""One hook run at a time per repository: a lock on a file in the git directory.

POSIX: ``flock`` on the whole file. Windows (no ``fcntl``): ``msvcrt.locking`` on the file's
first byte. Either way the lock is tried without blocking until ``timeout``, and the
operating system drops it when the holder exits, however it exits."""
from __future__ import annotations

import contextlib
import errno
import os
import time
from collections.abc import Iterator
from pathlib import Path

from cascade.errors import CascadeError

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]
    import msvcrt
else:
    msvcrt = None  # type: ignore[assignment]

# What msvcrt.locking(LK_NBLCK) raises when another handle holds the byte.
_HELD = {errno.EACCES, getattr(errno, "EDEADLOCK", errno.EDEADLK)}


def _try_lock(fd: int) -> bool:
    """Take the lock without waiting: True, or False when another run holds it."""
    if fcntl is not None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True
    os.lseek(fd, 0, os.SEEK_SET)  # msvcrt locks from the current position
    try:
        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
    except OSError as exc:
        if exc.errno in _HELD:
            return False
        raise
    return True


def _unlock(fd: int) -> None:
    if fcntl is not None:
        return  # closing the file releases an flock
    os.lseek(fd, 0, os.SEEK_SET)
    msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)  # Windows frees a lock left at close only later


@contextlib.contextmanager
def repo_lock(git_dir: Path, timeout: float = 120.0) -> Iterator[None]:
    folder = git_dir / "cascade"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "hook.lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + timeout
        while not _try_lock(fd):
            if time.monotonic() >= deadline:
                raise CascadeError("another cascade run holds the lock; try again when it "
                                   "has finished", path, exit_code=1)
            time.sleep(0.1)
        try:
            yield
        finally:
            with contextlib.suppress(OSError):  # the close below frees it all the same
                _unlock(fd)
    finally:
        os.close(fd)
