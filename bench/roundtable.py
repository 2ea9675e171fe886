"""What a facilitator-led roundtable (seed 003) costs beyond the model's own time, and how its
prompts grow.

    python bench/roundtable.py [--runs N]

`python -m cascade discuss TOPIC --protocol roundtable --strategy standard --participants
(four) --rounds 1 --auto`, as a subprocess as a user runs it, in a fresh git repository,
against an OpenAI-compatible endpoint on 127.0.0.1 that answers every call in 1.0 s
(tests/fakellm.py, replies scripted by tests/roundtable_script.py). A round is three waves
one after another (the facilitator's question, the four answers in parallel, the
synthesis); with --rounds 1 the round concludes, and a topic has no closing vote (its
synthesis is the outcome), so the model's own time is 3 x 1.0 s. Nothing else is excluded.
Target: wall - 3.0 s <= 0.5 s.
Also: the prompt characters per call over ten rounds (target: bounded -- participants see
the question and the last synthesis only; the facilitator, a summary of at most 1500
characters).
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
WAVES = 3
TOPIC = "How do we version the public API?"
PANEL = "architect,security,pragmatist,perfectionist"


def discuss_once(env: dict[str, str], *extra: str):
    wall, proc = cli_in_fresh_repo(env, "discuss", TOPIC, "--protocol", "roundtable",
                                   "--strategy", "standard", "--participants", PANEL, "--auto",
                                   *extra)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return wall, proc


def bench_round(runs: int) -> list[tuple]:
    from fakellm import FakeLLM, delayed
    from roundtable_script import Table

    with FakeLLM() as fake:
        script = Table(fake)
        fake.default(lambda request: delayed(script(request), DELAY))
        env = endpoint_env(fake.url)
        discuss_once(env, "--rounds", "1")  # warm the file cache (bytecode, site-packages)
        walls, calls = [], []
        for _ in range(runs):
            before = fake.calls()
            wall, _ = discuss_once(env, "--rounds", "1")
            walls.append(wall)
            calls.append(fake.calls() - before)
    wall = statistics.median(walls)
    return [("standard, 4 participants, 1 round", f"{wall:.2f}", f"{wall - WAVES * DELAY:+.2f}",
             "<= +0.50", f"{statistics.median(calls):.0f}", " ".join(f"{w:.2f}" for w in walls))]


def bench_growth() -> list[tuple]:
    """Prompt characters per call, by round and by who is asked, over ten rounds."""
    from fakellm import FakeLLM
    from roundtable_script import Table

    with FakeLLM() as fake:
        script = Table(fake)
        script.actions = {r: "continue" for r in range(1, 10)}  # ten rounds, then conclude
        discuss_once(endpoint_env(fake.url), "--rounds", "10")
        sizes: dict[tuple[int, str], list[int]] = {}
        for name, step, round_, text in script.seen:
            if step != "Closing vote":
                who = "facilitator" if name == "AI-Facilitator" else "participants"
                sizes.setdefault((round_, who), []).append(len(text))
    rows = []
    for who in ("participants", "facilitator"):
        first = statistics.mean(sizes[(1, who)])
        for r in (1, 2, 5, 10):
            mean = statistics.mean(sizes[(r, who)])
            rows.append((who, f"round {r}", f"{mean:,.0f}", f"{mean / first:.2f}"))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    table(f"A roundtable of one standard round, endpoint answering in {DELAY:.1f} s ({WAVES} "
          f"waves; seconds, median of {args.runs}; `python -m cascade "
          "discuss` as a subprocess)",
          ("discussion", "wall", f"wall - {WAVES * DELAY:.1f}", "target", "calls", "runs"),
          bench_round(args.runs))
    table("Prompt characters per call over ten rounds (target: bounded)",
          ("asked", "round", "characters", "vs round 1"), bench_growth())


if __name__ == "__main__":
    main()
