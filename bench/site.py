"""How long ``cascade site`` takes on a large decision log, and how big its timeline is.

    python bench/site.py [--decisions 650] [--ledgers 50] [--repeat 3]

The repository has rust-lang/rfcs' shape: ``text/0001-<slug>.md`` ... one file per decision,
its metadata in a list at the top (``- Feature Name:``, ``- Start Date:``, ``- RFC PR:``), a
few kilobytes of prose in sections; a rule governs ``text/*.md`` with its ledgers in
``text/discussions/``; the first ``--ledgers`` decisions have a ledger of a few review comments
(markers, a question, a decision; the panel's replies stamped with tokens and cost, three in
four concluded READY: what ``cascade stats`` and the panel's page count), the rest are
unreviewed; one decision in twenty is
superseded by the next. Everything is committed in one commit (``--no-verify``).

Timed, as a command (``python -m cascade site -o DIR``, a fresh DIR each run): wall seconds,
median (min-max) of ``--repeat`` runs; then the size of index.html and of the whole site
(its top folder); ``cascade stats`` on the same repository, timed in turn with the builds;
and how long headless Chromium takes to open the timeline (when the browser is installed).
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _ledgers import comment
from _table import child_env, spread, table

from cascade.ledger.provenance import event_digest, nonce

RULES = """\
rules:
  - name: rfc
    match: "text/*.md"
    discussion: "text/discussions/{stem}.discussion.md"
    participants: [architect, security, pragmatist]
"""
PROSE = ("The motivation is the cost users pay today: every crate reimplements it, slightly "
         "differently, and the differences show up as bugs at the boundaries. ") * 6


def document(k: int, total: int) -> str:
    status = ""
    if k % 20 == 0 and k < total:
        status = f"\n## Status\n\nSuperseded by [RFC {k + 1}]({k + 1:04d}-feature-{k + 1}.md)\n"
    return (f"- Feature Name: `feature_{k}`\n- Start Date: 20{14 + k % 10}-0{1 + k % 9}-1{k % 10}\n"
            f"- RFC PR: [rust-lang/rfcs#{k}](https://github.com/rust-lang/rfcs/pull/{k})\n\n"
            f"# Summary\n\nFeature {k}: a short summary of what changes.\n{status}\n"
            f"# Motivation\n\n{PROSE}\n\n# Detailed design\n\n{PROSE}\n\n```rust\nfn f{k}() "
            "{}\n```\n\n# Drawbacks\n\nSome.\n\n# Alternatives\n\nOthers.\n")


def ledger(k: int) -> str:
    """Three persona replies, stamped as a turn writes them (tokens and cost), and a person's
    comment; three decisions in four end READY (an OUTCOME recorded), the fourth stays open
    (the architect rejects)."""
    doc = f"text/{k:04d}-feature-{k}.md"
    head = ("<!-- DISCUSSION -->\n"
            f"<!-- Title: Feature {k} -->\n<!-- Source: {doc} -->\n<!-- Protocol: review -->\n"
            "<!-- Participants: architect, security, pragmatist -->\n\n"
            f"# Feature {k}\n\n---\n\n*Discussion begins below.*\n\n")
    blocked = k % 4 == 0
    panel = [("AI-Architect", "REJECT" if blocked else "READY"), ("AI-Security", "READY"),
             ("AI-Pragmatist", "READY")]
    text = head + "".join(comment(i, name, vote, decision_every=3, stamp={
        "model": "bench", "prompt_tokens": str(900 + 10 * i), "completion_tokens": "120",
        "cost": "0.000400", "seen": "all"}) for i, (name, vote) in enumerate(panel, 1))
    text += comment(4, "Rob", None, decision_every=3)
    if not blocked:
        unsigned = f"READY n={nonce()}"
        text += f"\n<!-- OUTCOME: {unsigned} sig={event_digest('OUTCOME', unsigned)} -->\n"
    return text


def build(root: Path, decisions: int, ledgers: int) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "text/discussions").mkdir(parents=True)
    (root / ".ai-rules.yml").write_text(RULES)
    for k in range(1, decisions + 1):
        (root / f"text/{k:04d}-feature-{k}.md").write_text(document(k, decisions))
        if k <= ledgers:
            (root / f"text/discussions/{k:04d}-feature-{k}.discussion.md").write_text(ledger(k))
    env = {"GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
           "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}
    subprocess.run(["git", "add", "."], cwd=root, check=True)
    subprocess.run(["git", "commit", "-qm", "rfcs", "--no-verify"], cwd=root, check=True,
                   env={**child_env(), **env})


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--decisions", type=int, default=650)
    ap.add_argument("--ledgers", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "rfcs"
        build(root, args.decisions, args.ledgers)
        times: dict[str, list[float]] = {"site": [], "stats": []}
        for n in range(args.repeat):  # interleaved: site, stats, site, stats ...
            out = Path(tmp) / f"site{n}"
            for what, argv in (("site", ["site", "-o", str(out)]), ("stats", ["stats"])):
                start = time.perf_counter()
                proc = subprocess.run([sys.executable, "-m", "cascade", *argv], cwd=root,
                                      env=child_env(), capture_output=True, text=True)
                times[what].append(time.perf_counter() - start)
                if proc.returncode:
                    sys.exit(proc.stdout + proc.stderr)
        opened = timeline_load(out / "index.html", Path(tmp) / "profile", max(5, args.repeat))
        index = (out / "index.html").stat().st_size
        total = sum(p.stat().st_size for p in out.iterdir())
        files = sum(1 for _ in out.iterdir())
        table(f"cascade site: {args.decisions} decisions, {args.ledgers} with a ledger",
              ("build s, median (min-max)", "index.html KiB", "site KiB", "files",
               "cascade stats s", "timeline opens, ms"),
              [(spread(times["site"]), f"{index / 1024:.0f}", f"{total / 1024:.0f}", files,
                spread(times["stats"]), opened)])


def timeline_load(index: Path, profile: Path, repeat: int) -> str:
    """How long headless Chromium takes to open the timeline from file:// until its load
    event (the navigation's own timing, ms, median (min-max) of ``repeat``), or why it was
    not measured (no browser here: tests/browser.py)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from browser import chromium, missing  # the test extra's Selenium, the system's Chromium
    if missing():
        return f"not measured: {missing()}"
    driver = chromium(profile)
    try:
        took = []
        for _ in range(repeat):
            driver.get(index.as_uri())
            took.append(driver.execute_script(
                "var n = performance.getEntriesByType('navigation')[0];"
                " return n.loadEventEnd - n.startTime;") / 1000)
    finally:
        driver.quit()
    return spread(took, scale=1000, digits=0)


if __name__ == "__main__":
    main()
