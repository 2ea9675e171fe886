"""The repository's own personas, protocols and rule presets (``.cascade/``), as committed.

They are written from the checked commit's tree into a temporary folder that stands in for
the repository top when personas, protocols and presets are looked up, so the working tree's
``.cascade/`` never influences the verdict. Errors in those files name the repository path.
"""
from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from pathlib import Path

from cascade.check.gittree import Tree
from cascade.base.errors import CascadeError, display_path
from cascade.base.resources import CONFIG_DIR

KINDS = ("personas", "protocols", "rules")


@contextlib.contextmanager
def committed_config(tree: Tree) -> Iterator[Path]:
    files = {p: b for p, b in tree.files.items()
             if p.startswith(CONFIG_DIR + "/") and p.split("/")[1:2][0] in KINDS}
    linked = sorted(p for p in files if p in tree.links)
    if linked:  # its blob is the link's target path, never the file: refused, as in the hook
        raise CascadeError(f"is a symbolic link at {tree.commit[:7]}: cascade never reads "
                           "configuration through one (commit the file itself)", linked[0])
    tree.blobs.fetch(list(files.values()))
    with tempfile.TemporaryDirectory(prefix="cascade-check-") as tmp:
        top = Path(tmp)
        for rel, blob in files.items():
            target = top / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(tree.blobs.get(blob))
        try:
            yield top
        except CascadeError as exc:
            for one in {id(e): e for e in [exc, *exc.errors]}.values():  # each its own line
                one.path = repository_path(one.path, top)
            raise


def repository_path(shown: str | None, top: Path) -> str | None:
    """Map a path inside the temporary folder back to its repository path."""
    if shown is None:
        return None
    for prefix in {str(top), display_path(top), str(top.resolve())}:
        if shown.startswith(prefix + "/"):
            return shown[len(prefix) + 1:]
    return shown
