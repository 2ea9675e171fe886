"""One hook run at a time per repository: an flock on a file in the git directory."""
from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Iterator
from pathlib import Path

from cascade.errors import CascadeError


@contextlib.contextmanager
def repo_lock(git_dir: Path, timeout: float = 120.0) -> Iterator[None]:
    folder = git_dir / "cascade"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "hook.lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise CascadeError("another cascade run holds the lock; try again when it "
                                       "has finished", path, exit_code=1) from None
                time.sleep(0.1)
        yield
    finally:
        os.close(fd)  # closing releases the lock
