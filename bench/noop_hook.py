"""The hook on a commit it does not govern must cost no more than a trivial hook.

    python bench/noop_hook.py [--runs 20] [--reference DIR]

Compares `cascade hook README.md` (a repository with an .ai-rules.yml whose rules do not match)
with pre-commit-hooks' `check-yaml` on a small file, both as the console scripts pre-commit
would run. Target: cascade's median is no higher than check-yaml's. With ``--reference DIR``
(a checkout of another commit, e.g. ``git worktree add /tmp/ref main~5``), this checkout's
``python -m cascade hook`` and the reference's are timed in turns (A B A B ...): medians with
min-max, and the load.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _table import child_env, interleaved, reference_env, spread, table  # noqa: E402


def median_run(cmd: list[str], cwd: Path, runs: int) -> tuple[float, float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, env=child_env())
        times.append(time.perf_counter() - start)
        assert proc.returncode == 0, proc.stderr.decode()
    return statistics.median(times), min(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--reference", help="a checkout of another commit, timed in turns with this one")
    args = ap.parse_args()
    bindir = Path(sys.executable).parent
    cascade = shutil.which("cascade", path=str(bindir)) or "cascade"
    check_yaml = shutil.which("check-yaml", path=str(bindir))
    if not check_yaml:
        sys.exit("check-yaml not found: pip install pre-commit-hooks")
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp)
        subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
        (repo / ".ai-rules.yml").write_text("extends: [adr, feature-spec]\n")
        (repo / "README.md").write_text("# Project\n")
        (repo / "small.yaml").write_text("name: demo\nitems: [1, 2, 3]\n")
        subprocess.run(["git", "add", "."], cwd=repo, check=True)
        rows = []
        for label, cmd in [("cascade hook README.md (no rule matches)", [cascade, "hook", "README.md"]),
                           ("check-yaml small.yaml", [check_yaml, "small.yaml"]),
                           ("python -c pass (interpreter start)", [sys.executable, "-c", "pass"])]:
            med, best = median_run(cmd, repo, args.runs)
            rows.append((label, f"{med * 1000:.0f}", f"{best * 1000:.0f}"))
    table(f"No-op hook (milliseconds, {args.runs} runs)", ("command", "median", "best"), rows)
    if args.reference:
        compare(Path(args.reference), args.runs)


def compare(reference: Path, runs: int) -> None:
    """This checkout's no-op hook and the reference's, in turns."""
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp)
        subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
        (repo / ".ai-rules.yml").write_text("extends: [adr, feature-spec]\n")
        (repo / "README.md").write_text("# Project\n")
        subprocess.run(["git", "add", "."], cwd=repo, check=True)
        argv = [sys.executable, "-m", "cascade", "hook", "README.md"]
        commands = {"this checkout": (argv, repo, child_env()),
                    f"reference {reference}": (argv, repo, reference_env(reference))}
        interleaved(commands, 2)  # warm-up: .pyc files written for both
        times = interleaved(commands, runs)
    load = os.getloadavg()
    table(f"No-op hook, python -m cascade hook README.md (ms, median (min-max) of {runs}, "
          f"interleaved; load {load[0]:.1f} {load[1]:.1f})", ("checkout", "wall"),
          [(label, spread(t, 1000, 0)) for label, t in times.items()])


if __name__ == "__main__":
    main()
