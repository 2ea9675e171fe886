"""Entry points of installed packages: how behaviours (``cascade.behaviours``) and providers
(``cascade.providers``) are added without a line of cascade. Only installed distributions are
read: a path entry in the working directory (the repository under review) is skipped unless
it is an installed environment's ``site-packages``, so no code of that repository ever runs.
"""
from __future__ import annotations

import sys
from pathlib import Path

from cascade.base.errors import CascadeError


def trusted_paths() -> list[str]:
    """The import path less the working directory's entries (but an installed environment's
    site-packages in it): what entry points are read from."""
    cwd = Path.cwd().resolve()
    out = []
    for entry in sys.path:
        if not entry:
            continue
        where = Path(entry).resolve()
        inside = where == cwd or cwd in where.parents
        if inside and where.name != "site-packages":
            continue
        out.append(entry)
    return out


def load_entry_points(group: str, what: str) -> None:
    """Import every entry point of ``group`` in the installed distributions (each module or
    object once); one that fails to load is an error naming its package and ``what`` it
    adds."""
    from importlib import metadata  # ~25 ms: only when a name is not known otherwise

    seen: set[str] = set()
    for dist in metadata.distributions(path=trusted_paths()):
        for ep in dist.entry_points:
            if ep.group != group or ep.value in seen:
                continue
            seen.add(ep.value)
            try:
                ep.load()
            except Exception as exc:  # a package's own bug: said, not a traceback
                raise CascadeError(f"the {what} of {dist.metadata['Name']!r} "
                                   f"({ep.value}) do not load: {exc}") from exc
