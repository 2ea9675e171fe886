"""What a swarm discussion (seed 001) costs beyond the model's own time, in standard mode.

    python bench/swarm.py [--runs N]

`python -m cascade discuss TOPIC --protocol swarm --mode standard --rounds 1 --auto`, as a
subprocess as a user runs it, in a fresh git repository, against an OpenAI-compatible
endpoint on 127.0.0.1 that answers every call in 1.0 s (tests/fakellm.py, replies scripted by
tests/swarm_script.py: three experts). The run is a chain of waves, each waiting for the one
before: the panel; the round's seven (declarations, framing, arguments, stress test,
responses, analogy, quality gate); the synthesis -- nine (a topic has no closing vote: its
synthesis is the outcome), so the model's own time is 9 x 1.0 s. Nothing else is excluded
(interpreter start, imports, git, prompts, the ledger, the artifacts). Target: wall - 9.0 s
<= 0.5 s. Also: calls per round (the seed says
5-8 for standard; the round PROTOCOLS.md lists asks each expert three times and four fixed
roles once: 3N + 4 calls in 7 waves), and the prompt characters per call in round 3 over
round 1 of a three-round discussion (target <= 2: earlier rounds go in as a summary of at
most 1500 characters).
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(HERE))

from _table import cli_in_fresh_repo, endpoint_env, table  # noqa: E402

DELAY = 1.0
WAVES = 9
TOPIC = "Which database for the event store?"
SETUP_AND_AFTER = ("Panel", "Synthesis", "Closing vote")


def discuss_once(env: dict[str, str], *extra: str):
    wall, proc = cli_in_fresh_repo(env, "discuss", TOPIC, "--protocol", "swarm", "--mode",
                                   "standard", "--auto", *extra)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return wall, proc


def environment(fake) -> dict[str, str]:
    return endpoint_env(fake.url)


def bench_round(runs: int) -> list[tuple]:
    from fakellm import FakeLLM, delayed
    from swarm_script import Swarm

    with FakeLLM() as fake:
        swarm = Swarm(fake)
        fake.default(lambda request: delayed(swarm(request), DELAY))
        env = environment(fake)
        discuss_once(env, "--rounds", "1")  # warm the file cache (bytecode, site-packages)
        walls, calls, per_round = [], [], []
        for _ in range(runs):
            before, seen = fake.calls(), len(swarm.seen)
            wall, _ = discuss_once(env, "--rounds", "1")
            walls.append(wall)
            calls.append(fake.calls() - before)
            per_round.append(sum(1 for _, step, _, _ in swarm.seen[seen:]
                                 if step not in SETUP_AND_AFTER))
    wall = statistics.median(walls)
    return [("standard, 3 experts, 1 round", f"{wall:.2f}", f"{wall - WAVES * DELAY:+.2f}",
             "<= +0.50", f"{statistics.median(calls):.0f}", f"{statistics.median(per_round):.0f}",
             " ".join(f"{w:.2f}" for w in walls))]


def bench_growth() -> list[tuple]:
    """Prompt characters per call, by round, in a standard discussion of three rounds."""
    from fakellm import FakeLLM
    from swarm_script import Swarm

    with FakeLLM() as fake:
        swarm = Swarm(fake)
        discuss_once(environment(fake))  # standard: continue, continue, then the last round
        by_round: dict[int, list[int]] = {}
        for _, step, round_, text in swarm.seen:
            if step not in SETUP_AND_AFTER:
                by_round.setdefault(round_, []).append(len(text))
    first = statistics.mean(by_round[1])
    rows = []
    for r, sizes in sorted(by_round.items()):
        mean = statistics.mean(sizes)
        rows.append((f"round {r}", len(sizes), f"{mean:,.0f}", f"{max(sizes):,}",
                     f"{mean / first:.2f}", "<= 2" if r == 3 else ""))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    table(f"A swarm discussion of one standard round, endpoint answering in {DELAY:.1f} s "
          f"({WAVES} waves; seconds, median of {args.runs}; `python -m cascade discuss` as a "
          "subprocess)",
          ("discussion", "wall", f"wall - {WAVES * DELAY:.1f}", "target", "calls",
           "calls/round", "runs"), bench_round(args.runs))
    table("Prompt characters per call by round (standard, three experts, three rounds)",
          ("round", "calls", "mean", "largest", "vs round 1", "target"), bench_growth())


if __name__ == "__main__":
    main()
