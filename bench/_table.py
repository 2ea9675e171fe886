"""Print benchmark results as a plain table."""
from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def timed(fn: Callable[[], object], repeat: int = 5) -> tuple[float, float]:
    """(best, median) wall seconds over ``repeat`` runs."""
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - start)
    return min(runs), statistics.median(runs)


def table(title: str, header: tuple[str, ...], rows: list[tuple[object, ...]]) -> None:
    cells = [tuple(str(c) for c in header)] + [tuple(str(c) for c in r) for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    print(f"\n{title}")
    for i, row in enumerate(cells):
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
        if i == 0:
            print("  ".join("-" * w for w in widths))


def child_env(**extra: str) -> dict[str, str]:
    """The environment a benchmarked ``python -m cascade`` runs in: this one, with the
    checkout on PYTHONPATH and bytecode writes allowed -- a warm-up run then leaves .pyc files
    as an installed package has them; with PYTHONDONTWRITEBYTECODE set (as it is here) every
    run of an editable checkout would compile all of cascade from source (~80 ms)."""
    import os
    from pathlib import Path

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent), **extra}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env
