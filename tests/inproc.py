"""cascade's commands run in the test's own process, as a separate ``python -m cascade`` would
run them, for the tests that assert what a command prints or decides rather than how a process
is started (a ``python -m cascade`` costs 0.1-0.5 s of start-up and imports; in this process a
command costs what it does).

What a fresh process would not have is dropped before each command: every ``functools`` cache
of the cascade modules (personas, protocols, templates and settings read from disk), so a file
a test writes between two commands is read again. The working directory, environment and
standard streams are the command's for its duration and restored after it.

``commit`` is ``git commit`` with cascade's plain pre-commit hook run here: the hook in this
process (what ``.git/hooks/pre-commit`` runs, with the environment git gives it), then, when it
passes, the real ``git commit`` without that hook (its prepare-commit-msg hook, the trailer,
still runs). The tests that prove the hook under a real ``git commit`` (plain hooks and
pre-commit: tests/test_hook.py, tests/test_staging.py and a few scenarios of each concern)
keep ``test_hook.commit``.
"""
from __future__ import annotations

import asyncio
import contextlib
import io
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


class Ran:
    """What a command did: like ``subprocess.CompletedProcess``, with ``out`` (stdout then
    stderr, as the tests read a hook's output under ``git commit``)."""

    def __init__(self, args: list[str], returncode: int, stdout: str, stderr: str) -> None:
        self.args, self.returncode, self.stdout, self.stderr = args, returncode, stdout, stderr
        self.out = stdout + stderr

    def __repr__(self) -> str:
        return f"Ran({self.args!r}, {self.returncode}, {self.out[-2000:]!r})"


def forget() -> None:
    """Drop what the cascade modules cached, as a new process starts without it."""
    for name, module in list(sys.modules.items()):
        if name != "cascade" and not name.startswith("cascade."):
            continue
        for value in list(vars(module).values()):
            if getattr(value, "__module__", None) == name and callable(
                    getattr(value, "cache_clear", None)):
                value.cache_clear()


@contextlib.contextmanager
def _environment(env: dict[str, str | None] | None):
    saved = {key: os.environ.get(key) for key in (env or {})}
    for key, value in (env or {}).items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _loop_running() -> bool:
    """Whether this thread runs an event loop (an async test): a command that runs its own
    (asyncio.run) cannot run here then, and runs as a process."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def cascade(cwd: Path, *args: str, env: dict[str, str | None] | None = None,
            input: str = "") -> Ran:
    """``cascade ARGS`` in ``cwd``, in this process: its exit code, stdout and stderr (in an
    async test, ``python -m cascade ARGS`` as a process)."""
    if _loop_running():
        full = {**os.environ}
        for key, value in (env or {}).items():
            if value is None:
                full.pop(key, None)
            else:
                full[key] = value
        full["PYTHONPATH"] = str(REPO) + os.pathsep + full.get("PYTHONPATH", "")
        proc = subprocess.run([sys.executable, "-m", "cascade", *args], cwd=cwd, env=full,
                              input=input, capture_output=True, text=True, timeout=300)
        return Ran(["cascade", *args], proc.returncode, proc.stdout, proc.stderr)
    from cascade.main import main

    forget()
    # a process whose output is captured finds no terminal: 80 columns (argparse's help, the
    # progress lines), whatever terminal pytest runs in
    env = {"COLUMNS": os.environ.get("COLUMNS", "80"), "LINES": os.environ.get("LINES", "24"),
           **(env or {})}
    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    stdin = sys.stdin
    os.chdir(cwd)
    sys.stdin = io.StringIO(input)
    try:
        with _environment(env), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(args))
            except SystemExit as exc:  # argparse: usage errors, --help
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    finally:
        sys.stdin = stdin
        os.chdir(here)
    return Ran(["cascade", *args], code, out.getvalue(), err.getvalue())


def plain_hook_installed(repo: Path) -> bool:
    hook = repo / ".git" / "hooks" / "pre-commit"
    return hook.is_file() and "CascadingDev" in hook.read_text(errors="replace")


def hook_environment(repo: Path) -> dict[str, str]:
    """What ``git commit`` puts in its pre-commit hook's environment (git 2.39, a commit of
    what is staged, from the top of the work tree)."""
    ident = subprocess.run(["git", "var", "GIT_AUTHOR_IDENT"], cwd=repo, capture_output=True,
                           text=True, check=True).stdout.strip()
    name, rest = ident.split(" <", 1)
    email, when = rest.split("> ", 1)
    return {"GIT_INDEX_FILE": ".git/index", "GIT_EDITOR": ":", "GIT_PREFIX": "",
            "GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email, "GIT_AUTHOR_DATE": "@" + when}


def commit(repo: Path, *args: str) -> Ran | subprocess.CompletedProcess[str]:
    """``git commit -m change ARGS``. Of what is staged (no ARGS), in a repository with
    cascade's plain hooks (``cascade init --plain``): the pre-commit hook runs in this
    process, and when it passes the commit is made by git (the prepare-commit-msg hook adds
    its trailer); ``out`` is the hook's output, as ``git commit`` shows it. With ARGS
    (``-a``, paths, ``--author``: another index file or identity) or without the plain hooks
    (the pre-commit framework, no hook): the real ``git commit``, hooks in their processes."""
    if args or not plain_hook_installed(repo) or _loop_running():
        proc = subprocess.run(["git", "commit", "-m", "change", *args], cwd=repo,
                              capture_output=True, text=True, timeout=300)
        proc.out = proc.stdout + proc.stderr  # git shows hook output on stderr
        return proc
    gate = cascade(repo, "hook", env=hook_environment(repo))
    if gate.returncode != 0:  # git commit exits 1 whatever the hook's code: kept beside it
        blocked = Ran(gate.args, 1, gate.stdout, gate.stderr)
        blocked.hook_returncode = gate.returncode
        return blocked
    proc = subprocess.run(["git", "commit", "-q", "-m", "change", "--no-verify"], cwd=repo,
                          capture_output=True, text=True, timeout=120)
    return Ran(gate.args, proc.returncode, gate.stdout + proc.stdout, gate.stderr + proc.stderr)
