"""What a turn costs.

    python bench/turns.py [--local]

1. Six personas against an OpenAI-compatible endpoint (on 127.0.0.1) that answers each call
   in 1.0 s: the wall time of `cascade turn` against 1.0 s plus the litellm import.
   Target: the turn exceeds 1.0 s + the import by at most 0.5 s.
2. Prompt size for a 10-comment and a 100-comment ledger. Target: ratio at most 2.
3. --local: three personas on the embedded model (SmolLM2-135M, in-process, 2 cores).
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(HERE))

from _table import child_env, table  # noqa: E402

SIX = ["architect", "security", "pragmatist", "designer", "perfectionist", "moderator"]


def sh(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)
    return time.perf_counter() - start, proc


def make_repo(tmp: Path, participants: list[str], env: dict[str, str]) -> Path:
    repo = tmp / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    (repo / "docs/adr").mkdir(parents=True)
    (repo / "docs/adr/0001.md").write_text(
        "# Use SQLite for the event store\n\n## Context\n\nWe need durable, ordered storage for "
        "domain events, read by three projections.\n\n## Decision\n\nUse SQLite in WAL mode, "
        "one file per tenant, with a nightly backup to object storage.\n")
    subprocess.run([sys.executable, "-m", "cascade", "new", "Use SQLite", "--template", "adr",
                    "--protocol", "review", "--source", "docs/adr/0001.md", "-o",
                    "ledger.discussion.md", "--participants", ",".join(participants)],
                   cwd=repo, env=env, check=True, capture_output=True)
    return repo


def bench_concurrency(runs: int) -> list[tuple]:
    from fakellm import FakeLLM, delayed

    rows = []
    with FakeLLM() as fake:
        fake.default(delayed(json.dumps({"comment": "Fine.", "vote": "READY"}), 1.0))
        env = child_env(CASCADE_MODEL="openai/fake", CASCADE_API_BASE=fake.url)
        turns = []
        for _ in range(runs):
            with tempfile.TemporaryDirectory() as tmp:
                repo = make_repo(Path(tmp), SIX, env)
                t_turn, proc = sh([sys.executable, "-m", "cascade", "turn",
                                   "ledger.discussion.md"], repo, env)
                assert proc.returncode == 0, proc.stderr
                turns.append(t_turn)
        turn = statistics.median(turns)  # openai/ over plain HTTP: no litellm import to exclude
        rows.append(("six personas, 1.0 s endpoint", f"{turn:.2f}", f"{turn - 1.0:+.2f}",
                     "<= +0.50"))
    return rows


def bench_prompt() -> list[tuple]:
    from cascade import Discussion
    from cascade.config.personas import load_personas
    from cascade.protocol.pending import Pending
    from cascade.run.step_prompt import build_step_prompt
    from cascade.protocol.requests import asked
    from cascade.turns.settings import Settings

    sizes = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for n in (10, 100):
            d = Discussion.create("Bench", template="adr", path=root / f"b{n}.discussion.md",
                                  root=root, protocol="review")
            names = ["AI-Architect", "AI-Security", "AI-Pragmatist"]
            for i in range(n):
                body = (f"Comment {i}: " + "a typical review paragraph with reasoning. " * 30 +
                        f"\n\nQ: question {i}?\nCONCERN: concern {i}")
                d.add_comment(names[i % 3], body, "CHANGES")
            d.save()
            persona = load_personas(root).require("security")
            loaded = Discussion.load(d.path)
            [request] = asked(loaded.state.run, [Pending(persona, "new input")])
            prompt = build_step_prompt(loaded, persona, request, None, Settings())
            sizes[n] = prompt.tokens
    return [("10 comments", sizes[10], ""), ("100 comments", sizes[100],
                                              f"ratio {sizes[100] / sizes[10]:.2f} (<= 2)")]


def bench_local() -> list[tuple]:
    env = child_env()
    env.pop("CASCADE_MODEL", None)
    env.pop("CASCADE_API_BASE", None)
    with tempfile.TemporaryDirectory() as tmp:
        repo = make_repo(Path(tmp), ["architect", "security", "pragmatist"], env)
        t_turn, proc = sh([sys.executable, "-m", "cascade", "turn", "ledger.discussion.md"], repo,
                          env)
        assert proc.returncode in (0, 1), proc.stderr
        from cascade import Discussion

        votes = Discussion.load(repo / "ledger.discussion.md", root=repo).votes
    return [("embedded SmolLM2-135M, 3 personas", f"{t_turn:.2f}", len(votes),
             ", ".join(f"{k}={v}" for k, v in votes.items()))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--local", action="store_true", help="also run the embedded model")
    args = ap.parse_args()
    table("Turn wall time (seconds, median of runs; subprocesses as a user runs them)",
          ("case", "cascade turn", "turn - 1.0", "target"),
          bench_concurrency(args.runs))
    table("Prompt size (estimated tokens)", ("ledger", "prompt tokens", "note"), bench_prompt())
    if args.local:
        table("Embedded model (2 cores)", ("case", "turn seconds", "votes parsed", "votes"),
              bench_local())


if __name__ == "__main__":
    main()
