"""How fast ``cascade check`` judges a large range.

    python bench/check.py [--ledgers 1000] [--comments 50] [--reference DIR]

Target (issue 5): 1,000 ledgers of 50 comments each (~1 KB of markdown with markers per
comment) in one range, checked in at most 2 s. The repository is built once, in three
commits: the rules; 1,000 governed documents with ledgers of half the comments; every
document revised and every ledger appended to (a new SOURCE-REVISION, a VOTE-RESET, the
other half of the comments, ending at consensus). Timed: the range over both content
commits (all ledgers added), the range over the last commit (all ledgers appended to: the
append-only byte test on every pair), and the no-refs mode (everything at HEAD).

With ``--reference DIR`` (a checkout of another commit), a second repository is built the way
that commit's tool wrote ledgers (events without stamps, when it predates them), and the
command-line check of each checkout on its own repository is timed in turns (A B A B ...):
medians with min-max, and the load.
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _ledgers import RULES  # noqa: E402
from _ledgers import comment as _comment  # noqa: E402
from _table import child_env, interleaved, reference_env, spread, table, timed  # noqa: E402

from cascade.check.run import run_check  # noqa: E402
from cascade.ledger.render import render_event  # noqa: E402
from cascade.base.revision import blob_id  # noqa: E402

PANEL = ["AI-Architect", "AI-Security", "AI-Pragmatist"]


def comment(i: int, author: str, vote: str | None, revision: str) -> str:
    stamp = {"model": "bench", "revision": revision, "seen": "all"}  # as a turn writes it
    return _comment(i, author, vote, decision_every=10, stamp=stamp)


def comments(start: int, n: int, revision: str) -> str:
    """n comments; the last three are the panel's READY votes."""
    chunks = []
    for i in range(start, start + n):
        left = start + n - i
        if left <= 3:
            chunks.append(comment(i, PANEL[3 - left], "READY", revision))
        else:
            chunks.append(comment(i, PANEL[i % 3], "CHANGES" if i % 4 == 0 else None, revision))
    return "".join(chunks)


def header(doc: str, title: str) -> str:
    return ("<!-- DISCUSSION -->\n"
            f"<!-- Title: {title} -->\n<!-- Source: {doc} -->\n<!-- Protocol: review -->\n"
            "<!-- Participants: architect, security, pragmatist -->\n\n"
            f"# {title}\n\n---\n\n*Discussion begins below.*\n\n")


def event(kind: str, value: str, stamped: bool, **fields: str) -> str:
    """An event line as the tool writes it (``stamped``: with its stamp, as it has been since
    events carry one)."""
    return render_event(kind, value, fields, stamp=stamped) + "\n"


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def build(root: Path, ledgers: int, n: int, stamped: bool = True) -> tuple[int, int]:
    env_ok = {"GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "b@example.com",
              "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "b@example.com"}
    os.environ.update(env_ok)
    git(root, "init", "-q", "-b", "main")
    (root / ".ai-rules.yml").write_text(RULES)
    git(root, "add", ".")
    git(root, "commit", "-qm", "rules")
    (root / "docs/adr/discussions").mkdir(parents=True)
    half = n // 2
    for k in range(ledgers):
        doc = f"docs/adr/{k:04d}-decision.md"
        text = f"# Decision {k}\n\nWe will do thing {k}.\n"
        (root / doc).write_text(text)
        ledger = header(doc, f"Decision {k}")
        revision = blob_id(text.encode())
        ledger += event("SOURCE-REVISION", revision, stamped, path=doc)
        (root / f"docs/adr/discussions/{k:04d}-decision.discussion.md").write_text(
            ledger + comments(0, half, revision))
    git(root, "add", ".")
    git(root, "commit", "-qm", "documents and first reviews")
    size = 0
    for k in range(ledgers):
        doc = f"docs/adr/{k:04d}-decision.md"
        text = f"# Decision {k}\n\nWe will do thing {k}, revised.\n"
        (root / doc).write_text(text)
        path = root / f"docs/adr/discussions/{k:04d}-decision.discussion.md"
        revision = blob_id(text.encode())
        with open(path, "a") as fh:
            fh.write(event("SOURCE-REVISION", revision, stamped, path=doc)
                     + event("VOTE-RESET", "the document changed", stamped)
                     + comments(half, n - half, revision))
        size += path.stat().st_size
    git(root, "add", ".")
    git(root, "commit", "-qm", "revisions and second reviews")
    return size, n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ledgers", type=int, default=1000)
    ap.add_argument("--comments", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--reference", help="a checkout of another commit, timed in turns with this one")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        size, _ = build(root, args.ledgers, args.comments)
        rows = []
        cases = [("range, ledgers added", "main~2", "main"),
                 ("range, ledgers appended to", "main~1", "main"),
                 ("no refs (all at HEAD)", None, None)]
        for name, from_ref, to_ref in cases:
            report = run_check(root, from_ref, to_ref)
            assert report.ok, [str(p) for p in report.problems[:3]]
            assert report.documents == args.ledgers, report.checked
            best, median = timed(lambda: run_check(root, from_ref, to_ref), args.repeat)
            cmd = [sys.executable, "-m", "cascade", "check"]
            if from_ref:
                cmd += ["--from-ref", from_ref, "--to-ref", to_ref]
            env = child_env()
            before = _children_cpu()
            cbest, cmedian = timed(lambda: subprocess.run(cmd, cwd=root, env=env, check=True,
                                                          capture_output=True), args.repeat)
            cpu = (_children_cpu() - before) / args.repeat
            rows.append((name, args.ledgers, f"{size / 1e6:.0f}", f"{best:.2f}", f"{median:.2f}",
                         f"{cbest:.2f}", f"{cmedian:.2f}", f"{cpu:.2f}"))
    load = os.getloadavg()[0]
    table(f"cascade check: {args.ledgers} ledgers x {args.comments} comments (seconds; best "
          f"and median of {args.repeat}; {os.cpu_count()} cores; load average {load:.1f})",
          ("case", "ledgers", "MB", "in-process best", "median", "CLI best", "CLI median",
           "CLI cpu"), rows)
    if args.reference:
        compare(Path(args.reference), args.ledgers, args.comments, args.repeat)


def compare(reference: Path, ledgers: int, n: int, runs: int) -> None:
    """The command-line check of this checkout and of the reference, in turns, each on a
    repository written as its own tool writes ledgers."""
    with tempfile.TemporaryDirectory() as mine, tempfile.TemporaryDirectory() as theirs:
        build(Path(mine), ledgers, n)
        build(Path(theirs), ledgers, n, stamped=_stamps_events(reference))
        rows = []
        for name, from_ref, to_ref in [("range, ledgers added", "main~2", "main"),
                                       ("range, ledgers appended to", "main~1", "main"),
                                       ("no refs (all at HEAD)", None, None)]:
            cmd = [sys.executable, "-m", "cascade", "check"]
            if from_ref:
                cmd += ["--from-ref", from_ref, "--to-ref", to_ref]
            commands = {"this": (cmd, Path(mine), child_env()),
                        "reference": (cmd, Path(theirs), reference_env(reference))}
            interleaved(commands, 1)  # warm-up
            times = interleaved(commands, runs)
            rows.append((name, spread(times["this"]), spread(times["reference"])))
    load = os.getloadavg()
    table(f"cascade check, CLI, this checkout and {reference} in turns (seconds, median "
          f"(min-max) of {runs}; load {load[0]:.1f} {load[1]:.1f})",
          ("case", "this checkout", "reference"), rows)


def _stamps_events(reference: Path) -> bool:
    """Whether the reference's tool writes events with a stamp."""
    return "stamp" in (reference / "cascade/ledger/render.py").read_text().split(
        "def render_event", 1)[-1].split(")", 1)[0]


def _children_cpu() -> float:
    """CPU seconds of finished child processes (the CLI, its worker, and git)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


if __name__ == "__main__":
    main()
