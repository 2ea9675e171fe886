"""Print benchmark results as a plain table."""
from __future__ import annotations

import os
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path


def timed(fn: Callable[[], object], repeat: int = 5) -> tuple[float, float]:
    """(best, median) wall seconds over ``repeat`` runs."""
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - start)
    return min(runs), statistics.median(runs)


def table(title: str, header: tuple[str, ...], rows: list[tuple[object, ...]]) -> None:
    cells = [tuple(str(c) for c in header)] + [tuple(str(c) for c in r) for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    print(f"\n{title}")
    for i, row in enumerate(cells):
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
        if i == 0:
            print("  ".join("-" * w for w in widths))


def child_env(**extra: str) -> dict[str, str]:
    """The environment a benchmarked ``python -m cascade`` runs in: this one, with the
    checkout on PYTHONPATH and bytecode writes allowed -- a warm-up run then leaves .pyc files
    as an installed package has them; with PYTHONDONTWRITEBYTECODE set (as it is here) every
    run of an editable checkout would compile all of cascade from source (~80 ms)."""
    import os
    from pathlib import Path

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent), **extra}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def endpoint_env(url: str) -> dict[str, str]:
    """``child_env`` for a run against the fake endpoint at ``url``: its model and base, a
    fresh HOME (no reply cache reused), and none of the settings that would change a run."""
    import tempfile

    env = child_env(CASCADE_MODEL="openai/fake", CASCADE_API_BASE=url, HOME=tempfile.mkdtemp())
    for var in ("CASCADE_FALLBACK_MODELS", "CASCADE_MAX_CALLS", "CASCADE_MODEL_STRONG",
                "GIT_DIR", "GIT_INDEX_FILE"):
        env.pop(var, None)
    return env


def cli_in_fresh_repo(env: dict[str, str], *args: str):
    """``python -m cascade ARGS`` in a new git repository, as a user runs it: (wall seconds,
    the completed process). A traceback is a failure of the benchmark."""
    import subprocess
    import sys
    import tempfile
    import time

    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["git", "init", "-q"], cwd=tmp, env=env, check=True)
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "cascade", *args], cwd=tmp, env=env,
                              capture_output=True, text=True, check=False)
        wall = time.perf_counter() - start
        assert "Traceback" not in proc.stderr, proc.stderr
        return wall, proc


def interleaved(commands: dict[str, tuple[list[str], Path, dict[str, str]]],
                runs: int) -> dict[str, list[float]]:
    """Wall seconds of each command (``label: (argv, cwd, env)``), run in turns -- A B A B ...
    -- so that the load of a shared machine falls on all of them alike."""
    import subprocess

    times: dict[str, list[float]] = {label: [] for label in commands}
    for _ in range(runs):
        for label, (argv, cwd, env) in commands.items():
            start = time.perf_counter()
            proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True)
            times[label].append(time.perf_counter() - start)
            if proc.returncode not in (0, 1):
                raise SystemExit(f"{label}: exit {proc.returncode}: {proc.stderr.decode()[-400:]}")
    return times


def spread(times: list[float], scale: float = 1.0, digits: int = 2) -> str:
    """``median (min-max)`` of ``times``, times ``scale``."""
    values = [t * scale for t in times]
    return (f"{statistics.median(values):.{digits}f} ({min(values):.{digits}f}-"
            f"{max(values):.{digits}f})")


def reference_env(reference: Path, **extra: str) -> dict[str, str]:
    """``child_env`` for a reference checkout (another commit's tree): its package first."""
    env = child_env(**extra)
    env["PYTHONPATH"] = str(reference)
    return env


def usage_in_turns(commands: dict[str, tuple[list[str], Path, dict[str, str]]],
                   runs: int) -> dict[str, list[tuple[float, int, int]]]:
    """``interleaved``, with each run's peak RSS: {label: [(wall seconds, peak RSS in KiB,
    exit code)]}. The peak is the largest process of the run's tree (the command, or a child
    it waited for, such as git), from ``wait4``."""
    usage: dict[str, list[tuple[float, int, int]]] = {label: [] for label in commands}
    for _ in range(runs):
        for label, (argv, cwd, env) in commands.items():
            with open(os.devnull, "wb") as null:
                start = time.perf_counter()
                proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=null,
                                        stderr=subprocess.PIPE)
                err = proc.stderr.read()  # type: ignore[union-attr]
                proc.stderr.close()  # type: ignore[union-attr]
                _, status, rusage = os.wait4(proc.pid, 0)
                wall = time.perf_counter() - start
                proc.returncode = code = os.waitstatus_to_exitcode(status)
            if code not in (0, 1):
                raise SystemExit(f"{label}: exit {code}: {err.decode()[-400:]}")
            usage[label].append((wall, rusage.ru_maxrss, code))
    return usage
