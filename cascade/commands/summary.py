from __future__ import annotations

from cascade.base.atomic import atomic_write
from cascade.base.errors import display_path
from cascade.check.governance import inside, open_at
from cascade.protocol.sum_file import NOT_COMMITTED, render_summary, summary_path


def summary(path: str) -> int:
    d = open_at(path, *inside(path))  # refused outside the repository
    target = summary_path(d.path)
    text = render_summary(d)
    mode = target.stat().st_mode if target.exists() else None
    atomic_write(target, text.encode("utf-8"), mode)
    print(f"Wrote {display_path(target)} ({NOT_COMMITTED})")
    return 0
