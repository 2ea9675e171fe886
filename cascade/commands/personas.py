from __future__ import annotations

from cascade.config.personas import load_personas
from cascade.errors import display_path
from cascade.resources import find_root


def personas_list() -> int:
    registry = load_personas(find_root())
    rows = [(p.alias, p.name, p.type, p.role, display_path(p.path)) for p in registry]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)) + "  " + row[4])
    return 0


def personas_show(name: str) -> int:
    registry = load_personas(find_root())
    p = registry.get(name) or registry.by_name.get(name) or registry.require(name)
    print(f"{p.name} (@{p.alias}) - {p.role}")
    print(f"Type: {p.type}" + ("" if p.votes else " (does not vote)"))
    print(f"Model: {p.model or '(default)'}")
    print(f"File: {display_path(p.path)}")
    if p.expertise:
        print("Expertise:\n" + "\n".join(f"  - {e}" for e in p.expertise))
    if p.concerns:
        print("Concerns:\n" + "\n".join(f"  - {c}" for c in p.concerns))
    print("Personality:\n" + "\n".join(f"  {ln}" for ln in p.personality.rstrip().splitlines()))
    return 0
