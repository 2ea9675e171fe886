"""The adoption baseline (``.cascade/baseline``, written by ``cascade init``): documents
committed before adoption need no ledger until they change. One line per such document,
``<blob id> <path>`` (what ``git ls-tree`` says), ``#`` comments.

An entry vouches for a document only when its text is the entry's blob (or differs from it
only in its status or spacing: cascade.base.docstatus.core) both at the checked commit and at
the *adoption commit* (the first that added the baseline); in range mode, an entry the merge
base's baseline lacks vouches only for a document the range does not change. So writing a
changed document's new blob into the baseline lets nothing through. docs/ci.md, *Legacy
documents*, has the rules in full.
"""
from __future__ import annotations

from pathlib import Path

from cascade.check.gittree import Tree
from cascade.base.docstatus import core
from cascade.base.errors import CascadeError
from cascade.base.gitio import git

BASELINE = ".cascade/baseline"


def parse(text: str) -> dict[str, str]:
    """{path: blob} from the baseline's text; lines that are not ``<hex> <path>`` are skipped."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        blob, _, path = line.partition(" ")
        path = path.strip()
        if path and len(blob) in (40, 64) and all(c in "0123456789abcdef" for c in blob):
            out[path] = blob
    return out


def render(entries: dict[str, str]) -> str:
    head = ("# CascadingDev adoption baseline: documents committed before adoption, with their\n"
            "# blob ids (git ls-tree). Each needs no ledger while its content stays this blob;\n"
            "# once it changes, the panel reviews it. An entry vouches only for a document\n"
            "# whose blob is the entry's both now and at adoption (the commit that added this\n"
            "# file): editing this file cannot let a changed document through.\n")
    return head + "".join(f"{blob} {path}\n" for path, blob in sorted(entries.items()))


def _read(files: dict[str, str], blobs) -> dict[str, str]:
    blob = files.get(BASELINE)
    if blob is None:
        return {}
    return parse(blobs.get(blob).decode("utf-8", "replace"))


class Baseline:
    """Which documents of the checked tree the baseline vouches for."""

    def __init__(self, root: Path, tree, base_tree=None) -> None:
        self.entries = _read(tree.files, tree.blobs)
        self.blobs = tree.blobs
        self.ranged = base_tree is not None
        self.at_base = _read(base_tree.files, tree.blobs) if self.ranged else {}
        self.base_files: dict[str, str] = base_tree.files if self.ranged else {}
        self.at_adoption: dict[str, str] = {}
        if not self.entries:
            return
        out = git(root, "log", "--diff-filter=A", "--format=%H", tree.commit, "--",
                  BASELINE, check=False).decode().split()
        if out:  # the adoption commit: the first that added the baseline
            self.at_adoption = Tree(root, out[-1], tree.blobs).files

    def vouches(self, doc: str, blob: str | None) -> bool:
        entry = self.entries.get(doc)
        if entry is None or blob is None or self.at_adoption.get(doc) != entry:
            return False
        if not self.same(blob, entry):
            return False
        if self.ranged and self.at_base.get(doc) != entry:
            base = self.base_files.get(doc)
            return base is not None and self.same(base, entry)
        return True

    def same(self, blob: str, entry: str) -> bool:
        """The entry's text, or one that differs from it only in its status or spacing
        (cascade.base.docstatus.core): superseding a legacy ADR is not a change to review."""
        if blob == entry:
            return True
        try:
            return core(self.blobs.get(blob)) == core(self.blobs.get(entry))
        except CascadeError:  # an object this clone lacks: not shown to be the same
            return False
