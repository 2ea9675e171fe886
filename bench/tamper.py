"""Tamperings caught: random appends to a rejected ledger (tests/tampering.py) -- copies of the
tool's blocks and events, events and persona blocks written by hand, stamps moved onto other
blocks, people's votes -- judged by the gate's verdict in-process, and a sample committed with
--no-verify in a real repository and judged by `cascade check` (range and snapshot).

    python bench/tamper.py [--cases 20000] [--checked 100] [--seed 1]

A case is caught when the rejected revision does not pass (and AI-Security's REJECT stands).
"""
from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(HERE))

import tampering as tamper  # noqa: E402
from _ledgers import RULES  # noqa: E402
from _table import child_env, table  # noqa: E402



def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True,
                          text=True).stdout


def in_process(base: tamper.Base, cases: int, seed: int) -> tuple[int, int, float]:
    caught = escaped = 0
    start = time.perf_counter()
    for i in range(cases):
        pieces = tamper.chunks(base, random.Random(seed * 1_000_003 + i))
        ok, state = tamper.verdict(base, pieces)
        if ok or state.votes.get("AI-Security") != "REJECT":
            escaped += 1
            print(f"ESCAPED (seed {seed}, case {i}):\n" + "".join(pieces), file=sys.stderr)
        else:
            caught += 1
    return caught, escaped, time.perf_counter() - start


def through_check(base: tamper.Base, cases: int, seed: int) -> tuple[int, int, float]:
    """Each case committed with --no-verify on top of the rejected ledger; `cascade check`
    over the range and at the snapshot must both fail."""
    caught = escaped = 0
    start = time.perf_counter()
    env = child_env(GIT_CONFIG_GLOBAL=os.devnull, GIT_AUTHOR_NAME="Bench",
                    GIT_AUTHOR_EMAIL="bench@example.com", GIT_COMMITTER_NAME="Bench",
                    GIT_COMMITTER_EMAIL="bench@example.com")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        git(root, "init", "-q")
        (root / ".ai-rules.yml").write_text(RULES)
        (root / tamper.DOC).parent.mkdir(parents=True)
        (root / tamper.DOC).write_bytes(tamper.TEXT_B)
        ledger = root / base.path.relative_to(base.root)
        ledger.parent.mkdir(parents=True)
        ledger.write_text(base.text)
        git(root, "add", "-A")
        subprocess.run(["git", "commit", "-qm", "rejected"], cwd=root, env=env, check=True)
        first = git(root, "rev-parse", "HEAD").strip()
        for i in range(cases):
            pieces = tamper.chunks(base, random.Random(seed * 7_000_001 + i))
            ledger.write_text(base.text + "".join("\n" + p for p in pieces))
            git(root, "add", "-A")
            subprocess.run(["git", "commit", "-qm", f"tamper {i}", "--allow-empty"], cwd=root,
                           env=env, check=True)
            codes = [subprocess.run([sys.executable, "-m", "cascade", "check", *args], cwd=root,
                                    env=env, capture_output=True).returncode
                     for args in (["--from-ref", first], [])]
            if codes == [1, 1]:
                caught += 1
            else:
                escaped += 1
                print(f"ESCAPED through check (case {i}, exit {codes}):\n" + "".join(pieces),
                      file=sys.stderr)
            git(root, "reset", "-q", "--hard", first)
    return caught, escaped, time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=20_000)
    ap.add_argument("--checked", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = tamper.build(Path(tmp))
        rows = []
        caught, escaped, seconds = in_process(base, args.cases, args.seed)
        rows.append(("derive + gate, in-process", args.cases, caught, escaped,
                     f"{seconds * 1000 / max(args.cases, 1):.2f} ms"))
        if args.checked:
            caught, escaped, seconds = through_check(base, args.checked, args.seed)
            rows.append(("committed, cascade check (range and snapshot)", args.checked, caught,
                         escaped, f"{seconds * 1000 / args.checked:.0f} ms"))
    table("Tamperings of a rejected ledger by appending", ("judged by", "cases", "caught",
                                                          "escaped", "per case"), rows)


if __name__ == "__main__":
    main()
