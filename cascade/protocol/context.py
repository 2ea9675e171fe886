"""What a step shows a persona besides the turns its visibility lets it see: the pieces its
``shows:`` names (docs/protocols.md, "The keys"), each a registered behaviour -- a pure
function of the run and the request that returns a block's title and text (None: nothing
to show). The prompt fences each block as material (cascade.run.step_prompt), since a
panel's tensions and the turns' references come from the models.
"""
from __future__ import annotations

from typing import Any

from cascade.protocol.behaviours import Param, Registry, named
from cascade.protocol.fields import item_line, items_of, split_list

# (run, request) -> (title, text) or None
SHOWS = Registry("shown context")


@SHOWS.register("tensions")
def tensions(run: Any, request: Any) -> tuple[str, str] | None:
    """The panel's designed tensions: who against whom, on which axis, why."""
    panel = run.setup.panel
    if panel is None or not panel.tensions:
        return None
    return "tension map", "\n".join(
        f"- @{t.a} vs @{t.b}: {t.axis}" + (f" -- {t.description}" if t.description else "")
        for t in panel.tensions)


@SHOWS.register("argument-graph")
def argument_graph(run: Any, request: Any) -> tuple[str, str] | None:
    """The edges of the turns shown: each from a shown turn to a message it cites."""
    names = {t.msg: t.name for t in request.shown}
    names.update({t.msg: t.name for t in run.turns if t.msg not in names})
    edges = [f"- {t.msg} ({t.name}) {kind.replace('_', ' ')} {target}"
             + (f" ({names[target]})" if target in names else "")
             for t in request.shown for kind, target in t.refs if target in names]
    if not edges:
        return None
    return "argument graph", "\n".join(edges)


@SHOWS.register("disagreements", params={
    "field": Param((str,), "disagreements", "the list field that names them",
                   check=named("a field's name"))})
def disagreements(run: Any, request: Any, field: str = "disagreements") -> tuple[str, str] | None:
    """The earlier round's active disagreements: its last turn that lists them."""
    earlier = [t for t in run.turns if t.round < request.round and field in t.fields]
    items = [line for line, _ in listed_items(run, earlier[-1], field)] if earlier else []
    if not items:
        return None
    return (f"active disagreements after round {earlier[-1].round}",
            "\n".join(f"- {x}" for x in items))


@SHOWS.register("resume-context")
def resume_context(run: Any, request: Any) -> tuple[str, str] | None:
    """The resume context the tool wrote when the earlier round paused (from the ledger)."""
    text = run.pauses.resume_texts.get(request.round - 1, "")
    return (f"resume context after round {request.round - 1}", text) if text else None


def first_listed(run: Any, round_: int, field: str) -> str:
    """The first item of the round's last turn that lists ``field`` ("": none): the most
    contested point, when the field is a quality gate's disagreements."""
    found = [t for t in run.turns if t.round == round_ and t.fields.get(field)]
    items = [first for _, first in listed_items(run, found[-1], field)] if found else []
    return items[0] if items else ""


def listed_items(run: Any, turn: Any, field: str) -> list[tuple[str, str]]:
    """A list field of a turn: each item as a line and its first value (an items field's
    records, as ``point (supporters: a, b; strength: strong)`` and ``point``)."""
    step = run.step_of(turn.step)
    f = next((f for f in step.fields if f.name == field), None) if step is not None else None
    if f is not None and f.kind == "items":
        return [(item_line(f, r)[2:], str(r[f.parts[0][0]]))
                for r in items_of(f, turn.fields[field])]
    return [(x, x) for x in split_list(turn.fields[field])]
