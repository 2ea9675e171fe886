"""What a persona's turn writes: a reply's block (its fields, citations, sections, a proposed
panel), the tables a step asks for, and the record and graph written when it concludes."""
from __future__ import annotations

import datetime as _dt

from cascade.base.atomic import atomic_write, write_inside
from cascade.base.errors import display_path
from cascade.ledger.records import VOTES
from cascade.base.markdown import cell, sentence
from cascade.protocol.discussion import Discussion
from cascade.protocol.fields import (
    FIELD_KINDS,
    LIST_SEP,
    column_title,
    given,
    join_list,
    read_fields,
    reference_item,
    sections,
)
from cascade.protocol.graph import graph_json
from cascade.protocol.loader import role_personas
from cascade.protocol.panel import fallback_panel, panel_events, parse_panel
from cascade.protocol.record import artifact_path, record_path, render_record
from cascade.protocol.registry import TARGETS, shared_terms
from cascade.protocol.runstate import Request, Run
from cascade.protocol.visibility import VISIBILITIES
from cascade.turns.replies import Reply

TOOL = "Cascade"  # the author of the blocks the tool writes itself (tables)


def cited(request: Request, reply: Reply) -> tuple[list[str], list[str]]:
    """The typed references a reply cites, each a message the persona was shown (its view
    and its target); (references, notes on the ones dropped)."""
    notes: list[str] = []
    refs = list(dict.fromkeys(f"{edge}:{msg}" for _, msg, edge, _ in
                              _citations(request, reply, notes)))
    if len(refs) < request.step.min_refs:
        notes.append(f"cites {len(refs)} message(s) it was shown; the step asks for at least "
                     f"{request.step.min_refs}")
    return refs, notes


def _citations(request: Request, reply: Reply, notes: list[str]):
    """Each cited message a reply's refs fields give, shown to the persona and of a relation
    the field takes: (field, id, edge, comment); the rest dropped with a note."""
    shown = {t.msg for t in request.shown} | ({request.target.msg} if request.target else set())
    extra = {str(k).lower(): v for k, v in reply.extra.items()}
    out = []
    for f in request.step.fields:
        if not f.refs:
            continue
        value = given(f, extra)
        items = value if isinstance(value, list) else (
            str(value).replace(",", " ").split() if isinstance(value, str) else [])
        for msg, relation, why in map(reference_item, items):
            edge = f.edge or f.name
            if f.kind == "references":
                edge = relation
                if edge not in (f.choices or ()):
                    notes.append(f"{f.name} {msg[:40]!r} dropped: relation {relation[:20]!r} "
                                 f"is not one of {', '.join(f.choices or ())}")
                    continue
            if msg in shown:
                out.append((f, msg, edge, why))
            elif msg:
                notes.append(f"{f.name} {msg[:40]!r} dropped: not a message it was shown")
    return out


def explained(request: Request, reply: Reply) -> dict[str, str]:
    """What the ``references`` fields stamp: each kept citation as ``<relation> <id>: <why>``
    (`` | `` between), so the ledger keeps why each message was cited."""
    out: dict[str, list[str]] = {}
    for f, msg, edge, why in _citations(request, reply, []):
        if f.kind == "references":
            out.setdefault(f.name, []).append(join_list(
                f"{edge.replace('_', ' ')} {msg}" + (f": {why}" if why else "")))
    return {name: LIST_SEP.join(items) for name, items in out.items()}


def fields_of(request: Request, reply: Reply | None) -> tuple[dict[str, str], list[str]]:
    """The step's fields from a reply, each read by its kind (cascade.protocol.fields), with
    notes; a confirmation's vote becomes ``verdict``. References: see ``cited``."""
    values, notes = read_fields(request.step.fields, reply, request.shown)
    if request.step.confirm and ballot_of(request.step) is None:
        values["verdict"] = values.pop("vote", "REJECT")
    return values, notes


def ballot_of(step):
    """A phase's vote (a ``ballot`` field): the reply's own vote, on the block's ``VOTE:``
    line; None for any other step."""
    return next((f for f in step.fields if f.kind == "ballot"), None)


def ledger_vote(step, verdict: str) -> tuple[str | None, str]:
    """What a turn's verdict writes: a ``VOTE:`` line when its step asks for the ledger's own
    words (READY, CHANGES, REJECT), else no vote and a line of the body that gives the answer
    as it was asked (a confirmation's ACCEPT or REJECT of a synthesis)."""
    asked = next((f.choices for f in step.fields if f.name in ("vote", "verdict")
                  and f.choices), None) or ()
    if asked and not set(asked) <= set(VOTES):
        return None, f"**{step.title}:** {verdict}"
    return (verdict if verdict in VOTES else "READY" if verdict == "ACCEPT" else "REJECT"), ""


def reply_budget(words: int) -> int:
    """Max tokens for a reply of at most ``words`` words in its comment: ~1.5 tokens a word
    and room for the JSON around it and its other fields."""
    return int(words * 1.5) + 200


def refs_text(request: Request, citations: list[str]) -> str | None:
    refs = list(citations)
    if request.target is not None:
        refs.append(f"counters:{request.target.msg}")
    if VISIBILITIES.has(request.step.visibility, "responds") and request.shown:
        refs.append(f"responds_to:{request.shown[-1].msg}")
    return ",".join(refs) or None


# The cells' widths (the reply's first sentence, its other fields) a table tries, widest first
_WIDTHS = ((160, 120), (120, 90), (90, 60), (60, 40), (40, 24), (24, 16))


def table(run: Run, step_id: str, column: str, names: dict[str, str], round_: int) -> str:
    """The step's replies of ``round_`` as a markdown table: participant, the reply's first
    sentence (or the field named like the column), and its other fields; a field kind that
    aggregates replies (a peer ranking) gives its own table. At most as long as the round's
    summary (``rounds: carry``), its cells cut shorter as needed, every participant in it."""
    step = run.steps.step(step_id)
    for f in step.fields if step is not None else ():
        kind = FIELD_KINDS.behaviour(f.kind or "text")
        made = kind.fn.table(run, step_id, round_, f, names) if (
            kind is not None and kind.fn.table is not None) else None
        if made:
            return made
    cap = run.steps.rounds.carry
    for widths in _WIDTHS:
        text = _table(run, step_id, column, names, round_, widths)
        if not cap or len(text) <= cap:
            return text
    return text[:cap - 3].rstrip() + "..."


def _table(run: Run, step_id: str, column: str, names: dict[str, str], round_: int,
           widths: tuple[int, int]) -> str:
    """The table of ``table``, its cells at most ``widths`` characters."""
    turns = run.of(round_, step_id)
    own = next((k for t in turns for k in t.fields if k.lower() == column.lower()), None)
    extra = sorted({k for t in turns for k in t.fields if k != own})
    head = ["Participant", column] + [column_title(k) for k in extra]
    rows = [head, ["---"] * len(head)]
    for t in turns:
        first = t.fields.get(own) if own else None
        cells = [names.get(t.alias, t.name), sentence(first or t.body, widths[0])] + [
            sentence(t.fields.get(k, ""), widths[1]) for k in extra]
        rows.append([c.replace("|", "\\|").replace("\n", " ") for c in cells])
    return "\n".join(["| " + " | ".join(r) + " |" for r in rows]
                     + agreement(run, step_id, names, round_))


def agreement(run: Run, step_id: str, names: dict[str, str], round_: int) -> list[str]:
    """Under the table of a round's first step whose positions a later step answers
    (``target:``): what every position names (agreed), and the divergent views the later
    step answers -- each speaker and the position its target rule gives it."""
    later = next((s for s in run.steps.round_steps if s.target is not None), None)
    turns = run.of(round_, step_id)
    if later is None or step_id != run.steps.round_steps[0].id or len(turns) < 2:
        return []
    shared = shared_terms([t.body for t in turns])
    pairs = []
    for t in turns:
        other = TARGETS.call(later.target, t.alias, turns)
        if other is not None:
            pairs.append(f"{names.get(t.alias, t.name)} answers "
                         f"{names.get(other.alias, other.name)}")
    return ["", "**Agreed** (named in every position): " + (", ".join(shared) if shared
                                                           else "nothing yet"),
            f"**Divergent** (answered in {later.title}): " + "; ".join(pairs)]


def record_time() -> str:
    """Now, as the record's header gives a conclusion's date and time (UTC)."""
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def write_record(d: Discussion, run: Run, when: str) -> str:
    """Write ``x.record.md`` beside the ledger (atomically, never through a link)."""
    path = record_path(d.path)
    write_inside(d.root, path, render_record(d, run, when).encode("utf-8"),
                 "the discussion record")
    if "argument-graph" in run.steps.artifacts:
        atomic_write(artifact_path(d.path, "argument-graph"), graph_json(run).encode("utf-8"))
    return display_path(path)


def with_sections(request: Request, body: str, fields: dict[str, str], reply: Reply) -> str:
    """The block's body with what the tool read from the structured fields a person should
    see: a shortlist as a table, a bridge packet as passed on (or why it was not)."""
    extra = {str(k).lower(): v for k, v in reply.extra.items()}
    shown = sections(request.step.fields, fields, extra)
    if not shown:
        return body
    return "\n\n".join(([body.strip()] if body.strip() else []) + shown)


def panel_block(d: Discussion, request: Request, reply: Reply, comment: str):
    """A setup turn's proposed panel, checked (cascade.protocol.panel): the block's body, the
    events that record it, and notes. One that cannot be used: personas picked by topic."""
    run = d.state.run
    count = run.steps.participants
    registry = d.setting.personas  # the registry the discussion is read under
    fixed = set(run.fixed.values())
    field_ = next(f for f in request.step.fields if f.kind == "panel")
    extra = {str(k).lower(): v for k, v in reply.extra.items()}
    value = extra.get(field_.name.lower())
    if value is None and "experts" in extra:  # the panel's keys at the top level
        value = reply.extra
    taken = set(registry.by_alias) | fixed | {"person", TOOL.lower()}
    panel, notes = parse_panel(value, count.min, count.max, taken, d.title)
    if panel is None:
        panel = fallback_panel(d.title, registry, count.default, fixed | role_personas(d.root))
        notes.append(f"the proposed panel could not be used; the panel is {len(panel.experts)} "
                     "of the registry's personas picked by topic words (modify it at the "
                     "confirmation)")
    lines = [comment.strip(), "", f"**Problem**: {panel.problem}"] if comment.strip() else [
        f"**Problem**: {panel.problem}"]
    if panel.scope:
        lines.append(f"**Scope**: {panel.scope}")
    if panel.success:
        lines.append(f"**Success criteria**: {panel.success}")
    lines += ["", "| Expert | Expertise | Thinking style | Stakes | Blind spots |",
              "|---|---|---|---|---|"]
    for e in panel.experts:
        cells = [e.name, ", ".join(e.expertise), e.thinking, e.stakes, ", ".join(e.blind)]
        name, expertise, thinking, stakes, blind = (cell(c, "-") for c in cells)
        lines.append(f"| {name} (@{e.id}) | {expertise} | {thinking} | {stakes} | {blind} |")
    lines += ["", "**Designed tensions**:", ""]
    lines += [f"- @{t.a} vs @{t.b}: {t.axis}" + (f" ({t.description})" if t.description else "")
              for t in panel.tensions]
    return "\n".join(lines), panel_events(panel), notes
