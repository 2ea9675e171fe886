"""The argument graph of a step protocol's discussion: every turn a node (its message id,
persona, step and round), every typed reference an edge (``counters``, ``responds_to``,
``supports``, ``extends``, ``questions``) from the turn that made it to the turn it names.
Derived from the stamped turns alone, so ``check`` and a rerun see the same graph; a
reference to a message the ledger does not hold is not an edge.
"""
from __future__ import annotations

import json
import re

from cascade.protocol.runstate import Run


def argument_graph(run: Run) -> dict:
    ids = {t.msg for t in run.turns}
    nodes = [{"id": t.msg, "persona": t.name, "step": t.step, "round": t.round}
             for t in run.turns]
    edges = [{"from": t.msg, "to": target, "type": kind}
             for t in run.turns for kind, target in t.refs if target in ids]
    return {"nodes": nodes, "edges": edges}


def graph_json(run: Run) -> str:
    return json.dumps(argument_graph(run), indent=2, ensure_ascii=False) + "\n"


def _node(msg: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", msg)


def mermaid(run: Run) -> str:
    """The graph as a mermaid flowchart (GitHub renders it in markdown)."""
    graph = argument_graph(run)
    lines = ["```mermaid", "flowchart LR"]
    for n in graph["nodes"]:
        label = f"{n['id']}<br/>{n['persona']}<br/>{n['step']}".replace('"', "'")
        lines.append(f'  {_node(n["id"])}["{label}"]')
    for e in graph["edges"]:
        lines.append(f"  {_node(e['from'])} -- {e['type']} --> {_node(e['to'])}")
    lines.append("```")
    return "\n".join(lines)
