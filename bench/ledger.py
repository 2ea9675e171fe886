"""How fast the ledger layer reads a large discussion.

    python bench/ledger.py [--comments 10000]

Target (issue: the ledger layer): a 10 MB ledger of 10,000 comments parses well under 1 s.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _ledgers import comment as sample_comment  # noqa: E402
from _table import table, timed  # noqa: E402

from cascade import Discussion  # noqa: E402
from cascade.ledger.parse import parse  # noqa: E402

AUTHORS = ["AI-Architect", "AI-Security", "AI-Pragmatist", "AI-Designer", "Rob", "AI-Researcher"]
VOTES = ["READY", "CHANGES", "REJECT", None]


def comment(i: int) -> str:
    author = AUTHORS[i % len(AUTHORS)]
    stamp = {"model": "bench"} if author.startswith("AI-") else None  # as turns write them
    return sample_comment(i, author, VOTES[i % len(VOTES)], stamp=stamp)


def build(n: int) -> str:
    parts = ["<!-- DISCUSSION -->", "<!-- Title: Bench -->", "<!-- Protocol: review -->",
             "<!-- Participants: architect, security, pragmatist, designer -->", "",
             "# Bench", "", "---", "", "*Discussion begins below.*", ""]
    text = "\n".join(parts) + "\n"
    chunks = [comment(i) for i in range(n)]
    for i in range(0, n, 1000):
        chunks[i] += "<!-- VOTE-RESET: bench -->\n\n"
    return text + "".join(chunks)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--comments", type=int, default=10_000)
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sorted({100, 1_000, args.comments}):
            text = build(n)
            path = Path(tmp) / f"bench-{n}.discussion.md"
            path.write_text(text)
            size = len(text.encode()) / 1e6
            best, median = timed(lambda: parse(text))
            ledger = parse(text)
            assert len(ledger.comments) == n, (len(ledger.comments), n)

            def full() -> None:
                d = Discussion.load(path, root=Path(tmp))
                d.consensus_result, d.questions, d.todos, d.decisions  # noqa: B018

            fbest, fmedian = timed(full)
            rows.append((n, f"{size:.1f}", f"{best:.3f}", f"{median:.3f}", f"{fbest:.3f}",
                         f"{fmedian:.3f}"))
    table("Ledger parse (seconds; best and median of 5)",
          ("comments", "MB", "parse best", "parse median", "load+state best", "load+state median"),
          rows)


if __name__ == "__main__":
    main()
