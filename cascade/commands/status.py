from __future__ import annotations

import contextlib
import json
import shlex
import sys
from pathlib import Path
from collections.abc import Mapping
from typing import Any

from cascade.commands._common import find_ledgers
from cascade.base.errors import display_path
from cascade.base.gitio import index_blobs
from cascade.ledger.records import DRIFT_REVIEW
from cascade.check.attribution import knowing_authors as knowing
from cascade.check.governance import open_discussion
from cascade.protocol.about import about, impasse
from cascade.protocol.discussion import Discussion
from cascade.protocol.engine import question
from cascade.protocol.finding_life import closed_listing, listing
from cascade.protocol.record import artifact_paths
from cascade.protocol.sum_file import gist
from cascade.protocol.verdict import gate
from cascade.base.revision import blob_id
from cascade.base.safepath import read_inside
from cascade.base.text import json_printable, printable


def gate_view(d: Discussion, staged: Mapping[str, str] | None = None) -> dict[str, Any] | None:
    """The gate's verdict for a governed ledger's document as it stands in the index (what a
    commit would hold), or None when no rule governs the ledger. ``staged``: the index's
    blobs by path, read once for many ledgers (``index_blobs``); None: read here."""
    if not d.governed or not d.source:
        return None
    root = d.root  # a governed ledger is read under its repository's top (open_at)
    revision = (staged if staged is not None else index_blobs(root, [d.source])).get(d.source)
    if revision is None:
        with contextlib.suppress(OSError):
            revision = blob_id(read_inside(root, d.source, "the document", where=d.path,
                                           line=d.source_line))
    verdict = gate(d.state, revision, d.source)
    return {"ok": verdict.ok, "reason": verdict.reason, "document": d.source,
            "revision": revision, "rule": d.authority.rule, "kind": verdict.kind,
            "awaited": list(verdict.awaited), "holding": list(verdict.holding),
            "ways_out": verdict.ways_out(d.source),
            "effects": {f.id: verdict.effect(f) for f in verdict.findings}}


def knowing_authors(d: Discussion) -> Discussion:
    """A governed ledger as a commit made now would hold it, its decisions and people's votes
    held to who added them -- as the hook and ``check`` hold them (cascade.check.attribution)."""
    if not d.governed:
        return d
    try:
        rel = Path(d.path).resolve().relative_to(d.root.resolve()).as_posix()
    except ValueError:
        return d
    return knowing(d.root, rel, d)


def vote_label(d: Discussion, name: str) -> str:
    s = d.state
    if name in s.votes:
        return s.votes[name] + (" (advisory)" if name in s.result.advisory else "") + (
            f" ({s.weighed[name]})" if name in s.weighed else "")
    if name in s.result.advisory:
        return f"{s.result.advisory[name]} (" + s.weighed.get(name, "advisory") + ")"
    for item in reversed(s.discounted):
        if item.author == name:
            vote = next((c.vote for c in s.current if c.line == item.line), None)
            return f"{vote or 'no vote'} (not counted: {item.reason})"
    run = s.run
    if run.verdict is not None:  # what the outcome rule counted of it
        verdict = next((v for a, v in run.verdict.counted.items() if run.name_of(a) == name),
                       None)
        if verdict is not None:
            return f"verdict {verdict}"
    return "no vote"


def protocol_view(d: Discussion) -> dict[str, Any]:
    """Where the discussion's protocol stands: ``protocol``, ``round``, ``outcome`` (READY,
    CHANGES, REJECT, IMPASSE, WAITING, or null while it runs), ``waiting_for`` (the open
    decision point's question, or null) and ``artifacts`` (files beside the ledger);
    ``conclusion``: the outcome in force, and how it came (what the rounds reached, the
    decision that supersedes it: cascade.protocol.state.Conclusion)."""
    run, said = d.state.run, d.state.conclusion
    waiting = None
    # a protocol of phases has no rounds; its outcome is its votes' (the consensus)
    round_ = run.round if run.steps.shape.own_rounds else None
    outcome = said.outcome
    if run.deciding and said.decision is None:
        outcome, waiting = "WAITING", question(run)
    if outcome == "IMPASSE":
        target = shlex.quote(d.source or display_path(d.path))
        waiting = (f"impasse after {run.round} rounds: which way? cascade decide {target} "
                   "READY|REJECT --reason '...'")
    files = artifact_paths(d.path, d.protocol.steps)
    return {"protocol": d.protocol.name, "round": round_, "outcome": outcome,
            "waiting_for": waiting, "conclusion": said.as_dict(),
            "artifacts": [display_path(p) for p in files if p.is_file()]}


def status_data(d: Discussion, staged: Mapping[str, str] | None = None) -> dict[str, Any]:
    """What ``status --json`` says of ``d`` (``staged``: as ``gate_view`` takes it)."""
    s = d.state
    result = s.result
    return {
        "path": display_path(d.path), "title": d.title, "objective": d.objective or None,
        "phase": d.phase, "status": d.status, "governed_by": d.authority.rule,
        "header_differences": d.header_differences(),
        "participants": d.participants, "votes": d.votes,
        "consensus": {"reached": result.reached, "outcome": result.outcome,
                      "blocked_by": result.blocked_by, "missing": result.missing,
                      "counts": result.counts, "reason": result.reason,
                      "advisory": result.advisory},
        "decision": s.decision.as_dict() if s.decision else None,
        "decision_history": [x.as_dict() for x in s.decisions],
        "not_counted": [x.as_dict() for x in s.discounted],
        "forged": [x.as_dict() for x in s.forged],
        "unfounded": [x.as_dict() for x in s.unfounded],
        "failures": [x.as_dict() for x in s.failures],
        "gate": gate_view(d, staged),
        **protocol_view(d),
        "questions": d.questions, "answers": d.answers, "decisions": d.decisions,
        "concerns": d.concerns, "findings": [f.as_dict() for f in d.findings],
        "drift_reviews": drift_reviews(d), "todos": d.todos, "mentions": d.mentions,
    }


def status_text(d: Discussion, verbose: bool = False) -> str:
    out = _heading(d) + [""] + _responses(d, verbose) + [""] + _verdict(d)
    for heading, items in _item_sections(d):
        if items:
            count = sum(1 for item in items if not item.startswith("  "))
            out += ["", f"{heading} ({count}):"] + [f"  {item}" for item in items]
    return "\n".join(out)


def _heading(d: Discussion) -> list[str]:
    """The discussion, its file, phase and status, the rule that governs it, and where its
    protocol's run stands."""
    phase = d.current_phase
    title = d.protocol.phase_title(phase)
    out = [f"Discussion: {d.title}", *([f"Objective: {d.objective}"] if d.objective else []),
           f"File: {display_path(d.path)}",
           f"Phase: {phase}" + (f" ({title})" if title != phase else ""),
           f"Status: {d.status}"]
    if d.authority.rule:
        out.append(f"Governed by: {d.authority.rule}")
        if differs := d.header_differences():
            out.append(f"  (its header differs in {', '.join(differs)}: the rule decides)")
    view = protocol_view(d)
    run, said = d.state.run, d.state.conclusion
    if run.steps.shape.own_rounds:  # else its phase and votes, below
        where = (f"concluded, {said.said}" if said.outcome else
                 f"step {run.step.title}, waiting for {', '.join(run.waiting)}" if run.step
                 else "-")
        out.append(f"Protocol: {d.protocol.name}, round {run.round}: {where}")
        if view["waiting_for"]:
            out.append(f"  Waiting for a person: {view['waiting_for']}")
            told = about(run, d.personas)  # what it is about, and what each choice does
            lines = told.lines()[1:] if told is not None else [f"  {x}" for x in impasse(run)]
            out += [f"  {line}" for line in lines]
        out += [f"  Artifact: {path}" for path in view["artifacts"]]
    return out


def _responses(d: Discussion, verbose: bool) -> list[str]:
    """Who responded in the current phase and how they vote (``verbose``: the first lines
    of each one's latest comment), who is awaited, who failed to answer, people's
    decisions."""
    s = d.state
    latest = {c.author: c for c in d.responses()}
    out = [f"Participants ({len(latest)} responded):"]
    for name, comment in latest.items():
        summary = gist(comment.body)
        if verbose:  # the latest comment's first lines, not only its gist
            out.append(f"  {name}: {vote_label(d, name)} (line {comment.line})")
            out += [f"    {line}" for line in first_lines(comment.body)]
            continue
        out.append(f"  {name}: {vote_label(d, name)}" + (f" - {summary}" if summary else ""))
    if waiting := [n for n in d.expected_voters() if n not in latest]:
        out.append(f"  Waiting for: {', '.join(waiting)}")
    for failure in s.failures:
        out.append(f"  {failure.author}: did not answer for this revision ({failure.reason}, "
                   f"line {failure.line}): it blocks until it answers")
    for item in s.decisions:
        state = "in force" if item.in_force else f"not in force: {item.note}"
        out.append(f"  Decision by {item.by}: {item.vote} ({state}) - {gist(item.reason)}")
    for review in {r["author"]: r for r in drift_reviews(d)}.values():  # each one's latest
        out.append(f"  Drift review by {review['author']} (line {review['line']}, advisory): "
                   f"{review['answer']} - {review['gist']}")
    return out


def drift_reviews(d: Discussion) -> list[dict[str, Any]]:
    """The drift reviews in the ledger (cascade.loop.driftreview), oldest first: who, where,
    the answer and its gist. Advisory: none is a vote."""
    return [{"author": c.author, "line": c.line,
             "answer": c.provenance.get("drift", "UNCLEAR"), "gist": gist(c.body)}
            for c in d.ledger.comments if c.provenance.get("step") == DRIFT_REVIEW
            and c.origin == "ai"]


def _verdict(d: Discussion) -> list[str]:
    """Consensus, the gate, and the blocks and events that are not believed."""
    s = d.state
    result = s.result
    reached = f"reached, {result.outcome}" if result.reached else "not reached"
    out = [f"Consensus: {reached} ({result.reason})"]
    view = gate_view(d)
    if view is not None:
        out.append(f"Gate for {view['document']}: {'ok' if view['ok'] else 'blocked'}: "
                   f"{view['reason']}")
        if view["ways_out"]:
            out.append(f"  ways out: {view['ways_out']}")
    if s.forged:
        out += ["", f"Not written by cascade ({len(s.forged)}; they never count):"]
        out += [f"  line {x.line}: {x.author}: {x.reason}" for x in s.forged]
    if s.unfounded:
        out += ["", f"Events that do not hold ({len(s.unfounded)}; not believed):"]
        out += [f"  line {x.line}: {x.kind}: {x.reason}" for x in s.unfounded]
    return out


def _item_sections(d: Discussion) -> list[tuple[str, list[str]]]:
    """The questions, answers, decisions, concerns and action items, each section's lines
    (an indented line continues the one above), personas named by alias."""
    registry = d.personas

    def alias_of(author: str) -> str:
        persona = registry.of_author(author)
        return f"@{persona.alias}" if persona else author

    questions = d.questions
    answered: list[str] = []
    for q in questions:
        if q["status"] == "answered":
            answered.append(f"{q['id']}: {q['text']} ({alias_of(q['author'])})")
            answered += [f"  A: {a['text']} ({alias_of(a['author'])})" for a in q["answers"]]
    stray = [f"A: {a['text']} ({alias_of(a['author'])}, line {a['line']})"
             for a in d.answers if a["question"] is None]
    return [
        ("Open Questions", [f"{q['id']}: {q['text']} ({alias_of(q['author'])})"
                            for q in questions if q["status"] == "open"]),
        ("Answered Questions", answered),
        ("Answers to no question", stray),
        ("Decisions", [f"DECISION: {x['text']} ({', '.join(alias_of(a) for a in x['supporters'])})"
                       for x in d.decisions]),
        ("Concerns", [f"CONCERN: {c['text']} ({alias_of(c['author'])})" for c in d.concerns]),
        ("Open Findings", listing(d.findings, alias_of)),
        ("Closed Findings", closed_listing(d.findings, alias_of)),
        ("Markers naming no finding", [f"line {x.line}: {x.reason}" for x in d.state.strays]),
        ("Action Items", [_todo_line(t, alias_of) for t in d.todos
                          if t["kind"] != "DONE" or t["item"] is None]),
    ]


def _todo_line(t: dict[str, Any], alias_of) -> str:
    """``T1 TODO: text (@architect) [done by Rob]``; a DONE that closed no item on its own."""
    if t["kind"] == "DONE":
        return f"DONE: {t['text']} ({alias_of(t['author'])})"
    line = f"{t['id']} {t['kind']}: {t['text']} ({alias_of(t['author'])})"
    if t["done"] is not None:
        line += f" [done by {alias_of(t['done']['author'])}]"
    return line


VERBOSE_LINES = 3  # of each participant's latest comment, with --verbose
VERBOSE_WIDTH = 100


def first_lines(body: str, count: int = VERBOSE_LINES, width: int = VERBOSE_WIDTH) -> list[str]:
    """A comment's first non-blank lines, each cut to ``width``; "..." when more follow."""
    lines = [line.rstrip() for line in body.strip().splitlines() if line.strip()]
    out = [line if len(line) <= width else line[:width - 3] + "..." for line in lines[:count]]
    if len(lines) > count:
        out.append("...")
    return out


def latest_comments(d: Discussion) -> dict[str, str]:
    """Each participant's latest comment of the current revision (--verbose, and --json with it)."""
    return {c.author: c.body.strip() for c in d.responses()}


def status(paths: list[str], as_json: bool, verbose: bool = False) -> int:
    """Print the discussions' state. Titles, names, excerpts, reasons come from ledgers
    (written by hand, by models, by older versions): what is printed passes through
    cascade.base.text (printable, json_printable), so no control character reaches the terminal."""
    found = [Path(p) for p in paths] if paths else list(find_ledgers(Path(".")))
    discussions = [knowing_authors(open_discussion(p)) for p in found]
    for d in discussions:  # surface configuration errors before printing anything
        d.current_phase
        for line, message in d.warnings:
            print(printable(f"{display_path(d.path)}:{line}: warning: {message}"),
                  file=sys.stderr)
    if as_json:
        data = [status_data(d) | ({"latest": latest_comments(d)} if verbose else {})
                for d in discussions]
        print(json_printable(json.dumps({"discussions": data}, indent=2, ensure_ascii=False)))
        return 0
    if not discussions:
        print("No discussions found (looked for *.discussion.md below this folder).")
        return 0
    print(printable("\n\n".join(status_text(d, verbose) for d in discussions)))
    return 0

