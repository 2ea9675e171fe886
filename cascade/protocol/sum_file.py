"""The deterministic summary of a discussion (``<ledger>.sum.md``): no model, no clock.

A snapshot, not a record: the ledger is the record, and nothing keeps the summary current
(the hook never writes it, nor reviews it), so it is not meant to be committed; it says so
at its top, and ``cascade summary`` says so as it writes it (``NOT_COMMITTED``)."""
from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from cascade.protocol.finding_life import listing

if TYPE_CHECKING:
    from cascade.protocol.discussion import Discussion

_MARKDOWN_NOISE = re.compile(r"[*_`>#]+")


NOT_COMMITTED = ("a snapshot of the ledger, not meant to be committed: the ledger is the record, "
                 "and nothing keeps this file current; run cascade summary again for a fresh one")


def summary_path(ledger: Path) -> Path:
    name = ledger.name
    stem = name[:-3] if name.endswith(".md") else name
    return ledger.with_name(stem + ".sum.md")


def gist(text: str, width: int = 72) -> str:
    """The first sentence of a comment, on one line, for tables and status lines."""
    for line in text.splitlines():
        line = _MARKDOWN_NOISE.sub("", line).strip(" -")
        if line and not line.startswith("<!--"):
            sentence = re.split(r"(?<=[.!?])\s", line, maxsplit=1)[0]
            return sentence if len(sentence) <= width else sentence[: width - 1].rstrip() + "…"
    return ""


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_summary(d: Discussion) -> str:
    out = [f"# Summary: {d.title}", "",
           f"A snapshot of `{d.path.name}`, written by `cascade summary`: not meant to be "
           "committed (the ledger is the record; nothing keeps this file current).", "",
           *_facts(d), "", "## Votes", "", *_vote_table(d)]
    questions = d.questions
    sections = [
        ("Open questions", [f"- {q['id']}: {q['text']} ({q['author']})"
                            for q in questions if q["status"] == "open"]),
        ("Answered questions", _answered(questions)),
        ("Decisions", _decisions(d)),
        ("Action items", _action_items(d.todos)),
        ("Concerns", [f"- {c['text']} ({c['author']})" for c in d.concerns]),
    ]
    found = d.findings
    if found:  # a discussion whose steps ask findings (or with a CONCERN: marker)
        sections.append(("Open findings", [f"- {line}" for line in listing(found)]))
    for heading, items in sections:
        out += ["", f"## {heading}", "", *(items or ["None."])]
    return "\n".join(out) + "\n"


def _facts(d: Discussion) -> list[str]:
    """The list under the title: ledger, document, phase, status, consensus, decisions."""
    result = d.consensus_result
    phase = d.current_phase
    title = d.protocol.phase_title(phase)
    out = [f"- Ledger: `{d.path.name}`", *([f"- Document: `{d.source}`"] if d.source else []),
           f"- Phase: {title} (`{phase}`)", f"- Status: {d.status}"]
    counts = ", ".join(f"{k}: {v}" for k, v in result.counts.items())
    verdict = f"reached, {result.outcome}" if result.reached else f"not reached ({result.reason})"
    out += [f"- Consensus: {verdict}", f"- Votes: {counts}"]
    if result.advisory:
        out.append("- The panel's votes are advisory: only people's votes count")
    state = d.state
    for item in state.decisions:
        note = "in force" if item.in_force else f"not in force: {item.note}"
        out.append(f"- Decision by {_cell(item.by)}: {item.vote} ({note}): {gist(item.reason)}")
    if state.forged:
        out.append(f"- Not counted: {len(state.forged)} block(s) under a persona's name that "
                   "cascade did not write (lines "
                   + ", ".join(str(x.line) for x in state.forged) + ")")
    return out


def _vote_table(d: Discussion) -> list[str]:
    """Each participant's vote in the current phase and the gist of their latest comment,
    then who is still awaited."""
    votes = d.votes
    waiting = [n for n in d.expected_voters() if n not in votes]
    if not votes and not waiting:
        return ["No votes in this phase yet."]
    advisory = d.consensus_result.advisory
    latest = {c.author: c for c in d.responses()}
    out = ["| Participant | Vote | Gist |", "|---|---|---|"]
    for name, vote in votes.items():
        label = f"{vote} (advisory)" if name in advisory else vote
        out.append(f"| {_cell(name)} | {label} | {_cell(gist(latest[name].body))} |")
    out += [f"| {_cell(name)} | (waiting) | |" for name in waiting]
    return out


def _decisions(d: Discussion) -> list[str]:
    """Every decision the list under the title shows -- a person's (``cascade decide``), in
    force or not -- then the ledger's DECISION: lines, with who supports each."""
    out = [f"- {item.vote}, decided by {item.by} "
           f"({'in force' if item.in_force else f'not in force: {item.note}'}): "
           f"{' '.join(item.reason.split())}" for item in d.state.decisions]
    return out + [f"- {x['text']} ({', '.join(x['supporters'])})" for x in d.decisions]


def _answered(questions: list[dict]) -> list[str]:
    out: list[str] = []
    for q in questions:
        if q["status"] == "answered":
            out.append(f"- {q['id']}: {q['text']} ({q['author']})")
            out += [f"  - A: {a['text']} ({a['author']})" for a in q["answers"]]
    return out


def _action_items(todos: list[dict]) -> list[str]:
    """TODO and ASSIGNED items, checked when done; a DONE that closed no item on its own."""
    out: list[str] = []
    for t in todos:
        if t["kind"] == "DONE":
            if t["item"] is None:
                out.append(f"- [x] DONE: {t['text']} ({t['author']})")
            continue
        line = (f"- [{'x' if t['status'] == 'done' else ' '}] {t['id']} {t['kind']}: "
                f"{t['text']} ({t['author']})")
        if t["done"] is not None:
            line += f", done by {t['done']['author']}: {t['done']['text']}"
        out.append(line)
    return out
