"""cascade's commands run in the test's own process, as a separate ``python -m cascade`` would
run them, for the tests that assert what a command prints or decides rather than how a process
is started (a ``python -m cascade`` costs 0.1-0.5 s of start-up and imports; in this process a
command costs what it does).

What a fresh process would not have is dropped before each command: every ``functools`` cache
of the cascade modules (personas, protocols, templates and settings read from disk), so a file
a test writes between two commands is read again. The working directory, environment and
standard streams are the command's for its duration and restored after it.

``commit`` is ``git commit`` with cascade's plain pre-commit hook run here: the hook in this
process (what ``.git/hooks/pre-commit`` runs), then, when it passes, the real ``git commit``
without that hook (its prepare-commit-msg hook, the trailer, still runs). The tests that prove
the hook under a real ``git commit`` (plain hooks and pre-commit) keep ``test_hook.commit``.
"""
from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from pathlib import Path


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


def cascade(cwd: Path, *args: str, env: dict[str, str | None] | None = None,
            input: str = "") -> Ran:
    """``cascade ARGS`` in ``cwd``, in this process: its exit code, stdout and stderr."""
    from cascade.main import main

    forget()
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


def commit(repo: Path, message: str = "change") -> Ran:
    """``git commit -m MESSAGE`` of what is staged, in a repository with cascade's plain hooks
    (``cascade init --plain``): the pre-commit hook runs in this process, and when it passes
    the commit is made by git (the prepare-commit-msg hook adds its trailer). ``out`` is the
    hook's output, as ``git commit`` shows it."""
    assert plain_hook_installed(repo), "commit() runs the plain hook: install it first"
    gate = cascade(repo, "hook", env=hook_environment(repo))
    if gate.returncode != 0:
        return gate
    proc = subprocess.run(["git", "commit", "-q", "-m", message, "--no-verify"], cwd=repo,
                          capture_output=True, text=True, timeout=120)
    return Ran(gate.args, proc.returncode, gate.stdout + proc.stdout, gate.stderr + proc.stderr)
