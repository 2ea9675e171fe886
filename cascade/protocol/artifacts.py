"""The files a step protocol keeps beside its ledger (``artifacts:`` in the protocol; the list
is in docs/protocols.md), and the resume context a pause writes into the ledger. Each is a
pure function of the ledger, written again after every run, so it always says what the
ledger says, and ``check`` or a person can render it again and compare.
"""
from __future__ import annotations

import json
from collections import Counter

from cascade.base.atomic import write_inside
from cascade.base.errors import display_path
from cascade.base.markdown import cell, nested, sentence
from cascade.protocol.fields import (
    column_title,
    item_line,
    items_of,
    sections,
    shift_field,
    split_list,
)
from cascade.protocol.context import listed_items
from cascade.protocol.graph import graph_json, mermaid
from cascade.protocol.outcome_document import adr_draft, summary
from cascade.protocol.record import artifact_path
from cascade.protocol.runstate import Run, Turn

RESUME_LIMIT = 3000


def _names(d) -> dict[str, str]:
    return {p.alias: p.name for p in d.personas}


def _position(t: Turn) -> str:
    return t.fields.get("position") or sentence(t.body, 240)


def _order(run: Run):
    """(round, step) in the order they ran."""
    setup = {s.id for s in run.steps.setup}
    turns = sorted(run.setup.turns + run.turns, key=lambda t: t.line)
    return list(dict.fromkeys((0 if t.step in setup else t.round, t.step) for t in turns))


def _takeaway(run: Run, step, turns: list[Turn]) -> str:
    """The step's key takeaway, from its structured fields where it has them."""
    if any(f.kind == "panel" for f in step.fields) and run.setup.panel is not None:
        panel = run.setup.panel
        return (f"{len(panel.experts)} experts proposed, {len(panel.tensions)} designed "
                f"tension(s)")
    if step.confirm:
        tally = Counter(t.fields.get("verdict", "-") for t in turns)
        return "votes: " + ", ".join(f"{n} {v}" for v, n in sorted(tally.items()))
    if any(f.kind == "scores" for f in step.fields) and turns:
        t = turns[-1]
        flag = " (flagged: below the quality bar)" if t.fields.get("flagged") == "yes" else ""
        return (f"quality {t.fields.get('scores', '-')}{flag}; recommendation "
                f"{t.fields.get('recommendation', '-')}")
    if shift_field(step) is not None:
        shifts = [t.fields.get(shift_field(step), "not stated") for t in turns]
        return "position shifts: " + ", ".join(
            f"{shifts.count(v)} {v}" for v in ("major", "minor", "none", "not stated")
            if v in shifts)
    if "confidence" in {k for t in turns for k in t.fields}:
        values = sorted(float(t.fields["confidence"]) for t in turns
                        if t.fields.get("confidence", "").replace(".", "", 1).isdigit())
        if values:
            return (f"{len(turns)} positions declared; confidence {values[0]:g} to "
                    f"{values[-1]:g}")
    edges = sum(len(t.refs) for t in turns)
    return sentence(turns[-1].body, 200) + (f" ({edges} reference(s))" if edges else "")


def progress_log(d, run: Run) -> str:
    names = _names(d)
    out = [f"# Progress: {d.title}", ""]
    for round_, step_id in _order(run):
        step = run.step_of(step_id)
        if step is None:
            continue
        pool = run.setup.turns if round_ == 0 else run.turns
        turns = [t for t in pool if t.step == step_id and (round_ == 0 or t.round == round_)]
        where = "Setup" if round_ == 0 else f"Round {round_}"
        out += [f"### {where}: {step.title}", "",
                "; ".join(f"{names.get(t.alias, t.name)} ({t.msg}): {sentence(_position(t), 160)}"
                          for t in turns[:4]) + (" ..." if len(turns) > 4 else ""), "",
                f"**Key takeaway**: {_takeaway(run, step, turns)}", ""]
        for (r, s), answer in run.decisions.chosen.items():
            if r == round_ and s != step_id and _after_step(run, s, step_id):
                decided = run.steps.step(s)
                out += [f"### {where}: {decided.title if decided else s}", "",
                        f"**Key takeaway**: {answer.choice}" + (f" {answer.text}" if answer.text
                                                                else "")
                        + (" (taken automatically)" if answer.auto else f" (by {answer.by})"), ""]
    return "\n".join(out).rstrip() + "\n"


def _after_step(run: Run, decision: str, step_id: str) -> bool:
    """Whether the decision point ``decision`` comes right after step ``step_id``."""
    for group in (run.steps.setup, run.steps.round_steps):
        ids = [s.id for s in group]
        if decision in ids and step_id in ids:
            before = [s for s in group[:ids.index(decision)] if not s.decision]
            return bool(before) and before[-1].id == step_id
    return False


def position_evolution(d, run: Run) -> str:
    names = _names(d)
    first = run.steps.round_steps[0].id
    out = [f"# Position evolution: {d.title}", ""]
    for alias in run.members:
        out += [f"## {names.get(alias, alias)} (@{alias})", ""]
        mine = [t for t in run.turns if t.alias == alias]
        for t in mine:
            if t.step == first:
                conf = f" (confidence {t.fields['confidence']})" if "confidence" in t.fields else ""
                out.append(f"- Round {t.round}, declared ({t.msg}): {_position(t)}{conf}")
            name = shift_field(run.step_of(t.step))
            if name is None:
                continue
            shift = t.fields.get(name)
            if shift is None:  # recorded as absent: the reply did not say
                out.append(f"- Round {t.round}, shift not stated ({t.msg})")
                continue
            triggers = [m for kind, m in t.refs if kind == "responds_to"]
            moved = ""
            if shift != "none":
                before = t.fields.get("previousPosition", "")
                after = t.fields.get("currentPosition", "") or sentence(t.body, 200)
                moved = f": {before or '(earlier position)'} -> {after}"
            out.append(f"- Round {t.round}, {'no' if shift == 'none' else shift} shift "
                       f"({t.msg}){moved}"
                       + (f"; triggered by {', '.join(triggers)}" if triggers else
                          "; no trigger it was shown" if shift != "none" else ""))
            if t.fields.get("shiftReason") and shift != "none":
                out.append(f"  - why: {t.fields['shiftReason']}")
        if not mine:
            out.append("- (no turn yet)")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def _synthesis_turn(run: Run) -> Turn | None:
    ids = {s.id for s in run.steps.after if not s.confirm and not s.decision}
    found = [t for t in run.turns if t.step in ids]
    return found[-1] if found else None


def _listed(run: Run, t: Turn, name: str) -> list[str]:
    """A list field of a turn, one line an item: an items field's values (`` -- `` between,
    the empty ones left out)."""
    step = run.step_of(t.step)
    f = next((f for f in step.fields if f.name == name), None) if step is not None else None
    if f is not None and f.kind == "items":
        return [" -- ".join(" ".join(v) if isinstance(v, list) else v for v in r.values() if v)
                for r in items_of(f, t.fields.get(name, ""))]
    return split_list(t.fields.get(name, ""))


def open_questions(d, run: Run) -> str:
    synthesis = _synthesis_turn(run)
    listed = _listed(run, synthesis, "openQuestions") if synthesis else []
    out = [f"# Open questions: {d.title}", "", "## After the synthesis", ""]
    out += ([f"- {q}" for q in listed] or ["- (none listed yet)"]) + [""]
    for round_ in sorted({t.round for t in run.turns}):
        items = [q for t in run.turns if t.round == round_ and t.step not in
                 {s.id for s in run.steps.after}
                 for q in split_list(t.fields.get("openQuestions", ""))]
        if items:
            out += [f"## Left open by round {round_}", ""] + [f"- {q}" for q in items] + [""]
    return "\n".join(out).rstrip() + "\n"


def synthesis_md(d, run: Run) -> str:
    names = _names(d)
    synthesis = _synthesis_turn(run)
    out = [f"# Synthesis: {d.title}", "",
           f"Mode: {run.terms.mode or '-'}; rounds: {run.round}; outcome: {run.outcome or 'open'}; "
           f"ledger: `{d.path.name}`", ""]
    if run.setup.panel is not None:
        out += ["## The panel", "", f"Problem: {run.setup.panel.problem}", ""]
        out += [f"- {e.name} (@{e.id}): {', '.join(e.expertise) or '-'}"
                for e in run.setup.panel.experts]
        out += [f"- Tension @{t.a} vs @{t.b}: {t.axis}" for t in run.setup.panel.tensions] + [""]
    out += ["## Synthesis", ""]
    if synthesis is not None:
        data = synthesis_data(d, run)
        out += [(f"By {synthesis.name} ({synthesis.msg}); cites "
                 f"{', '.join(m for _, m in synthesis.refs) or 'no message'}."), ""]
        out += _data_md(run.step_of(synthesis.step), data)
        if data.get("account"):
            out += ["### The account", "", nested(str(data["account"])), ""]
    else:
        out += ["_(not yet written)_", ""]
    vote = next((s for s in run.steps.after if s.confirm), None)
    votes = [t for t in run.turns if vote is not None and t.step == vote.id]
    if votes:
        out += ["## Closing vote", "", "| Member | Vote | Reason |", "|---|---|---|"]
        out += [f"| {cell(names.get(t.alias, t.name), '-')} | {t.fields.get('verdict', '-')} | "
                f"{cell(sentence(t.body, 200), '-')} |" for t in votes] + [""]
    graph = artifact_path(d.path, "argument-graph").name
    out += ["## Argument graph", "", f"Who answered whom (`{graph}`):", "", mermaid(run)]
    return "\n".join(out).rstrip() + "\n"


def synthesis_data(d, run: Run) -> dict:
    """The synthesis as data (``x.synthesis.json``; ``x.synthesis.md`` renders the same): its
    step's fields by kind, and its comment as ``account`` (less the sections the tool added)."""
    synthesis = _synthesis_turn(run)
    out: dict = {"title": d.title, "mode": run.terms.mode, "rounds": run.round,
                 "outcome": run.outcome}
    if synthesis is None:
        return out
    step = run.step_of(synthesis.step)
    out.update({"by": synthesis.name, "msg": synthesis.msg})
    for f in step.fields if step is not None else ():
        value = synthesis.fields.get(f.name, "")
        if f.kind == "items":
            out[f.name] = items_of(f, value)
        elif f.refs:
            out[f.name] = [m for kind, m in synthesis.refs if kind == (f.edge or f.name)]
        elif f.kind == "list":
            out[f.name] = split_list(value)
        else:
            out[f.name] = value
    if "positionEvolution" in out and not out["positionEvolution"]:
        out["positionEvolution"] = journeys(run)  # the historian gave none: the ledger's
    account = synthesis.body
    for section in reversed(sections(step.fields if step is not None else (),
                                     synthesis.fields, {})):  # the last added, first
        account = account.rstrip().removesuffix(section)
    out["account"] = account.strip()
    return out


def journeys(run: Run) -> list[dict]:
    """Each member's positions from the ledger, in the seed's ``positionEvolution`` shape: its
    declared position, each position a shift moved it to, and the messages that triggered them."""
    first = run.steps.round_steps[0].id if run.steps.round_steps else ""
    out = []
    for alias in run.members:
        journey: list[str] = []
        turning: list[str] = []
        for t in (t for t in run.turns if t.alias == alias):
            name = shift_field(run.step_of(t.step))
            if t.step == first and not journey:
                journey.append(_position(t))
            elif name is not None and t.fields.get(name) not in (None, "none"):
                journey.append(t.fields.get("currentPosition") or sentence(t.body, 200))
                turning += [m for kind, m in t.refs if kind == "responds_to"]
        out.append({"expert": alias, "journey": journey,
                    "keyTurningPoints": list(dict.fromkeys(turning))})
    return out


def synthesis_json(d, run: Run) -> str:
    return json.dumps(synthesis_data(d, run), indent=2, ensure_ascii=False) + "\n"


def _data_md(step, data: dict) -> list[str]:
    """The synthesis's fields as markdown sections, in the order its step declares them."""
    out: list[str] = []
    for f in step.fields if step is not None else ():
        value = data.get(f.name)
        if f.refs or not value:
            continue
        out += [f"### {column_title(f.name)}", ""]
        if f.kind == "items":
            out += [item_line(f, r) for r in value]
        elif isinstance(value, list):
            out += [f"- {x}" for x in value]
        else:
            out.append(str(value))
        out.append("")
    return out


def resume_context(d, run: Run) -> str:
    """What a later run (or a person) needs to pick the discussion up, from the ledger alone,
    in at most RESUME_LIMIT characters."""
    names = _names(d)
    last = run.pauses.pausing or run.round
    out = ["## Theme", "", d.title]
    if run.setup.panel is not None:
        out.append(f"Problem: {run.setup.panel.problem}")
    out += ["", "## Progress", ""]
    for r in range(1, last + 1):
        quality = [t for t in run.turns if t.round == r and "scores" in t.fields]
        gist = sentence(quality[-1].body, 200) if quality else "-"
        out.append(f"- Round {r}: {gist}")
    out += ["", "## Current positions", ""]
    for alias in run.members:
        mine = [t for t in run.turns if t.alias == alias]
        current = next((t.fields.get("currentPosition") for t in reversed(mine)
                        if t.fields.get("currentPosition")), None)
        if current is None and mine:
            current = _position(mine[0])
        out.append(f"- {names.get(alias, alias)}: {current or '(none yet)'}")
    quality = [t for t in run.turns if "scores" in t.fields]
    if quality:
        q = quality[-1]
        out += ["", "## Active disagreements", ""]
        out += [f"- {x}" for x, _ in listed_items(run, q, "disagreements")
                if "disagreements" in q.fields] or ["- (none listed)"]
        out += ["", "## Open questions", ""]
        out += [f"- {x}" for x in split_list(q.fields.get("openQuestions", ""))] or ["- (none listed)"]
        out += ["", "## Next", "", f"Recommendation: {run.recommendation(last) or '-'}"]
        out += ["", "## Quality trajectory", "",
                ", ".join(f"round {t.round}: {t.fields['scores'].rsplit(':', 1)[-1]}/5"
                          + (" (flagged)" if t.fields.get("flagged") == "yes" else "")
                          for t in quality)]
    text = "\n".join(out).strip()
    return text if len(text) <= RESUME_LIMIT else text[:RESUME_LIMIT - 4].rstrip() + " ..."


RENDER = {"synthesis": synthesis_md, "synthesis-json": synthesis_json,
          "open-questions": open_questions, "position-evolution": position_evolution,
          "progress": progress_log, "summary": summary, "adr-draft": adr_draft,
          "argument-graph": lambda _d, run: graph_json(run)}


def render_artifacts(d, run: Run) -> dict[str, str]:
    """Each declared artifact's text, as the ledger says now; one not due yet (an output
    document before the outcome, or not the one asked for) is left out."""
    texts = {name: RENDER[name](d, run) for name in run.steps.artifacts}
    return {name: text for name, text in texts.items() if text is not None}


def write_artifacts(d, run: Run) -> list[str]:
    """Write the declared artifacts beside the ledger (atomically, never through a link);
    the paths written, as shown to a person."""
    written = []
    for name, text in render_artifacts(d, run).items():
        path = artifact_path(d.path, name)
        write_inside(d.root, path, text.encode("utf-8"), "an artifact", durable=False)
        written.append(display_path(path))
    return written
