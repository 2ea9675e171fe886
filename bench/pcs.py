"""What a Propose / Challenge / Synthesize round costs beyond the model's own time.

    python bench/pcs.py [--runs N]

`python -m cascade discuss TOPIC --participants ... --auto`, as a subprocess as a user runs
it, in a fresh git repository, against an OpenAI-compatible endpoint on 127.0.0.1 that
answers every call in 1.0 s (tests/fakellm.py), every participant accepting in round 1. A
round is four waves one after the other (propose, challenge, synthesize, confirm), so the
model's own time is 4 x 1.0 s; nothing else is excluded (interpreter start, imports, git,
prompts, the ledger, the record). Target: wall - 4.0 s <= 0.5 s (the openai/ model is asked
over plain HTTP: no litellm import to subtract). Also: calls per round (target 3N + 1), and
the prompt characters of round 3 over round 1 (target <= 2: the earlier rounds go in as a
summary of at most 1000 characters, not as a growing transcript).
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

from _table import cli_in_fresh_repo, endpoint_env, table

DELAY = 1.0
WAVES = 4
TOPIC = "Which database for the event store?"
PANELS = {2: "architect,security", 4: "architect,security,pragmatist,perfectionist"}


def discuss_once(env: dict[str, str], participants: str):
    return cli_in_fresh_repo(env, "discuss", TOPIC, "--participants", participants, "--auto")


def environment(fake) -> dict[str, str]:
    return endpoint_env(fake.url)


def bench_round(runs: int) -> list[tuple]:
    from fakellm import FakeLLM, delayed
    from test_pcs import Panel

    rows = []
    for n, participants in PANELS.items():
        with FakeLLM() as fake:
            panel = Panel(fake)
            fake.default(lambda request: delayed(panel(request), DELAY))
            env = environment(fake)
            discuss_once(env, participants)  # warm the file cache (bytecode, site-packages)
            walls, calls = [], []
            for _ in range(runs):
                before = fake.calls()
                wall, proc = discuss_once(env, participants)
                assert proc.returncode == 0, proc.stdout + proc.stderr
                walls.append(wall)
                calls.append(fake.calls() - before)
            wall = statistics.median(walls)
            rows.append((f"{n} participants", f"{wall:.2f}", f"{wall - WAVES * DELAY:+.2f}",
                         "<= +0.50", f"{statistics.median(calls):.0f}", 3 * n + 1,
                         " ".join(f"{w:.2f}" for w in walls)))
    return rows


def bench_growth() -> list[tuple]:
    """Prompt characters per call, by round, in a discussion that needs all three rounds."""
    from fakellm import FakeLLM
    from test_pcs import Panel

    rows = []
    with FakeLLM() as fake:
        panel = Panel(fake)
        for r in (1, 2, 3):
            panel.verdicts[("AI-Security", r)] = "REJECT"
        env = environment(fake)
        _, proc = discuss_once(env, PANELS[2])
        assert proc.returncode == 1, proc.stdout + proc.stderr  # the impasse
        by_round: dict[int, list[int]] = {}
        for name, step, round_, text in panel.seen:
            if step != "Recommendation":
                by_round.setdefault(round_, []).append(len(text))
        first = statistics.mean(by_round[1])
        for r, sizes in sorted(by_round.items()):
            mean = statistics.mean(sizes)
            rows.append((f"round {r}", len(sizes), f"{mean:,.0f}", f"{mean / first:.2f}",
                         "<= 2" if r == 3 else ""))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    table(f"One pcs round, endpoint answering in {DELAY:.1f} s (seconds, median of {args.runs}; "
          "`python -m cascade discuss` as a subprocess)",
          ("panel", "wall", f"wall - {WAVES * DELAY:.1f}", "target", "calls", "3N+1", "runs"),
          bench_round(args.runs))
    table("Prompt characters per call by round (two participants, three rounds to impasse)",
          ("round", "calls", "characters", "vs round 1", "target"), bench_growth())


if __name__ == "__main__":
    main()
