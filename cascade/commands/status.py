from __future__ import annotations

import json
import sys
from typing import Any

from cascade.commands._common import ledger_paths
from cascade.errors import CascadeError, display_path
from cascade.ledger.discussion import Discussion
from cascade.ledger.summary import gist


def status_data(d: Discussion) -> dict[str, Any]:
    result = d.consensus_result
    return {
        "path": display_path(d.path),
        "title": d.title,
        "phase": d.phase,
        "status": d.status,
        "participants": d.participants,
        "votes": d.votes,
        "consensus": {"reached": result.reached, "outcome": result.outcome,
                      "blocked_by": result.blocked_by, "missing": result.missing,
                      "counts": result.counts, "reason": result.reason,
                      "advisory": result.advisory},
        "questions": d.questions,
        "decisions": d.decisions,
        "concerns": d.concerns,
        "todos": d.todos,
        "mentions": d.mentions,
    }


def status_text(d: Discussion) -> str:
    registry = d.personas
    phase = d.current_phase
    out = [f"Discussion: {d.title}", f"File: {display_path(d.path)}",
           f"Phase: {phase.id}" + (f" ({phase.title})" if phase.title != phase.id else ""),
           f"Status: {d.status}", ""]
    votes = d.votes
    result = d.consensus_result
    latest: dict[str, Any] = {}
    for c in d.current_comments():
        latest[c.author] = c
    out.append(f"Participants ({len(latest)} responded):")
    for name, comment in latest.items():
        vote = votes.get(name, "no vote") + (" (advisory)" if name in result.advisory else "")
        summary = gist(comment.body)
        out.append(f"  {name}: {vote}" + (f" - {summary}" if summary else ""))
    waiting = [n for n in d.expected_voters() if n not in latest]
    if waiting:
        out.append(f"  Waiting for: {', '.join(waiting)}")
    out.append("")
    if result.reached:
        out.append(f"Consensus: reached, {result.outcome} ({result.reason})")
    else:
        out.append(f"Consensus: not reached ({result.reason})")

    def alias_of(author: str) -> str:
        persona = registry.by_name.get(author)
        return f"@{persona.alias}" if persona else author

    sections = [
        ("Open Questions", [f"Q: {q['text']} ({alias_of(q['author'])})" for q in d.questions]),
        ("Decisions", [f"DECISION: {x['text']} ({', '.join(alias_of(a) for a in x['supporters'])})"
                       for x in d.decisions]),
        ("Concerns", [f"CONCERN: {c['text']} ({alias_of(c['author'])})" for c in d.concerns]),
        ("Action Items", [f"{t['kind']}: {t['text']} ({alias_of(t['author'])})"
                          + (" [done]" if t["status"] == "done" and t["kind"] != "DONE" else "")
                          for t in d.todos]),
    ]
    for heading, items in sections:
        if items:
            out += ["", f"{heading} ({len(items)}):"] + [f"  {item}" for item in items]
    return "\n".join(out)


def status(paths: list[str], as_json: bool) -> int:
    found = ledger_paths(paths)
    discussions = [Discussion.load(p) for p in found]
    for d in discussions:  # surface configuration errors before printing anything
        d.current_phase
        for line, message in d.warnings:
            print(f"{display_path(d.path)}:{line}: warning: {message}", file=sys.stderr)
    if as_json:
        print(json.dumps({"discussions": [status_data(d) for d in discussions]}, indent=2,
                         ensure_ascii=False))
        return 0
    if not discussions:
        print("No discussions found (looked for *.discussion.md below this folder).")
        return 0
    print("\n\n".join(status_text(d) for d in discussions))
    return 0


__all__ = ["status", "status_data", "status_text", "CascadeError"]
