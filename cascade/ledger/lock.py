"""One writer per ledger: every command that appends to a ledger holds its lock from before it
reads the ledger until its appends are written. A second writer waits -- saying once, on
stderr, for whom -- then reads what the first wrote, so it asks only whoever is still due.

A lock per ledger: two ledgers can be written at once, and a writer of several (the hook)
takes theirs sorted by lock file, so two such writers never wait for each other crosswise.
The lock files live in ``.git/cascade/locks/<ledger name>.<digest of its path>.lock``
(beside the ledger, hidden, outside a repository); a holder writes its pid and what it is
(``cascade hook``) after the first byte, for a waiter to show. POSIX: ``flock`` on the whole
file; Windows: ``msvcrt.locking`` on its first byte. Tried without blocking until the timeout
(``lock_timeout``); the system drops it when the holder exits, however it exits. Re-entrant
within one thread (``cascade turn`` hands a step protocol to ``cascade run``); another thread
waits like another process."""
from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from cascade.base.env import number
from cascade.base.errors import CascadeError, display_path
from cascade.base.gitio import git_dir_or_none
from cascade.base.text import printable

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]
    import msvcrt
else:
    msvcrt = None  # type: ignore[assignment]

TIMEOUT = 120.0  # seconds a writer waits for another before it gives up
# What msvcrt.locking(LK_NBLCK) raises when another handle holds the byte.
_HELD = {errno.EACCES, getattr(errno, "EDEADLOCK", errno.EDEADLK)}
_mine = threading.local()  # the lock files this thread holds: path -> depth


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


def lock_timeout() -> float:
    """How long a writer waits for another: ``CASCADE_LOCK_TIMEOUT`` seconds, else 120."""
    return float(number("CASCADE_LOCK_TIMEOUT", TIMEOUT))  # type: ignore[arg-type]


def lock_file(ledger: str | os.PathLike[str],
              git_dirs: dict[Path, Path | None] | None = None) -> Path:
    """The lock file of the ledger at ``ledger`` (which need not exist yet). ``git_dirs``:
    the git directory of each folder asked already."""
    ledger = Path(ledger)
    target = ledger.parent.resolve() / ledger.name  # (a link at the ledger is never followed)
    folder = next(p for p in target.parents if p.is_dir())
    git_dirs = {} if git_dirs is None else git_dirs
    if folder not in git_dirs:  # the git directory the repository's worktrees share
        found = git_dir_or_none(folder)
        git_dirs[folder] = found.resolve() if found is not None else None  # one spelling
    found = git_dirs[folder]
    if found is None:
        target.parent.mkdir(parents=True, exist_ok=True)
        return target.parent / f".{target.name}.lock"
    digest = hashlib.sha1(os.path.normcase(str(target)).encode("utf-8", "surrogateescape"))
    return found / "cascade" / "locks" / f"{target.name}.{digest.hexdigest()[:12]}.lock"


@contextlib.contextmanager
def ledger_lock(*ledgers: str | os.PathLike[str], holder: str,
                timeout: float | None = None) -> Iterator[None]:
    """Hold the lock of every ledger in ``ledgers`` (taken in the order of their lock files)
    while the block runs. ``holder``: what is writing (``cascade comment``), as a waiter
    shows it. Gives up after ``timeout`` seconds in all (default: ``lock_timeout()``) with a
    one-line CascadeError (exit 1) that names the holder."""
    wait = lock_timeout() if timeout is None else timeout
    git_dirs: dict[Path, Path | None] = {}
    files = sorted({lock_file(p, git_dirs): Path(p) for p in ledgers}.items())
    deadline = time.monotonic() + wait
    with contextlib.ExitStack() as stack:
        for path, ledger in files:
            stack.enter_context(_hold(path, ledger, holder, deadline, wait))
        yield


@contextlib.contextmanager
def _hold(path: Path, ledger: Path, holder: str, deadline: float, wait: float) -> Iterator[None]:
    held: dict[Path, int] = _mine.__dict__.setdefault("held", {})
    if path in held:  # this thread holds it already (a command run by another)
        held[path] += 1
        try:
            yield
        finally:
            held[path] -= 1
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        started, told = time.monotonic(), False
        while not _try_lock(fd):
            now = time.monotonic()
            if now >= deadline:
                who = _holder(path)
                pid = f"; if it hangs, end process {who[0]}" if who else ""
                raise CascadeError(
                    f"{_describe(who)} is still writing to it after {wait:g} s: try again when "
                    f"it has finished{pid} (CASCADE_LOCK_TIMEOUT=<seconds> waits longer)",
                    ledger, exit_code=1)
            if not told:
                who = _holder(path)
                if who is not None or now - started >= 1.0:  # (a holder writes who it is
                    told = True  # just after it takes the lock)
                    print(printable(f"cascade: waiting for {_describe(who)} to finish with "
                                    f"{display_path(ledger)}"), file=sys.stderr, flush=True)
            time.sleep(0.1)
        held[path] = 1
        try:
            _write_holder(fd, holder)
            yield
        finally:
            del held[path]
            with contextlib.suppress(OSError):  # the next holder writes its own
                os.ftruncate(fd, 0)
            with contextlib.suppress(OSError):  # the close below frees it all the same
                _unlock(fd)
    finally:
        os.close(fd)


def _write_holder(fd: int, holder: str) -> None:
    line = " ".join(f"{os.getpid()} {holder}".split())
    with contextlib.suppress(OSError):  # who holds it is only shown: never a failure
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, f"\n{line}\n".encode("utf-8", "replace"))


def _holder(path: Path) -> tuple[int, str] | None:
    """(pid, what) of the process holding the lock file at ``path``, if it says so. Read past
    the first byte: on Windows the holder has locked that one."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        os.lseek(fd, 1, os.SEEK_SET)
        text = os.read(fd, 4096).decode("utf-8", "replace").strip()
    except OSError:
        return None
    finally:
        os.close(fd)
    pid, _, what = text.partition(" ")
    return (int(pid), what) if pid.isdigit() and what else None


def _describe(who: tuple[int, str] | None) -> str:
    return f"{who[1]} (pid {who[0]})" if who else "another cascade process"
