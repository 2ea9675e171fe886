from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from cascade.config import persona_files
from cascade.config.personas import HINTS, load_personas
from cascade.config.providers import load_providers
from cascade.base.errors import CascadeError, display_path
from cascade.base.resources import find_root
from cascade.base.terminal import ask_line


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
    if p.provider_hint in HINTS:
        print(f"Tier: {p.provider_hint} (provider_hint: the rule's models: give its model)")
    elif p.provider_hint:
        entry = load_providers(find_root()).entry(p.provider_hint)
        print(f"Provider: {p.provider_hint} (provider_hint): " + (
            f"{entry.describe()} ({display_path(entry.source)})" if entry is not None else
            "declared in no providers.yml here, so a preference only (the persona asks the "
            "model the rule and the environment give)"))
    print(f"File: {display_path(p.path)}")
    for title, items in (("Expertise", p.expertise), ("Concerns", p.concerns)):
        if items:
            print(f"{title}:\n" + "\n".join(f"  - {x}" for x in items))
    print("Personality:\n" + "\n".join(f"  {ln}" for ln in p.personality.rstrip().splitlines()))
    return 0


def personas_add(name: str, from_file: str | None, interactive: bool, force: bool) -> int:
    """``cascade personas add NAME --from-file F | --interactive``: a repository persona,
    checked as loading checks it, written to .cascade/personas/NAME.yml."""
    if (from_file is None) == (not interactive):
        raise CascadeError("give --from-file F or --interactive")
    root = find_root()
    if from_file is not None:
        source = Path(from_file)
        try:
            text = source.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise CascadeError("no such file (--from-file)", source) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise CascadeError(f"cannot read it: {getattr(exc, 'strerror', None) or exc}",
                               source) from None
    else:
        if not sys.stdin.isatty():
            raise CascadeError("--interactive needs a terminal; without one, write the "
                               "persona to a file and give --from-file F")
        text = persona_files.from_answers(name, _ask(name))
        source = None
    target, note = persona_files.add(root, name, text, source, force)
    print(f"Added persona @{name.lstrip('@')}: {display_path(target)} ({note})")
    return 0


def _ask(alias: str) -> dict[str, Any]:
    """The interactive questions: name, role, personality (until an empty line), expertise,
    concerns, type."""
    default = f"AI-{alias.replace('-', ' ').title().replace(' ', '-')}"
    name = ask_line(f"Display name [{default}]: ").strip() or default
    role = ask_line("Role (e.g. Database Specialist): ").strip()
    print("Personality, the persona's instructions (end with an empty line):")
    lines = []
    while True:
        line = ask_line(at_end="")  # Ctrl-D ends it too
        if not line.strip():
            break
        lines.append(line)
    expertise = ask_line("Expertise (comma-separated): ").split(",")
    concerns = ask_line("Questions it always asks (separated by ;): ").split(";")
    type_ = ask_line("Does it vote? [Y/n]: ").strip().lower()
    return {"name": name, "role": role, "personality": "\n".join(lines), "expertise": expertise,
            "concerns": concerns, "type": "background" if type_ in ("n", "no") else "voting"}


def personas_remove(name: str) -> int:
    path = persona_files.remove(find_root(), name)
    print(f"Removed persona @{name.lstrip('@')}: {display_path(path)}")
    return 0
