"""The ledger lock (cascade.ledger.lock) between real processes: a second writer waits for the
first, saying for whom, gives up after its timeout with one line naming the holder, and gets
the lock as soon as the holder exits -- however it exits. Then every command that appends to
a ledger, seen taking that lock, and the race it closes: a hook and a run at once.

The primitive's tests run twice: with ``flock`` (this machine's branch) and with the Windows
branch, ``msvcrt.locking``. This machine has no msvcrt, so the child processes import the lock
module the way Windows would -- ``import fcntl`` fails -- with a stand-in ``msvcrt`` whose
``locking`` keeps the Windows contract (LK_NBLCK locks ``nbytes`` from the current position or
fails at once with EACCES, LK_UNLCK must unlock exactly a locked region) over POSIX byte-range
locks, which contend between processes as Windows' do. What it proves is the module's own
logic on that branch: the fallback import, the retry loop, the timeout, the unlock, the
holder's description read past the locked byte; not Windows itself."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import inproc
import pytest
from conftest import REPO, git
from test_hook import DOC, LEDGER, PANEL, commit, install_plain, loop_repo, match, reply, script  # noqa: F401  (loop_repo: the hook tests' repository, a fixture)

from cascade import Discussion

CHILD = r'''
import errno, json, os, sys, time

branch, action, ledgers = sys.argv[1], sys.argv[2], sys.argv[3:]
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

    import subprocess  # (imported before the stand-in: subprocess takes any msvcrt for Windows)

    sys.modules["fcntl"] = None  # `import fcntl` raises ImportError, as on Windows
    sys.modules["msvcrt"] = FakeMsvcrt()

from cascade.base.errors import CascadeError
from cascade.ledger import lock

assert (lock.fcntl is None) == (branch == "windows")
if action == "hold":
    with lock.ledger_lock(*ledgers, holder="a test holder"):
        print("held", flush=True)
        sys.stdin.read()  # until the test closes stdin, or kills this process
    print(json.dumps({"log": log}), flush=True)
else:
    start = time.monotonic()
    try:
        with lock.ledger_lock(*ledgers, holder="a test waiter", timeout=float(action)):
            got = time.monotonic() - start
        print(json.dumps({"ok": True, "waited": got, "log": log}))
    except CascadeError as exc:
        print(json.dumps({"ok": False, "waited": time.monotonic() - start, "error": str(exc),
                          "exit_code": exc.exit_code, "log": log}))
'''

LK_NBLCK, LK_UNLCK = 2, 0
HOW = "try again when it has finished; if it hangs, end process {pid} " \
      "(CASCADE_LOCK_TIMEOUT=<seconds> waits longer)"
IDEA = "discussions/idea.discussion.md"
OTHER = "discussions/other.discussion.md"


def child(branch: str, action: str, *ledgers: Path | str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, "-c", CHILD, branch, action, *map(str, ledgers)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def result(proc: subprocess.Popen[str]) -> dict:
    assert proc.stdout is not None and proc.stderr is not None
    out = proc.stdout.read()  # (not communicate: a holder's stdin may be closed already)
    proc.err = proc.stderr.read()  # type: ignore[attr-defined]
    assert proc.wait(timeout=60) == 0, out + proc.err  # type: ignore[attr-defined]
    return json.loads(out.splitlines()[-1])


@pytest.fixture
def holder():
    """Start a process holding the locks of some ledgers; stopped at the end."""
    started: list[subprocess.Popen[str]] = []

    def start(branch: str, *ledgers: Path | str) -> subprocess.Popen[str]:
        proc = child(branch, "hold", *ledgers)
        started.append(proc)
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "held"
        return proc

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def release(proc: subprocess.Popen[str]) -> dict:
    """The holder leaves its ``with`` block and exits."""
    assert proc.stdin is not None
    proc.stdin.close()
    return result(proc)


BRANCHES = pytest.mark.parametrize("branch", ["posix", "windows"])


@BRANCHES
def test_uncontended_lock_is_taken_and_released(repo, branch):
    from cascade.ledger.lock import lock_file

    got = result(child(branch, "5", repo / IDEA))
    assert got["ok"]
    path = lock_file(repo / IDEA)  # in the git directory, named after the ledger
    assert path.parent == repo / ".git" / "cascade" / "locks"
    assert path.name.startswith("idea.discussion.md.") and path.name.endswith(".lock")
    assert path.is_file() and path.read_bytes() == b""  # its holder's note removed on release
    assert not (repo / "discussions").exists()  # nothing in the working tree
    if branch == "windows":  # one byte at offset 0, unlocked before the file is closed
        assert got["log"] == [[LK_NBLCK, 0, 1], [LK_UNLCK, 0, 1]]


@BRANCHES
def test_a_second_writer_waits_saying_for_whom_then_fails_with_one_line(repo, holder, branch):
    held = holder(branch, repo / IDEA)
    waiter = child(branch, "0.6", repo / IDEA)
    got = result(waiter)
    assert not got["ok"]
    assert 0.6 <= got["waited"] < 30.0  # it retried until the timeout, not longer
    assert got["error"] == (f"{IDEA}: a test holder (pid {held.pid}) is still writing to it "
                            f"after 0.6 s: " + HOW.format(pid=held.pid))
    assert "\n" not in got["error"] and got["exit_code"] == 1
    assert waiter.err == (f"cascade: waiting for a test holder (pid {held.pid}) to finish "  # type: ignore[attr-defined]
                          f"with {IDEA}\n")  # once
    if branch == "windows":  # tried again and again; never unlocked what it did not hold
        assert len(got["log"]) >= 3 and all(e == [LK_NBLCK, 0, 1] for e in got["log"])
    assert held.poll() is None  # the holder was not disturbed


@BRANCHES
def test_the_waiter_gets_the_lock_when_the_holder_finishes(repo, holder, branch):
    held = holder(branch, repo / IDEA)
    waiter = child(branch, "60", repo / IDEA)
    assert waiter.stderr is not None
    assert "waiting for a test holder" in waiter.stderr.readline()
    assert waiter.poll() is None  # still waiting
    assert release(held)["log"] == ([[LK_NBLCK, 0, 1], [LK_UNLCK, 0, 1]]
                                    if branch == "windows" else [])
    assert result(waiter)["ok"]


@BRANCHES
def test_the_lock_is_released_when_the_holder_is_killed(repo, holder, branch):
    held = holder(branch, repo / IDEA)
    held.kill()  # no `finally` runs: the operating system drops the lock
    held.wait()
    assert result(child(branch, "5", repo / IDEA))["ok"]


@BRANCHES
def test_two_ledgers_are_written_at_once(repo, holder, branch):
    holder(branch, repo / IDEA)
    got = result(child(branch, "0", repo / OTHER))
    assert got["ok"]


@BRANCHES
def test_a_writer_of_several_ledgers_takes_them_in_one_order(repo, holder, branch):
    """It waits for the first lock (in lock-file order, whatever order it was given them in)
    holding none of the others: two such writers never wait for each other crosswise."""
    from cascade.ledger.lock import lock_file

    first, second = sorted([repo / IDEA, repo / OTHER], key=lock_file)
    held = holder(branch, first)
    waiter = child(branch, "60", second, first)
    assert waiter.stderr is not None
    assert waiter.stderr.readline().endswith(f"to finish with {first.relative_to(repo)}\n")
    assert result(child(branch, "0", second))["ok"]  # the waiter holds nothing meanwhile
    release(held)
    assert result(waiter)["ok"]


def test_within_a_thread_the_lock_is_re_entrant_and_another_thread_waits(repo):
    from cascade.base.errors import CascadeError
    from cascade.ledger.lock import ledger_lock

    outcome: list[str] = []

    def other() -> None:
        try:
            with ledger_lock(repo / IDEA, holder="a thread", timeout=0):
                outcome.append("taken")
        except CascadeError as exc:
            outcome.append(str(exc))

    with ledger_lock(repo / IDEA, holder="a test", timeout=0):
        with ledger_lock(repo / IDEA, repo / OTHER, holder="a command it runs", timeout=0):
            pass  # (cascade turn handing a step protocol to cascade run)
        thread = threading.Thread(target=other)
        thread.start()
        thread.join(timeout=60)
    assert outcome == [f"{IDEA}: a test (pid {os.getpid()}) is still writing to it after 0 s: "
                       + HOW.format(pid=os.getpid())]
    with ledger_lock(repo / IDEA, holder="again", timeout=0):
        pass  # released by the outermost block only


def test_outside_a_repository_the_lock_file_is_beside_the_ledger(tmp_path):
    from cascade.ledger.lock import ledger_lock, lock_file

    ledger = tmp_path / "notes" / "idea.discussion.md"
    with ledger_lock(ledger, holder="a test", timeout=0):
        pass
    assert lock_file(ledger) == tmp_path / "notes" / ".idea.discussion.md.lock"
    assert lock_file(ledger).is_file()


def test_the_lock_module_imports_without_fcntl(tmp_path):
    """On Windows `import fcntl` fails: the module must still import (the hook imports it on
    every governed commit), and pick msvcrt."""
    proc = subprocess.run([sys.executable, "-c", "import subprocess, sys; "
                           "sys.modules['fcntl'] = None; "
                           "sys.modules['msvcrt'] = type(sys)('msvcrt'); "
                           "from cascade.ledger import lock; "
                           "assert lock.fcntl is None and lock.msvcrt is sys.modules['msvcrt']"],
                          env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


# ---- one writer per ledger: the commands that append take the ledger's lock ------------------


def cascade(repo: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "cascade", *args], cwd=repo,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


class Lines:
    """A process's stderr, read as it comes (a thread), so a test can wait for a line."""

    def __init__(self, stream) -> None:
        self.lines: list[str] = []
        self.seen = threading.Condition()
        self.thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self.thread.start()

    def _read(self, stream) -> None:
        for line in stream:
            with self.seen:
                self.lines.append(line)
                self.seen.notify_all()
        with self.seen:
            self.lines.append("")  # end of stream
            self.seen.notify_all()

    def wait_for(self, text: str, timeout: float = 60.0, also=lambda: False) -> str | None:
        """The first line holding ``text``; None when the stream ends, ``also()`` turns true
        or the timeout passes first."""
        deadline = time.monotonic() + timeout
        with self.seen:
            while True:
                found = next((line for line in self.lines if text in line), None)
                if found is not None or "" in self.lines or also():
                    return found
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self.seen.wait(min(left, 0.1))

    def text(self) -> str:
        self.thread.join(timeout=60)
        return "".join(self.lines)


def wait_until(condition, timeout: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.mark.usefixtures("hook_stages_nothing")  # the hook's appends stay for the run to read
def test_a_hook_and_a_run_at_once_ask_the_panel_once(loop_repo, fake_llm):
    """issue 22.4: `git commit` (its hook) and `cascade run` on one ledger at the same moment.
    The run waits for the hook, says so, then reads what the hook wrote: the panel was asked
    once (3 calls, not 6), and the ledger holds each persona's block once."""
    repo = loop_repo
    install_plain(repo)
    script(fake_llm, ("CHANGES", "CHANGES", "CHANGES"))
    git(repo, "add", DOC)
    assert commit(repo).returncode == 1  # the ledger, with the panel's first reviews
    assert fake_llm.calls() == 3
    said = inproc.cascade(repo, "comment", LEDGER, "Added a backup plan.")
    assert said.returncode == 0, said.stderr  # new input: the whole panel is due again
    asked_from = len((repo / LEDGER).read_text().splitlines())
    git(repo, "add", LEDGER)

    release = threading.Event()  # the replies wait for the test, not for a clock

    def held(request):
        release.wait(120)
        return reply("better now", "READY")

    for name in PANEL:
        fake_llm.script(match(name), held)
    committing = subprocess.Popen(["git", "commit", "-m", "change"], cwd=repo,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert wait_until(lambda: fake_llm.calls() == 6), "the hook never asked the panel"
        running = cascade(repo, "run", LEDGER)
        err = Lines(running.stderr)
        waited = err.wait_for("waiting for", also=lambda: fake_llm.calls() > 6)
    finally:
        release.set()
    out = committing.communicate(timeout=120)[0]
    assert committing.returncode == 1, out  # blocked: three new entries to read
    assert running.wait(timeout=120) == 0, err.text()
    assert fake_llm.calls() == 3 + 3, "the panel was asked twice"
    d = Discussion.load(repo / LEDGER, root=repo)
    after = [c.author for c in d.comments if c.line > asked_from]
    assert sorted(after) == sorted(PANEL)
    assert d.status == "ACCEPTED"
    assert waited is not None and re.fullmatch(
        rf"cascade: waiting for cascade hook \(pid \d+\) to finish with {re.escape(LEDGER)}\n",
        waited), err.text()
    assert "nobody is pending" in running.stdout.read()


@pytest.fixture
def writers_repo(loop_repo, fake_llm):
    """The governed ADR (status Proposed) with its ledger, holding the panel's first reviews;
    and an ungoverned discussion of phases with one participant."""
    repo = loop_repo
    (repo / DOC).write_text("# Use SQLite\n\n## Status\n\nProposed\n\n## Context\n\nEvents.\n")
    script(fake_llm, ("CHANGES", "CHANGES", "CHANGES"))
    git(repo, "add", DOC)
    first = inproc.cascade(repo, "hook", DOC)  # the setup, in this process
    assert first.returncode == 1 and (repo / LEDGER).is_file(), first.stdout + first.stderr
    made = inproc.cascade(repo, "new", "Idea", "--protocol", "phased", "--participants",
                          "architect")
    assert made.returncode == 0 and (repo / IDEA).is_file(), made.stderr
    fake_llm.default(reply("A thought.", "READY"))
    return repo


def _revise(repo: Path) -> None:
    (repo / DOC).write_text("# Use SQLite\n\n## Status\n\nProposed\n\n## Context\n\nEvents, "
                            "with backups.\n")
    git(repo, "add", DOC)


UI_RUN = ("from pathlib import Path; from cascade.turns.asking import Progress; "
          f"from cascade.ui.actions import run_next; print(run_next(Path({IDEA!r}), Progress()))")
API_RUN = f"from cascade import Runner; print(len(Runner().run_turn({IDEA!r})))"
CACHING = "discussions/caching.discussion.md"
WRITERS = [  # (what, before, its command line, the ledger it appends to, its exit code)
    ("comment", None, ["comment", IDEA, "A thought of mine."], IDEA, 0),
    ("advance", None, ["advance", IDEA], IDEA, 0),
    ("turn", None, ["turn", IDEA], IDEA, 0),
    ("run", None, ["run", IDEA], IDEA, 0),
    ("discuss", None, ["discuss", "Caching", "--protocol", "review", "--participants",
                       "architect", "--output", CACHING], CACHING, 0),
    ("decide", None, ["decide", DOC, "READY", "--reason", "Ship it."], LEDGER, 0),
    ("hook", _revise, ["hook", DOC], LEDGER, 1),
    ("new --supersedes", None, ["new", "Use Postgres", "--rule", "adr", "--supersedes", "1"],
     LEDGER, 0),
    ("ui run", None, ["-c", UI_RUN], IDEA, 0),
    ("Runner", None, ["-c", API_RUN], IDEA, 0),
]


@pytest.mark.parametrize("what, before, args, ledger, code", WRITERS,
                         ids=[w[0] for w in WRITERS])
def test_every_writer_waits_for_the_ledger_lock(writers_repo, holder, what, before, args,
                                                ledger, code):
    """While another process holds the ledger's lock, the command says for whom it waits and
    writes nothing; once the holder is done, it writes."""
    repo = writers_repo
    if before is not None:
        before(repo)
    path = repo / ledger
    was = path.read_bytes() if path.exists() else None
    held = holder("posix", path)
    proc = subprocess.Popen([sys.executable, *(["-m", "cascade"] if args[0] != "-c" else []),
                             *args], cwd=repo, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    err = Lines(proc.stderr)
    try:
        line = err.wait_for("waiting for", also=lambda: proc.poll() is not None)
        assert line == (f"cascade: waiting for a test holder (pid {held.pid}) to finish with "
                        f"{ledger}\n"), err.text()
        assert proc.poll() is None  # still waiting ...
        assert (path.read_bytes() if path.exists() else None) == was  # ... having written nothing
    finally:
        release(held)
    out = proc.communicate(timeout=120)[0]
    assert proc.returncode == code, out + err.text()
    assert path.read_bytes() != was  # then it wrote


def test_a_writer_gives_up_with_one_line_naming_the_holder(writers_repo, holder):
    held = holder("posix", writers_repo / IDEA)
    was = (writers_repo / IDEA).read_bytes()
    proc = subprocess.run([sys.executable, "-m", "cascade", "comment", IDEA, "Late."],
                          cwd=writers_repo, capture_output=True, text=True,
                          env={**os.environ, "CASCADE_LOCK_TIMEOUT": "0.5"}, timeout=120)
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[-1] == (
        f"cascade: {IDEA}: a test holder (pid {held.pid}) is still writing to it after 0.5 s: "
        + HOW.format(pid=held.pid))
    assert (writers_repo / IDEA).read_bytes() == was
    bad = subprocess.run([sys.executable, "-m", "cascade", "comment", IDEA, "Late."],
                         cwd=writers_repo, capture_output=True, text=True,
                         env={**os.environ, "CASCADE_LOCK_TIMEOUT": "soon"}, timeout=120)
    assert (bad.returncode, bad.stderr) == (
        2, "cascade: CASCADE_LOCK_TIMEOUT='soon' is not a number\n")


def test_a_discussion_given_to_the_runner_is_brought_up_to_date_under_the_lock(
        writers_repo, fake_llm):
    """The Python API gets a Discussion loaded before another writer answered: it reads the
    file again once it holds the lock, and asks nobody twice."""
    from cascade import Runner

    repo = writers_repo
    plain = "discussions/plain.discussion.md"
    made = inproc.cascade(repo, "new", "Plain", "--protocol", "review", "--participants",
                          "architect")
    assert made.returncode == 0, made.stderr
    stale = Discussion.load(repo / plain, root=repo)  # the architect is due
    calls = fake_llm.calls()
    answered = inproc.cascade(repo, "turn", plain)  # another writer answers
    assert answered.returncode == 0, answered.stderr
    assert fake_llm.calls() == calls + 1  # the architect answered
    assert Runner().run_turn(stale) == []  # nobody is due any more
    assert fake_llm.calls() == calls + 1
    assert [c.author for c in stale.comments].count("AI-Architect") == 1


def test_discuss_into_a_new_folder_runs_under_its_own_lock(writers_repo, fake_llm):
    """The lock is taken before the folder exists and taken again, by the turn the discussion
    runs, once it does: the same lock (no waiting for itself)."""
    proc = inproc.cascade(writers_repo, "discuss", "Caching", "--protocol", "review",
                          "--participants", "architect", "--output",
                          "notes/deep/caching.discussion.md", env={"CASCADE_LOCK_TIMEOUT": "5"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "waiting" not in proc.stderr
    d = Discussion.load(writers_repo / "notes/deep/caching.discussion.md", root=writers_repo)
    assert [c.author for c in d.comments] == ["AI-Architect"]
