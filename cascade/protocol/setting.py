"""The configuration a ledger is read and written under, given to it by whoever opens it.

A Discussion (cascade.protocol.discussion) is the ledger: its text, its appends and the state
derived from them. What it is read under -- the repository its configuration comes from, the
personas registry, the protocols by name, the templates a new ledger is rendered from -- it
is given, as one ``Setting``, built by ``setting_of``. Each part is looked up when first asked
and kept by its loader (cascade.config.personas, cascade.protocol.loader: once per folder per
process, until a persona file is written), so a ledger that is never asked about its personas
never reads them.
"""
from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

from msgspec import Struct

from cascade.config import templates
from cascade.config.personas import Personas, load_personas
from cascade.protocol.loader import Protocol, load_protocol
from cascade.base.resources import find_root


class Setting(Struct, frozen=True):
    """Where a ledger's configuration comes from: the repository at ``root`` (its .cascade/
    is read, and its caches kept, under it)."""

    root: Path

    @property
    def personas(self) -> Personas:
        """The personas registry."""
        return load_personas(self.root)

    def protocol(self, name: str, where: Path | None = None) -> Protocol:
        """Protocol ``name``; an unknown name is an error naming ``where`` (the file that
        asked for it)."""
        return load_protocol(name, self.root, where)

    def template(self, kind: str, name: str, **values: Any) -> tuple[str, str]:
        """Template ``name`` of ``kind`` rendered with ``values``: its canonical name (an alias
        resolved) and its text."""
        name = templates.canonical(kind, name, self.root)
        return name, templates.render(kind, name, self.root, **values)


def setting_of(root: Path | None = None,
               near: str | os.PathLike[str] | None = None) -> Setting:
    """The setting of the repository at ``root``; None: of the one that holds ``near`` (a file
    or folder; None: the working directory). One per repository per process."""
    return _setting(root if root is not None else find_root(near))


@functools.lru_cache(maxsize=64)
def _setting(root: Path) -> Setting:
    return Setting(root)
