"""How fast the ledger layer reads a large discussion, and appends to it.

    python bench/ledger.py [--sizes 100,1000,10000] [--appends 20] [--runs 3]
                           [--reference DIR]

Ledgers of 100, 1,000 and 10,000 comments (about 100 KB, 1 MB and 10 MB: comments of about a
kilobyte with markers, tables, fences; persona blocks stamped as turns write them; a vote
reset every 1,000). Each is timed in a child process, as a command would do it:

- parse: ``parse(text)``, the whole text;
- load+state: ``Discussion.load`` and its state (consensus, questions, action items);
- append: ``--appends`` blocks added one by one to the loaded discussion (a persona's stamped
  turn, a person's vote, in turns), the consensus read after each, as a protocol's run reads
  it before the next turn: the seconds of all of them.

With ``--reference DIR`` (a checkout of another commit, e.g. ``git worktree add /tmp/ref
main~5``), this checkout's children and the reference's run in turns (A B A B ...) on the
same files: median (min-max) of ``--runs``, and the load.

Target: a 10 MB ledger parses well under 1 s; an append costs what it appends, not what the
ledger already holds.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CHILD = "--child" in sys.argv  # a child imports cascade from its PYTHONPATH (its checkout)
if not CHILD:
    sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from _ledgers import comment as sample_comment  # noqa: E402
from _table import child_env, reference_env, spread, table  # noqa: E402

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


def child(path: Path, appends: int) -> None:
    """Time one ledger in this process (cascade from PYTHONPATH); print the seconds as JSON."""
    from cascade import Discussion
    from cascade.ledger.parse import parse

    text = path.read_text()
    start = time.perf_counter()
    parse(text)
    parsed = time.perf_counter()
    d = Discussion.load(path, root=path.parent)
    d.consensus_result, d.questions, d.todos, d.decisions  # noqa: B018
    loaded = time.perf_counter()
    body = "The retry bound holds now; the queue is capped at 10,000 events.\n\nQ: and the p99?"
    for i in range(appends):
        if i % 2:
            d.add_comment("Rob", f"{body} ({i})", "READY")
        else:
            d.add_comment("AI-Security", f"{body} ({i})", "CHANGES",
                          provenance={"model": "bench"})
        d.consensus_result  # noqa: B018
    appended = time.perf_counter()
    print(json.dumps({"parse": parsed - start, "load+state": loaded - parsed,
                      "append": appended - loaded}))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="100,1000,10000", help="comments per ledger")
    ap.add_argument("--appends", type=int, default=20)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--reference", help="a checkout of another commit, timed in turns")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(Path(args.child), args.appends)
    checkouts = {"this checkout": child_env()}
    if args.reference:
        checkouts[f"reference {args.reference}"] = reference_env(Path(args.reference))
    sizes = [int(s) for s in args.sizes.split(",")]
    times: dict[tuple[int, str], list[dict[str, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for n in sizes:
            paths[n] = Path(tmp) / f"bench-{n}.discussion.md"
            paths[n].write_text(build(n))
        for _ in range(args.runs):
            for n in sizes:
                for label, env in checkouts.items():
                    proc = subprocess.run([sys.executable, str(HERE / "ledger.py"), "--child",
                                           str(paths[n]), "--appends", str(args.appends)],
                                          env=env, capture_output=True, text=True, check=False)
                    if proc.returncode:
                        raise SystemExit(f"{label}: exit {proc.returncode}: {proc.stderr[-400:]}")
                    times.setdefault((n, label), []).append(json.loads(proc.stdout))
        sizes_mb = {n: paths[n].stat().st_size / 1e6 for n in sizes}
    load = os.getloadavg()
    rows = []
    for (n, label), runs in times.items():
        rows.append((n, f"{sizes_mb[n]:.1f}", label,
                     *(spread([r[k] for r in runs], 1, 3)
                       for k in ("parse", "load+state", "append"))))
    table(f"Ledger: parse, load and state, {args.appends} appends one by one (seconds, median "
          f"(min-max) of {args.runs}{', in turns' if args.reference else ''}; load "
          f"{load[0]:.1f} {load[1]:.1f})",
          ("comments", "MB", "checkout", "parse", "load+state", f"{args.appends} appends"), rows)


if __name__ == "__main__":
    main()
