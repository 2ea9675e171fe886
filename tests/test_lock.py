"""The repository lock (cascade.loop.lock) between real processes: a second run waits for the
first, gives up after its timeout with one line, and gets the lock as soon as the holder
exits -- however it exits.

Each test runs twice: with ``flock`` (this machine's branch) and with the Windows branch,
``msvcrt.locking``. This machine has no msvcrt, so the child processes import the lock module
the way Windows would -- ``import fcntl`` fails -- with a stand-in ``msvcrt`` whose
``locking`` keeps the Windows contract (LK_NBLCK locks ``nbytes`` from the current position or
fails at once with EACCES, LK_UNLCK must unlock exactly a locked region) over POSIX byte-range
locks, which contend between processes as Windows' do. What it proves is the module's own
logic on that branch: the fallback import, the retry loop, the timeout, the unlock; not
Windows itself."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO

CHILD = r'''
import errno, json, os, sys, time

branch, action, git_dir = sys.argv[1], sys.argv[2], sys.argv[3]
log = []
if branch == "windows":
    import fcntl as posix

    class FakeMsvcrt:  # the subset of msvcrt the lock uses, with Windows' rules
        LK_UNLCK, LK_LOCK, LK_NBLCK, LK_RLCK, LK_NBRLCK = 0, 1, 2, 3, 4
        held = set()

        def locking(self, fd, mode, nbytes):
            pos = os.lseek(fd, 0, os.SEEK_CUR)
            log.append([mode, pos, nbytes])
            if mode == self.LK_NBLCK:
                try:
                    posix.lockf(fd, posix.LOCK_EX | posix.LOCK_NB, nbytes, pos, os.SEEK_SET)
                except OSError:
                    raise OSError(errno.EACCES, "Permission denied") from None
                self.held.add((fd, pos, nbytes))
            elif mode == self.LK_UNLCK:
                if (fd, pos, nbytes) not in self.held:  # Windows: unlocking what is not locked
                    raise OSError(errno.EACCES, "Permission denied")
                self.held.discard((fd, pos, nbytes))
                posix.lockf(fd, posix.LOCK_UN, nbytes, pos, os.SEEK_SET)
            else:
                raise AssertionError(f"unexpected mode {mode}")

    sys.modules["fcntl"] = None  # `import fcntl` raises ImportError, as on Windows
    sys.modules["msvcrt"] = FakeMsvcrt()

from pathlib import Path
from cascade.errors import CascadeError
from cascade.loop import lock

assert (lock.fcntl is None) == (branch == "windows")
if action == "hold":
    with lock.repo_lock(Path(git_dir)):
        print("held", flush=True)
        sys.stdin.read()  # until the test closes stdin, or kills this process
    print(json.dumps({"log": log}), flush=True)
else:
    start = time.monotonic()
    try:
        with lock.repo_lock(Path(git_dir), timeout=float(action)):
            got = time.monotonic() - start
        print(json.dumps({"ok": True, "waited": got, "log": log}))
    except CascadeError as exc:
        print(json.dumps({"ok": False, "waited": time.monotonic() - start, "error": str(exc),
                          "exit_code": exc.exit_code, "log": log}))
'''

LK_NBLCK, LK_UNLCK = 2, 0
MESSAGE = "another cascade run holds the lock; try again when it has finished"


def child(branch: str, action: str, git_dir: Path, **kwargs) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, "-c", CHILD, branch, action, str(git_dir)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
                            **kwargs)


def result(proc: subprocess.Popen[str]) -> dict:
    assert proc.stdout is not None
    out = proc.stdout.read()  # (not communicate: a holder's stdin may be closed already)
    assert proc.wait(timeout=60) == 0, out
    return json.loads(out.splitlines()[-1])


@pytest.fixture
def holder(tmp_path):
    """Start a process holding the lock of ``tmp_path/.git``; stopped at the end."""
    started: list[subprocess.Popen[str]] = []

    def start(branch: str) -> subprocess.Popen[str]:
        proc = child(branch, "hold", tmp_path / ".git")
        started.append(proc)
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "held"
        return proc

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


BRANCHES = pytest.mark.parametrize("branch", ["posix", "windows"])


@BRANCHES
def test_uncontended_lock_is_taken_and_released(tmp_path, branch):
    got = result(child(branch, "5", tmp_path / ".git"))
    assert got["ok"] and got["waited"] < 1.0
    assert (tmp_path / ".git" / "cascade" / "hook.lock").is_file()
    if branch == "windows":  # one byte at offset 0, unlocked before the file is closed
        assert got["log"] == [[LK_NBLCK, 0, 1], [LK_UNLCK, 0, 1]]


@BRANCHES
def test_a_second_run_waits_then_fails_with_one_line(tmp_path, holder, branch):
    held = holder(branch)
    got = result(child(branch, "0.6", tmp_path / ".git"))
    assert not got["ok"]
    assert 0.6 <= got["waited"] < 5.0  # it retried until the timeout, not longer
    lock_file = tmp_path / ".git" / "cascade" / "hook.lock"
    assert got["error"] == f"{lock_file}: {MESSAGE}"  # one line, naming the lock file
    assert "\n" not in got["error"] and got["exit_code"] == 1
    if branch == "windows":  # tried again and again; never unlocked what it did not hold
        assert len(got["log"]) >= 3 and all(e == [LK_NBLCK, 0, 1] for e in got["log"])
    assert held.poll() is None  # the holder was not disturbed


@BRANCHES
def test_the_waiter_gets_the_lock_when_the_holder_finishes(tmp_path, holder, branch):
    held = holder(branch)
    waiter = child(branch, "30", tmp_path / ".git")
    time.sleep(0.5)
    assert waiter.poll() is None  # still waiting
    assert held.stdin is not None
    held.stdin.close()  # the holder leaves its `with` block and exits
    assert result(held)["log"] == ([[LK_NBLCK, 0, 1], [LK_UNLCK, 0, 1]]
                                   if branch == "windows" else [])
    got = result(waiter)
    assert got["ok"] and 0.4 <= got["waited"] < 10.0


@BRANCHES
def test_the_lock_is_released_when_the_holder_is_killed(tmp_path, holder, branch):
    held = holder(branch)
    held.kill()  # no `finally` runs: the operating system drops the lock
    held.wait()
    got = result(child(branch, "5", tmp_path / ".git"))
    assert got["ok"] and got["waited"] < 1.0


def test_the_lock_module_imports_without_fcntl(tmp_path):
    """On Windows `import fcntl` fails: the module must still import (the hook imports it on
    every governed commit), and pick msvcrt."""
    proc = subprocess.run([sys.executable, "-c", "import sys; sys.modules['fcntl'] = None; "
                           "sys.modules['msvcrt'] = type(sys)('msvcrt'); "
                           "from cascade.loop import lock; "
                           "assert lock.fcntl is None and lock.msvcrt is sys.modules['msvcrt']"],
                          env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
