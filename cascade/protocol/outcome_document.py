"""The document a concluded discussion leaves for the work that follows (seed 003's public
original: the roundtable's output), beside its ledger: ``x.summary.md`` or, when the last
synthesis asked for one (the field its step reads as ``output``: ``adr``), ``x.adr-draft.md``
for a person to review and adopt. Derived from the ledger alone; nothing is written before
the outcome, and only the one the synthesis asked for.
"""
from __future__ import annotations

from cascade.base.markdown import cell, nested, sentence
from cascade.protocol.fields import split_list
from cascade.protocol.runstate import Run, Turn


def _asked(run: Run) -> str:
    """The document the last synthesis asked for: ``adr`` or ``summary`` (the default)."""
    given = next((run.read(t, "output") for t in reversed(run.turns) if run.read(t, "output")),
                 "")
    return "adr" if given == "adr" else "summary"


def _items(run: Run, what: str, turns: list[Turn]) -> list[str]:
    return list(dict.fromkeys(item for t in turns for item in split_list(run.read(t, what))))


def _open(run: Run) -> list[str]:
    """The conflicts the last synthesis left open."""
    last = [t for t in run.turns if run.read(t, "next_action")][-1:]
    resolved = {c.split(":", 1)[0].strip() for c in _items(run, "resolved", last)}
    return [c for c in _items(run, "conflicts", last) if c.split(":", 1)[0].strip()
            not in resolved]


def _recommended(run: Run) -> str:
    return next((run.read(t, "recommendation") for t in reversed(run.turns)
                 if run.read(t, "recommendation") and run.read(t, "next_action")), "")


def _final(run: Run) -> list[tuple[str, str, str]]:
    """Each member's last position and confidence: (name, position, confidence)."""
    out = []
    for alias in run.members:
        mine = [t for t in run.turns if t.alias == alias and run.read(t, "position")]
        last = mine[-1] if mine else None
        out.append((run.name_of(alias), run.read(last, "position") if last else "-",
                    run.read(last, "confidence") if last else "-"))
    return out


def _head(d, run: Run) -> list[str]:
    strategy = run.steps.strategy.title if run.steps.strategy else run.steps.name
    return [f"Ledger: `{d.path.name}`; {strategy}, {run.round} round(s); outcome "
            f"{run.outcome}" + (f": {run.why}" if run.why else ""), ""]


def _bullets(items: list[str], empty: str) -> list[str]:
    return [f"- {i}" for i in items] or [empty]


def summary(d, run: Run) -> str | None:
    """``x.summary.md`` once the discussion concluded, when no ADR draft was asked for."""
    if run.outcome is None or _asked(run) != "summary":
        return None
    syntheses = [t for t in run.turns if run.read(t, "next_action")]
    out = [f"# Summary: {d.title}", ""] + _head(d, run)
    out += ["## Key decisions", ""] + _bullets(_items(run, "consensus", syntheses), "_(none)_")
    out += ["", "## Unresolved items", ""] + _bullets(_open(run), "_(none)_")
    rec = _recommended(run)
    out += ["", "## Recommendation", "", nested(run.steering.conclusion or rec or "_(none given)_")]
    out += ["", "## Participants", "", "| Participant | Final position | Confidence |",
            "|---|---|---|"]
    out += [f"| {cell(n)} | {cell(p)} | {c or '-'} |" for n, p, c in _final(run)]
    return "\n".join(out) + "\n"


def adr_draft(d, run: Run) -> str | None:
    """``x.adr-draft.md`` once the discussion concluded, when the last synthesis asked for
    one: a proposed decision record a person reviews before it becomes an ADR."""
    if run.outcome is None or _asked(run) != "adr":
        return None
    syntheses = [t for t in run.turns if run.read(t, "next_action")]
    decision = run.steering.conclusion or _recommended(run) or "_(no recommendation given)_"
    agreed = _items(run, "consensus", syntheses)
    status = "Proposed: a draft from the roundtable, for a person to review, edit and adopt."
    out = [f"# {d.title}", "", "## Status", "", status, ""] + _head(d, run)
    questions = [sentence(t.body, 300) for t in run.turns if t.step == run.steps.round_steps[0].id]
    out += ["## Context", "", f"{d.title}", ""]
    out += _bullets([f"Round {i}: {q}" for i, q in enumerate(questions, 1)], "")
    out += ["", "## Decision", "", nested(decision)]
    if agreed:
        out += ["", "Agreed:", ""] + _bullets(agreed, "")
    out += ["", "## Options considered", ""]
    out += [f"- {n}: {p}" for n, p, _ in _final(run)]
    out += [f"- Contested: {c}" for c in _items(run, "conflicts", syntheses)]
    last = [t for t in run.turns if t.round == run.round and run.read(t, "concerns")]
    out += ["", "## Consequences", ""] + _bullets(
        _items(run, "concerns", last), "_(no concern raised in the last round)_")
    open_ = _open(run)
    if open_:
        out += ["", "Still open:", ""] + _bullets(open_, "")
    return "\n".join(out) + "\n"
