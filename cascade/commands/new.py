from __future__ import annotations

from pathlib import Path

from cascade.errors import display_path
from cascade.ledger.discussion import Discussion


def new(title: str, template: str, source: str | None, participants: list[str] | None,
        protocol: str | None, output: str | None, context: str) -> int:
    d = Discussion.create(title, template, context, path=output, source=source,
                          participants=participants, protocol=protocol)
    if source and not Path(source).exists():
        print(f"warning: {source}: no such file yet")
    d.save()
    print(f"Created: {display_path(d.path)}")
    return 0
