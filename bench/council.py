"""What a council debate (seed 004) costs beyond the model's own time, and how its tokens
split between the fast and the strong tier.

    python bench/council.py [--runs N]

`python -m cascade discuss TOPIC --protocol council --flow debate --auto`, as a subprocess as
a user runs it, in a fresh git repository, against an OpenAI-compatible endpoint on 127.0.0.1
that answers every call in 1.0 s (tests/fakellm.py, replies scripted by
tests/council_script.py). Three advisors (pragmatist, visionary, skeptic) debate three rounds
-- openings, cross-rebuttals, final positions -- and the referee gives the verdict: four waves
one after another, 4 x 1.0 s of model time. Target: wall - 4.0 s <= 0.5 s. The tokens each
tier used come from the ledger's stamps (CASCADE_MODEL=openai/fast, CASCADE_MODEL_STRONG=
openai/strong; the medium tier gives the strong model to the referee alone).

The same for the D/P mode (`--mode dp --rounds 3`): three rounds of the two freethinkers, then
the two arbiters, and the meta-arbiter: 13 calls in 7 waves, 7 x 1.0 s of model time.
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

from _table import endpoint_env, table  # noqa: E402

DELAY = 1.0
TOPIC = "Should we rewrite the billing service?"
RUNS = (  # (name, discuss's options, waves)
    ("debate, 3 advisors, 3 rounds", ("--flow", "debate"), 4),
    ("dp, 2 groups, 3 rounds", ("--mode", "dp", "--rounds", "3"), 7),
)


def bench(runs: int, options: tuple[str, ...]) -> tuple[list[float], dict]:
    import subprocess
    import tempfile
    import time

    from fakellm import FakeLLM, delayed
    from council_script import Council

    from cascade import Discussion

    with FakeLLM() as fake:
        script = Council(fake)
        fake.default(lambda request: delayed(script(request), DELAY))
        env = endpoint_env(fake.url)
        env["CASCADE_MODEL"], env["CASCADE_MODEL_STRONG"] = "openai/fast", "openai/strong"
        walls, tokens = [], {}
        for i in range(runs + 1):  # the first warms the file cache (bytecode, site-packages)
            with tempfile.TemporaryDirectory() as tmp:
                subprocess.run(["git", "init", "-q"], cwd=tmp, env=env, check=True)
                start = time.perf_counter()
                proc = subprocess.run([sys.executable, "-m", "cascade", "discuss", TOPIC,
                                       "--protocol", "council", *options, "--auto"],
                                      cwd=tmp, env=env, capture_output=True, text=True)
                wall = time.perf_counter() - start
                assert proc.returncode == 0, proc.stdout + proc.stderr
                if i == 0:
                    continue
                walls.append(wall)
                ledger = next(Path(tmp, "discussions").glob("*.discussion.md"))
                d = Discussion.load(ledger, root=Path(tmp))
                tokens = {}
                for c in d.comments:
                    model = c.provenance.get("model")
                    if model:
                        got = tokens.setdefault(model, [0, 0, 0])
                        got[0] += 1
                        got[1] += int(c.provenance.get("prompt_tokens") or 0)
                        got[2] += int(c.provenance.get("completion_tokens") or 0)
    return walls, tokens


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    timing, splits = [], []
    for name, options, waves in RUNS:
        walls, tokens = bench(args.runs, options)
        wall = statistics.median(walls)
        timing.append((name, waves, f"{wall:.2f}", f"{wall - waves * DELAY:+.2f}", "<= +0.50",
                       " ".join(f"{w:.2f}" for w in walls)))
        total = sum(p + c for _, p, c in tokens.values()) or 1
        splits += [(name, model, calls, f"{p:,}", f"{c:,}", f"{(p + c) / total:.0%}")
                   for model, (calls, p, c) in sorted(tokens.items())]
    table(f"A council, endpoint answering in {DELAY:.1f} s (seconds, median of {args.runs}; "
          "`python -m cascade discuss` as a subprocess)",
          ("discussion", "waves", "wall", "wall - waves", "target", "runs"), timing)
    table("Tokens by tier (medium: the referee or the meta-arbiter on the strong model)",
          ("discussion", "model", "calls", "prompt tokens", "completion tokens", "share"), splits)


if __name__ == "__main__":
    main()
