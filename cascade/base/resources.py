"""Where bundled data and a repository's own configuration live."""
from __future__ import annotations

import functools
import os
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent  # cascade/, this file being in cascade/base/
# In a wheel the data sits in cascade/_bundled/; in a source checkout, at the repository top.
_BUNDLED = _PACKAGE / "_bundled"
_SOURCE = _PACKAGE.parent

CONFIG_DIR = ".cascade"  # a repository's own personas/, protocols/, templates/
LEDGER_SUFFIX = ".discussion.md"
KINDS = ("templates", "rules", "personas", "protocols")  # the data shipped with the package


@functools.lru_cache(maxsize=None)
def bundled(kind: str) -> Path:
    """Path of a bundled data folder: templates, rules, personas or protocols (the package
    does not move while it runs: asked once, as every configuration file read asks it)."""
    inside = _BUNDLED / kind
    return inside if inside.is_dir() else _SOURCE / kind


def is_bundled(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is one of the package's own data files (not a repository's)."""
    p = Path(os.path.abspath(path))
    return any(p.is_relative_to(bundled(kind)) for kind in KINDS)


def find_root(start: str | os.PathLike[str] | None = None) -> Path:
    """The repository top above ``start`` (a file or folder), or the folder itself if none."""
    here = Path(start or os.getcwd()).resolve()
    if not here.is_dir():
        here = here.parent
    return _find_root_cached(here)


@functools.lru_cache(maxsize=256)
def _find_root_cached(here: Path) -> Path:
    for folder in (here, *here.parents):
        if (folder / ".git").exists() or (folder / CONFIG_DIR).is_dir():
            return folder
    return here


def search_path(kind: str, root: Path | None) -> list[Path]:
    """Folders to look in for ``kind``, the repository's own first."""
    folders = []
    if root is not None:
        own = root / CONFIG_DIR / kind
        if own.is_dir():
            folders.append(own)
    folders.append(bundled(kind))
    return folders
