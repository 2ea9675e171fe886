"""How ``cascade drift`` scales with the length of the history.

    python bench/drift.py [--commits 1000,5000] [--ledgers 5] [--repeat 5] [--reference DIR]

The history is bench/history.py's (its builder): N commits appending to a few ADR ledgers,
now and then a revision of a document. Here each document is an accepted decision that
code: the even ones say so in their front matter (``status: accepted``, ``governs:
["src/mod<k>/**"]``), the odd ones state no status (accepted by an ``OUTCOME: READY`` their
ledger records early on) and take the rule's ``governs: ["src/**"]``; every other commit
also changes a source file in one of ``src/mod0`` .. ``src/mod<N>``. So every decision has
drifted by hundreds of commits, and the table lists them all.

Timed, as a command, in turns (A B A B ...) with the reference when there is one:
``cascade drift`` (exit 1: drift found), ``cascade drift --json`` and ``cascade check``
(snapshot, the rule's ``drift: warn`` on); wall seconds (median, min-max), the peak RSS of the
command (its largest process, git included), its exit codes, and the load average.
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import history
from _table import child_env, reference_env, spread, table, usage_in_turns

from cascade.ledger.records import OUTCOME
from cascade.ledger.render import render_event

RULES = history.RULES + '    governs: ["src/**"]\n    drift: warn\n'


class Decisions(history.Project):
    """Documents that are accepted decisions: the even ones by their front matter (and their
    own ``governs:``), the odd ones by their ledger's outcome."""

    def document(self, k: int) -> bytes:
        if k % 2:
            data = f"# Decision {k}\n\nWe will do thing {k} (revision {self.revisions[k]}).\n"
        else:
            data = (f"---\nstatus: accepted\ngoverns: [\"src/mod{k}/**\"]\n---\n\n# Decision "
                    f"{k}\n\nWe will do thing {k} (revision {self.revisions[k]}).\n")
        encoded = data.encode()
        self.blob[k] = history.blob_id(encoded)
        return encoded


def extend(ledgers: int):
    """Every other commit also changes a source file (``src/mod<N>`` is governed by the odd
    decisions only); the odd ledgers record ``OUTCOME: READY`` in their first append."""
    def change(steps: list[dict[str, bytes]]) -> None:
        rng = random.Random(26)
        steps[0][".ai-rules.yml"] = RULES.encode()
        for n, files in enumerate(steps[1 + ledgers:], 1 + ledgers):
            if n % 2:
                k = rng.randrange(ledgers + 1)
                files[f"src/mod{k}/file{n % 17}.py"] = f"step = {n}\n".encode()
        outcome = render_event(OUTCOME, "READY", stamp=True).encode()
        for k in range(1, ledgers, 2):
            path = f"docs/adr/discussions/{k:04d}-decision.discussion.md"
            at = next(n for n in range(1 + ledgers, len(steps)) if path in steps[n])
            steps[at][path] = steps[at][path] + outcome
    return change


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--commits", default="1000,5000")
    ap.add_argument("--ledgers", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--reference", help="a checkout of another commit, timed in turns")
    args = ap.parse_args()
    reference = Path(args.reference) if args.reference else None
    rows = []
    for commits in [int(c) for c in args.commits.split(",")]:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            history.build(root, commits, args.ledgers, Decisions(args.ledgers),
                          extend(args.ledgers))
            for name, argv in (("drift", ["drift"]), ("drift --json", ["drift", "--json"]),
                               ("check (drift: warn)", ["check"])):
                cmd = [sys.executable, "-m", "cascade", *argv]
                commands = {"this": (cmd, root, child_env())}
                if reference:
                    commands["reference"] = (cmd, root, reference_env(reference))
                usage_in_turns(commands, 1)  # warm-up: bytecode, the page cache
                runs = usage_in_turns(commands, args.repeat)
                row: list[object] = [commits, name]
                for label in commands:
                    walls = [wall for wall, _, _ in runs[label]]
                    rss = max(peak for _, peak, _ in runs[label])
                    codes = sorted({code for _, _, code in runs[label]})
                    row += [spread(walls), f"{rss / 1024:.0f}", "/".join(map(str, codes))]
                rows.append((*row, f"{os.getloadavg()[0]:.1f}"))
    load = os.getloadavg()
    labels = ["this checkout"] + ([str(reference)] if reference else [])
    header: tuple[str, ...] = ("commits", "command")
    for label in labels:
        header += (f"{label}: s", "peak MiB", "exit")
    header += ("load",)
    table(f"cascade drift over a history, as a command (seconds, median (min-max) of "
          f"{args.repeat}; {args.ledgers} decisions; {os.cpu_count()} cores; load "
          f"{load[0]:.1f} {load[1]:.1f} {load[2]:.1f})", header, rows)


if __name__ == "__main__":
    main()
