"""``cascade summary``: it says whether the file it writes is meant to be committed (and the
file says it too), and its "Decisions" section lists every decision its header shows -- a
person's decision (``cascade decide``) as well as the ledger's DECISION: markers."""
from __future__ import annotations

from pathlib import Path

LEDGER = "discussions/x.discussion.md"
SUMMARY = Path("discussions/x.discussion.sum.md")


def _section(text: str, heading: str) -> list[str]:
    lines = text.splitlines()
    start = lines.index(f"## {heading}") + 2
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("## ")), len(lines))
    return [line for line in lines[start:end] if line]


def test_summary_says_it_is_not_meant_to_be_committed(repo, cli):
    cli("new", "X", "--protocol", "review")
    code, out, _ = cli("summary", LEDGER)
    assert code == 0
    assert out.splitlines() == [
        f"Wrote {SUMMARY} (a snapshot of the ledger, not meant to be committed: the ledger "
        "is the record, and nothing keeps this file current; run cascade summary again for "
        "a fresh one)"]
    text = SUMMARY.read_text()
    assert text.splitlines()[2] == (
        "A snapshot of `x.discussion.md`, written by `cascade summary`: not meant to be "
        "committed (the ledger is the record; nothing keeps this file current).")


def test_the_decisions_section_lists_the_decisions_the_header_shows(repo, cli):
    cli("new", "X", "--protocol", "review")
    cli("comment", LEDGER, "DECISION: ship it", "--author", "Bob")
    code, _, err = cli("decide", LEDGER, "READY", "--reason",
                       "We ship the small version first. The rest waits.")
    assert code == 0, err
    assert cli("summary", LEDGER)[0] == 0
    text = SUMMARY.read_text()
    header = [line for line in text.splitlines() if line.startswith("- Decision by ")]
    assert len(header) == 1
    decisions = _section(text, "Decisions")
    assert decisions == [
        "- READY, decided by Test Person <test@example.com> (in force): We ship the small version "
        "first. The rest waits.",
        "- ship it (Bob)"]
