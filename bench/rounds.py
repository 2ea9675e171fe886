"""What a discussion costs beyond the model's own time, for every protocol, in this checkout
and in another commit's, in turns.

    python bench/rounds.py [--runs N] [--reference PATH]

Each protocol runs as a user runs it -- ``python -m cascade discuss TOPIC ... --auto`` as a
subprocess, in a fresh git repository -- against an OpenAI-compatible endpoint on 127.0.0.1
that answers every call in 0.5 s, its replies scripted by the protocol's test script
(tests/*_script.py; pcs: tests/test_pcs.py). Both checkouts get the same endpoint, the same
script and the same model time, so the difference of their walls is the difference of their
overhead. ``--reference`` (a checkout of another commit, e.g. ``git worktree add``) runs its
package with this checkout's endpoint and scripts; the runs alternate A B A B, so the load of
a shared machine falls on both alike. Prints medians with min-max, and the load.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE))

from _table import endpoint_env, spread, table  # noqa: E402

DELAY = 0.5
TOPIC = "Which database for the event store?"


def _pcs(fake):
    from test_pcs import Panel
    return Panel(fake)


def _swarm(fake):
    from swarm_script import Swarm
    return Swarm(fake)


def _roundtable(fake):
    from roundtable_script import Table
    return Table(fake)


def _council(fake):
    from council_script import Council
    return Council(fake)


# label: (script, discuss arguments, extra environment)
PROTOCOLS = {
    "pcs, 2 participants": (_pcs, ("--participants", "architect,security"), {}),
    "swarm, standard": (_swarm, ("--protocol", "swarm", "--mode", "standard"), {}),
    "roundtable, standard": (_roundtable, ("--protocol", "roundtable", "--strategy",
                                           "standard", "--participants",
                                           "architect,security,pragmatist"), {}),
    "council, parallel": (_council, ("--protocol", "council"),
                          {"CASCADE_MODEL": "openai/fast", "CASCADE_MODEL_STRONG": "openai/strong"}),
}


def _run(env: dict[str, str], args: tuple[str, ...]) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["git", "init", "-q"], cwd=tmp, env=env, check=True)
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "cascade", "discuss", TOPIC, *args,
                               "--auto"], cwd=tmp, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - start
    if proc.returncode != 0 or "Traceback" in proc.stderr:
        raise SystemExit(f"{' '.join(args)}: exit {proc.returncode}: {proc.stderr[-600:]}"
                         f"{proc.stdout[-600:]}")
    return wall


def bench(label: str, runs: int, reference: Path | None) -> tuple:
    from fakellm import FakeLLM, delayed

    make, args, extra = PROTOCOLS[label]
    with FakeLLM() as fake:
        script = make(fake)
        fake.default(lambda request: delayed(script(request), DELAY))
        env = {**endpoint_env(fake.url), **extra}
        envs = {"this": env}
        if reference is not None:
            envs["reference"] = {**env, "PYTHONPATH": str(reference)}
        times: dict[str, list[float]] = {k: [] for k in envs}
        calls = 0
        for i in range(runs + 1):  # the first warms the file cache (bytecode, site-packages)
            for name, e in envs.items():
                before = fake.calls()
                wall = _run(e, args)
                if i:
                    times[name].append(wall)
                    if name == "this":
                        calls = fake.calls() - before
    row = [label, calls, spread(times["this"])]
    if reference is not None:
        diff = sorted(a - b for a, b in zip(times["this"], times["reference"]))
        row += [spread(times["reference"]), f"{diff[len(diff) // 2]:+.2f}"]
    return tuple(row)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--reference", type=Path)
    ap.add_argument("--only", choices=sorted(PROTOCOLS), action="append")
    args = ap.parse_args()
    header = ["protocol", "calls", "this (s)"]
    if args.reference:
        header += ["reference (s)", "this - reference"]
    rows = [bench(label, args.runs, args.reference) for label in args.only or PROTOCOLS]
    table(f"A whole discussion, endpoint answering each call in {DELAY} s (median (min-max) of "
          f"{args.runs}, in turns; load {os.getloadavg()[0]:.1f})", tuple(header), rows)


if __name__ == "__main__":
    main()
