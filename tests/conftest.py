"""Shared fixtures: every test runs with its own HOME and git identity, never the user's, and
a PATH without `cascade` or `pre-commit`, whatever the shell it was started from."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from fakellm import fake_llm  # noqa: E402,F401  (a fixture other tests use)

REPO = Path(__file__).resolve().parent.parent

# Commands whose presence on PATH changes what the tool does: with `cascade` there, git runs the
# ledger merge driver that `cascade init` registers (a conflicting append merges), and with
# `pre-commit` there, `cascade init` installs the framework's hook. A developer's activated
# virtualenv has both; CI's PATH has neither. Every test starts without them, whatever the
# shell: a test that wants one puts it on PATH itself.
SHELL_COMMANDS = ("cascade", "pre-commit")


def path_without(path: str, commands: tuple[str, ...] = SHELL_COMMANDS) -> str:
    """``path`` without the folders that hold one of ``commands``."""
    return os.pathsep.join(folder for folder in path.split(os.pathsep) if folder and not any(
        os.access(os.path.join(folder, name), os.X_OK) for name in commands))


TEST_PATH = path_without(os.environ.get("PATH", os.defpath))
if shutil.which("git", path=TEST_PATH) is None:
    raise RuntimeError(f"git is not found on PATH once the folders that hold "
                       f"{' or '.join(SHELL_COMMANDS)} are left out ({TEST_PATH!r})")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The slow tests (the embedded model's, the proxy's) first, the rest in file order. Under
    xdist's worksteal each worker starts on its half of this list: the first worker starts
    with them while the other works through its half, and the many short tests left at the
    end even the two out. In file order they ran last on their worker: the embedded model's
    demo (40 s) ended the run 10 s after the other worker had finished."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)  # stable: file order


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    return isolate(tmp_path_factory.mktemp("home"), monkeypatch)


def isolate(home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``home`` as HOME with the tests' git identity, and the tests' PATH: what every test
    starts with (a module-scoped fixture that builds a repository once uses it too)."""
    gitconfig = home / ".gitconfig"
    gitconfig.write_text("[user]\n\tname = Test Person\n\temail = test@example.com\n"
                         "[init]\n\tdefaultBranch = main\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("PATH", TEST_PATH)
    for var in ("GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE", "GIT_AUTHOR_NAME",
                "CASCADE_MODEL", "CASCADE_API_BASE", "XDG_CONFIG_HOME"):  # config under HOME
        monkeypatch.delenv(var, raising=False)
    return home


@pytest.fixture
def hook_stages_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """The hook leaves what it writes in the working tree (``CASCADE_STAGE=0``): for the tests
    that follow its hints step by step, `git add` by `git add`."""
    monkeypatch.setenv("CASCADE_STAGE", "0")


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout


def stage_adr(repo: Path, rules: str, doc: str) -> Path:
    """``repo`` with ``rules`` committed and a new ADR at ``doc`` staged: a commit to try."""
    (repo / ".ai-rules.yml").write_text(rules)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "start")
    (repo / doc).parent.mkdir(parents=True, exist_ok=True)
    (repo / doc).write_text("# Use SQLite\n\nWe will store events in SQLite.\n")
    git(repo, "add", doc)
    return repo


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh git repository as the working directory."""
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q")
    monkeypatch.chdir(path)
    return path


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]):
    """Run ``cascade`` in-process: returns (exit code, stdout, stderr)."""
    from cascade.main import main

    def run(*args: str) -> tuple[int, str, str]:
        capsys.readouterr()
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse usage errors
            code = int(exc.code or 0)
        out, err = capsys.readouterr()
        return code, out, err

    return run


def cascade_subprocess(*args: str, cwd: Path, env: dict[str, str] | None = None,
                       input: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python -m cascade`` as a separate process, as a user would."""
    full_env = {**os.environ, **(env or {})}
    full_env["PYTHONPATH"] = str(REPO) + os.pathsep + full_env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "cascade", *args], cwd=cwd, env=full_env,
                          capture_output=True, text=True, input=input, timeout=120)
