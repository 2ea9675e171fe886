"""How ``cascade check`` scales with the length of the history it walks.

    python bench/history.py [--commits 100,1000,5000] [--ledgers 5] [--repeat 5]
                            [--reference DIR]

Target (issue 23.8): a check of a whole 5,000-commit history in at most 1.5 s and 200 MiB
peak RSS. The repository grows the way a project's ADR ledgers do: a root commit with the
rules, then N commits, each appending to one of a few ledgers (chosen at random, seeded):
mostly a persona's block stamped as a turn writes it, sometimes a person's comment, and now
and then a revision of the document -- its new text, with the SOURCE-REVISION and VOTE-RESET
events the tool writes (stamped). The last commits bring every ledger to consensus, so the
check passes. The history is written with ``git fast-import``, packed as a clone has it.

Timed, as a command, in turns (A B A B ...) with the reference when there is one: the whole
history (``--from-ref <root> --to-ref HEAD``) and its last 10 commits; wall seconds (median,
min-max), the peak RSS of the command (its largest process, git included), its exit codes,
and the load average when the row was done.
"""
from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _table import child_env, reference_env, spread, table, usage_in_turns  # noqa: E402

from cascade.ledger.render import render_comment, render_event  # noqa: E402
from cascade.base.revision import blob_id  # noqa: E402

PANEL = ["AI-Architect", "AI-Security", "AI-Pragmatist"]
PEOPLE = ["Dana Reviewer", "Lee Owner"]
RULES = """\
rules:
  - name: adr
    match: "docs/adr/*.md"
    discussion: "docs/adr/discussions/{stem}.discussion.md"
    participants: [architect, security, pragmatist]
"""
REVISE_EVERY = 40  # appends to a ledger between two revisions of its document, on average


def header(doc: str, title: str) -> str:
    return ("<!-- DISCUSSION -->\n"
            f"<!-- Title: {title} -->\n<!-- Source: {doc} -->\n<!-- Protocol: review -->\n"
            "<!-- Participants: architect, security, pragmatist -->\n\n"
            f"# {title}\n\n---\n\n*Discussion begins below.*\n\n")


def body(i: int) -> str:
    """A review comment of a few hundred bytes, with markers."""
    return (f"Comment {i}: the proposal holds up, but the retry policy of path {i % 11} may\n"
            "amplify an outage; the queue needs a bound before this is accepted.\n\n"
            f"Q: How does option {i % 7} behave when the queue backs up?\n"
            f"- TODO: measure the p99 latency of path {i % 13} (see @architect)")


class Project:
    """What each commit adds: text appended to a ledger, or a document's new text."""

    def __init__(self, ledgers: int) -> None:
        self.docs = [f"docs/adr/{k:04d}-decision.md" for k in range(ledgers)]
        self.paths = [f"docs/adr/discussions/{k:04d}-decision.discussion.md"
                      for k in range(ledgers)]
        self.revisions = [0] * ledgers
        self.blob = [""] * ledgers

    def create(self, k: int) -> dict[str, bytes]:
        doc = self.document(k)
        return {self.docs[k]: doc,
                self.paths[k]: (header(self.docs[k], f"Decision {k}") + self.event(k)).encode()}

    def document(self, k: int) -> bytes:
        data = f"# Decision {k}\n\nWe will do thing {k} (revision {self.revisions[k]}).\n".encode()
        self.blob[k] = blob_id(data)
        return data

    def event(self, k: int) -> str:
        return render_event("SOURCE-REVISION", self.blob[k], {"path": self.docs[k]}, stamp=True)

    def revise(self, k: int) -> dict[str, bytes]:
        self.revisions[k] += 1
        doc = self.document(k)
        return {self.docs[k]: doc, self.paths[k]: (self.event(k) + render_event(
            "VOTE-RESET", "the document changed", stamp=True)).encode()}

    def comment(self, k: int, i: int, author: str, vote: str | None) -> dict[str, bytes]:
        stamp = None
        if author in PANEL:  # as a persona's turn writes it
            stamp = {"model": "bench", "revision": self.blob[k], "seen": "all"}
        return {self.paths[k]: (render_comment(author, body(i), vote, provenance=stamp)
                                + "\n").encode()}


def plan(commits: int, ledgers: int,
         project: Project | None = None) -> tuple[Project, list[dict[str, bytes]]]:
    """Each commit's changes: {path: text appended (a ledger) or new text (a document)};
    ``project``: another Project (a subclass that writes other documents)."""
    rng = random.Random(23)
    project = project or Project(ledgers)
    steps: list[dict[str, bytes]] = [{".ai-rules.yml": RULES.encode(),
                                      "README.md": b"# Project\n"}]
    steps += [project.create(k) for k in range(min(ledgers, commits))]
    closing = [(k, name) for name in PANEL for k in range(ledgers)]
    while len(steps) <= commits - len(closing):
        k = rng.randrange(ledgers)
        i = len(steps)
        roll = rng.random()
        if roll < 1 / REVISE_EVERY:
            steps.append(project.revise(k))
        elif roll < 0.2:
            steps.append(project.comment(k, i, rng.choice(PEOPLE), None))
        else:
            steps.append(project.comment(k, i, rng.choice(PANEL),
                                         "CHANGES" if rng.random() < 0.3 else None))
    for k, name in closing[len(closing) - (commits + 1 - len(steps)):]:
        steps.append(project.comment(k, len(steps), name, "READY"))
    return project, steps


def build(root: Path, commits: int, ledgers: int, project: Project | None = None,
          extend=None) -> int:
    """The repository, through ``git fast-import``: every version of one ledger written one
    after the other, so that each is stored as a delta of the one before (a well-packed
    repository, as a clone is). Returns the sum of the sizes of every ledger version.
    ``project``: another Project; ``extend(steps)``: changes the planned commits in place
    (adds other files to them)."""
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    project, steps = plan(commits, ledgers, project)
    if extend is not None:
        extend(steps)
    proc = subprocess.Popen(["git", "fast-import", "--quiet"], cwd=root, stdin=subprocess.PIPE)
    out = proc.stdin
    assert out is not None
    marks: dict[tuple[int, str], int] = {}
    size = 0
    for path in project.paths:
        text = bytearray()
        for n, files in enumerate(steps):
            if path in files:
                text += files[path]
                marks[(n, path)] = len(marks) + 1
                out.write(b"blob\nmark :%d\ndata %d\n%s\n" % (len(marks), len(text), text))
                size += len(text)
    for n, files in enumerate(steps):
        out.write(b"commit refs/heads/main\ncommitter Bench <b@example.com> %d +0000\n"
                  b"data 10\nstep %05d\n" % (1700000000 + n, n))
        for path, data in files.items():
            if (n, path) in marks:
                out.write(b"M 100644 :%d %s\n" % (marks[(n, path)], path.encode()))
            else:
                out.write(b"M 100644 inline %s\ndata %d\n%s\n" % (path.encode(), len(data), data))
    out.close()
    if proc.wait():
        raise SystemExit("git fast-import failed")
    subprocess.run(["git", "reset", "-q", "--hard"], cwd=root, check=True)
    return size


def root_commit(root: Path) -> str:
    return subprocess.run(["git", "rev-list", "--max-parents=0", "HEAD"], cwd=root, check=True,
                          capture_output=True, text=True).stdout.split()[0]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--commits", default="100,1000,5000")
    ap.add_argument("--ledgers", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--reference",
                    help="a checkout of another commit, timed in turns with this one")
    args = ap.parse_args()
    reference = Path(args.reference) if args.reference else None
    rows = []
    for commits in [int(c) for c in args.commits.split(",")]:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            size = build(root, commits, args.ledgers)
            start = root_commit(root)
            for name, frm in (("whole history", start), ("last 10 commits", "HEAD~10")):
                cmd = [sys.executable, "-m", "cascade", "check", "--from-ref", frm,
                       "--to-ref", "HEAD"]
                commands = {"this": (cmd, root, child_env())}
                if reference:
                    commands["reference"] = (cmd, root, reference_env(reference))
                usage_in_turns(commands, 1)  # warm-up: bytecode, the page cache
                runs = usage_in_turns(commands, args.repeat)
                row: list[object] = [commits, name, f"{size / 2**20:.1f}"]
                for label in commands:
                    walls = [wall for wall, _, _ in runs[label]]
                    rss = max(peak for _, peak, _ in runs[label])
                    codes = sorted({code for _, _, code in runs[label]})
                    row += [spread(walls), f"{rss / 1024:.0f}", "/".join(map(str, codes))]
                rows.append(tuple(row) + (f"{os.getloadavg()[0]:.1f}",))
    load = os.getloadavg()
    labels = ["this checkout"] + ([str(reference)] if reference else [])
    header_row: tuple[str, ...] = ("commits", "range", "MiB of versions")
    for label in labels:
        header_row += (f"{label}: s", "peak MiB", "exit")
    header_row += ("load",)
    table(f"cascade check over a history, as a command (seconds, median (min-max) of "
          f"{args.repeat}; {args.ledgers} ledgers; {os.cpu_count()} cores; load "
          f"{load[0]:.1f} {load[1]:.1f} {load[2]:.1f})", header_row, rows)


if __name__ == "__main__":
    main()
