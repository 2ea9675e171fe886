"""Writes docs/site-timeline.png and docs/site-decision.png, the screenshots in docs/site.md:
a repository of six ADRs (two reviewed by a panel whose replies come from the fake endpoint
the tests use, through the real hook under `git commit`; one superseded), its site built by
`cascade site`, shown in the system's headless Chromium (tests/browser.py) at 1280 wide.

    python docs/site_screenshots.py
"""
from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

PERSON = "Dana Reyes"
RULES = f"""\
rules:
  - name: adr
    match: "docs/adr/*.md"
    template: adr
    discussion: "docs/adr/discussions/{{stem}}.discussion.md"
    participants: [architect, security, pragmatist]
    consensus: {{threshold_ready: 0.67, threshold_reject: 0.01, human_required: false}}
    deciders: [{PERSON}]
"""


def adr(number: int, title: str, date: str, status: str, context: str, decision: str) -> str:
    return (f"# {number}. {title}\n\nDate: {date}\n\n## Status\n\n{status}\n\n## Context\n\n"
            f"{context}\n\n## Decision\n\n{decision}\n")


# (file, title, date, status, context, decision): committed oldest first.
ADRS = [
    ("0001-record-architecture-decisions.md", "Record architecture decisions", "2026-01-12",
     "Accepted", "We need to record the architectural decisions made on this project.",
     "We will use Architecture Decision Records, as described by Michael Nygard."),
    ("0002-publish-events-through-kafka.md", "Publish events through Kafka", "2026-02-03",
     "Superseded by [6. Publish events through NATS](0006-publish-events-through-nats.md)",
     "Services need to learn about orders as they change.",
     "Every service publishes its domain events to a Kafka topic of its own."),
    ("0003-use-postgresql-for-the-event-store.md", "Use PostgreSQL for the event store",
     "2026-03-18", "Accepted",
     "Orders, payments and shipments are stored as events. We need a store that appends "
     "quickly, reads a stream in order, and that the team already knows how to run.",
     "We will keep events in PostgreSQL: one `events` table, partitioned by month, with a "
     "unique `(stream_id, version)` key for optimistic concurrency. Backups run nightly with "
     "`pg_dump`; old partitions are kept forever."),
    ("0004-session-tokens-as-jwts.md", "Session tokens as JWTs", "2026-04-22", "Proposed",
     "The web and mobile clients need sessions that every service can check on its own.",
     "Sessions are JWTs signed with RS256, valid for one hour, with a refresh token."),
    ("0005-feature-flags-in-configuration.md", "Feature flags in configuration",
     "2026-05-09", "Accepted", "We ship behind flags and need to turn them per environment.",
     "Flags live in the service's configuration file, reviewed like code."),
    ("0006-publish-events-through-nats.md", "Publish events through NATS", "2026-06-30",
     "Accepted. Supersedes [2. Publish events through Kafka]"
     "(0002-publish-events-through-kafka.md)",
     "Running Kafka costs us more than the event volume needs.",
     "Services publish their domain events to NATS JetStream subjects."),
]
REVIEWS = {
    "0003-use-postgresql-for-the-event-store.md": {
        "AI-Architect": ("An append-only table with a per-stream version is the right shape."
                         "\n\nQ: How long do we keep events before archiving them?", "CHANGES",
                         [{"severity": "major", "where": "old partitions are kept forever",
                           "what": "No retention or archiving policy",
                           "why": "the table and its backups grow without bound",
                           "suggestion": "archive partitions older than 13 months"}]),
        "AI-Security": ("Events hold customer addresses.", "CHANGES",
                        [{"severity": "critical", "where": "Backups run nightly",
                          "what": "Backups are not encrypted at rest",
                          "why": "a leaked dump exposes every customer's address",
                          "suggestion": "encrypt dumps with the KMS key before upload"}]),
        "AI-Pragmatist": ("Ship it; the team runs PostgreSQL already.\n\nDECISION: PostgreSQL, "
                          "one partitioned events table.", "READY", []),
    },
    "0004-session-tokens-as-jwts.md": {
        "AI-Architect": ("Stateless checks suit the services.", "READY", []),
        "AI-Security": ("One hour is fine; revocation is not addressed.", "CHANGES",
                        [{"severity": "major", "where": "valid for one hour",
                          "what": "No way to revoke a stolen token",
                          "suggestion": "keep a deny-list of token ids until they expire"}]),
        "AI-Pragmatist": ("Agree with security on revocation.", "CHANGES",
                          [{"severity": "minor", "where": "refresh token",
                            "what": "Refresh token rotation is not described"}]),
    },
}
FOLLOW_UP = {  # what the author wrote back, then the decider's decision
    "0003-use-postgresql-for-the-event-store.md": (
        ["A(Q1): 13 months online, then archived to cold storage.",
         "A(F1): partitions older than 13 months are archived (runbook section 4).\n\n"
         "A(F2): dumps are encrypted with the KMS key before upload.",
         "WAIVE(F1): archiving is in the runbook; enforced by the ops job."],
        ("READY", "Encryption at rest is in place; archiving is in the runbook.")),
}


def main() -> None:
    from browser import chromium, missing
    from fakellm import FakeLLM
    from test_findings import answer

    if missing():
        sys.exit(f"site_screenshots: {missing()}")
    with FakeLLM() as fake, tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp, "repo")
        repo.mkdir()
        env = {**os.environ, "CASCADE_MODEL": "openai/fake", "CASCADE_API_BASE": fake.url,
               "CASCADE_BACKOFF": "0.05", "PYTHONPATH": str(HERE.parent),
               "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}

        def run(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
            return subprocess.run(args, cwd=repo, env=env, check=check, capture_output=True,
                                  text=True)

        def cascade(*args: str) -> None:
            run(sys.executable, "-m", "cascade", *args)

        run("git", "init", "-q", "-b", "main")
        run("git", "config", "user.name", PERSON)
        run("git", "config", "user.email", "dana@example.com")
        (repo / ".ai-rules.yml").write_text(RULES)
        (repo / "docs/adr").mkdir(parents=True)
        run("git", "add", ".")
        run("git", "commit", "-qm", "Decision records, governed")
        cascade("init", "--plain")
        run("git", "add", "-A")
        run("git", "-c", "core.hooksPath=/dev/null", "commit", "-qm", "cascade's hooks")
        for name, title, date, status, context, decision in ADRS:
            number = int(name[:4])
            (repo / "docs/adr" / name).write_text(
                adr(number, title, date, status, context, decision))
            run("git", "add", "-A")
            review = REVIEWS.get(name)
            if review is None:
                run("git", "-c", "core.hooksPath=/dev/null", "commit", "-qm", f"ADR {number}")
                continue
            for persona, (comment, vote, findings) in review.items():
                fake.script(f"Reply as {persona} ", answer(comment, vote, findings))
            run("git", "commit", "-qm", f"ADR {number}", check=False)  # the panel reviews
            ledger = f"docs/adr/discussions/{name[:-3]}.discussion.md"
            comments, decided = FOLLOW_UP.get(name, ([], None))
            for text in comments:
                cascade("comment", ledger, text)
            if decided:
                cascade("decide", f"docs/adr/{name}", decided[0], "--reason", decided[1])
            run("git", "add", "-A")
            run("git", "-c", "core.hooksPath=/dev/null", "commit", "-qm", f"ADR {number}: review")
        cascade("site", "-o", str(Path(tmp, "site")))
        shoot(chromium, Path(tmp))
    print(f"wrote {HERE / 'site-timeline.png'} and {HERE / 'site-decision.png'}")


def shoot(chromium, tmp: Path) -> None:
    """The timeline as a 1280x900 window shows it; a decision's page from its review's
    heading to the end of its decisions (the whole page, its document above, is too tall a
    picture to stay small)."""
    driver = chromium(tmp / "profile", size=(1280, 900))
    try:
        driver.get((tmp / "site/index.html").as_uri())
        driver.save_screenshot(str(HERE / "site-timeline.png"))
        driver.get((tmp / "site/0003.html").as_uri())
        top, bottom = driver.execute_script(
            "function at(id) { return document.getElementById(id).getBoundingClientRect(); }"
            "return [at('review').top + window.scrollY - 12,"
            "        at('decisions').bottom + window.scrollY + 12];")
        shot = driver.execute_cdp_cmd("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True,
            "clip": {"x": 0, "y": top, "width": 1280, "height": bottom - top, "scale": 1}})
        (HERE / "site-decision.png").write_bytes(base64.b64decode(shot["data"]))
    finally:
        driver.quit()
    print(json.dumps({p: (HERE / p).stat().st_size for p in ("site-timeline.png",
                                                           "site-decision.png")}))


if __name__ == "__main__":
    main()
