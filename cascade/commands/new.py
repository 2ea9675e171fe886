from __future__ import annotations

from cascade.errors import display_path
from cascade.ledger.discussion import Discussion


def new(title: str, template: str, source: str | None, participants: list[str] | None,
        protocol: str | None, output: str | None, context: str) -> int:
    if source:
        from cascade.resources import find_root
        from cascade.safepath import refuse_links

        source = refuse_links(find_root(), source, "--source")
    d = Discussion.create(title, template, context, path=output, source=source,
                          participants=participants, protocol=protocol)
    if source and not (d.root / source).exists():
        print(f"warning: {source}: no such file yet")
    d.save()
    print(f"Created: {display_path(d.path)}")
    return 0
