"""Providers declared by name: the models and commands a persona's ``provider_hint``, a
rule's ``model:`` or ``CASCADE_MODEL`` may name, with the default and the fallback chain.
The file's form is docs/providers.md's: ``.cascade/providers.yml`` (the team's), then the
user's own (``$XDG_CONFIG_HOME/cascade/providers.yml``) over it, name by name; each entry a
``name`` and either a ``command`` or a ``model``, and ``system:``, ``api_base:``,
``description:``; ``default:`` and ``fallback:`` at the top, or as ``providers: {default: ...,
fallback: [...]}``. Anything else is an error naming the file and the line.
"""
from __future__ import annotations

import os
import re
import shlex
from pathlib import Path
from typing import Any

from msgspec import Struct

from cascade.config.schema import Bad, Key, raw, read, texts, word
from cascade.config.yamlio import LineDict, LineList, items_with_lines, load_yaml, start_line
from cascade.base.errors import CascadeError
from cascade.base.resources import CONFIG_DIR

FILE_NAME = "providers.yml"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]*\Z")


class ProviderEntry(Struct, frozen=True):
    """One declared provider: its ``name``, its ``command`` (as written) or its ``model``,
    and the rest it declares (``system``, ``api_base``, ``description``), with where."""

    name: str
    command: str | None
    model: str | None
    options: tuple[tuple[str, Any], ...] = ()
    source: str = ""  # "file:line", for messages

    def describe(self) -> str:
        """What it asks, in a few words: ``a command: claude -p --model sonnet``."""
        return f"a command: {self.command}" if self.command else f"model {self.model}"


class ProviderTable(Struct, frozen=True):
    """The declared providers, the default and the fallback chain (names)."""

    entries: tuple[ProviderEntry, ...] = ()
    default: str | None = None
    fallback: tuple[str, ...] = ()

    def entry(self, name: str) -> ProviderEntry | None:
        for entry in self.entries:
            if entry.name == name:
                return entry
        return None

    def names(self) -> tuple[str, ...]:
        return tuple(entry.name for entry in self.entries)


def _name(value: object) -> str:
    if not isinstance(value, str) or not _NAME.match(value.strip()):
        raise Bad("a name of letters, digits, '-', '_', '.' or ':'")
    return value.strip()


def _command(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise Bad("a command line (the program and its arguments)")
    try:
        shlex.split(value)  # split as it is run (cascade.turns.providers.command)
    except ValueError as exc:
        raise Bad(f"a command line whose quotes close ({exc})") from None
    return value.strip()


def _system(value: object) -> str:
    if not isinstance(value, str) or not (value.strip() == "stdin"
                                          or value.strip().startswith("-")):
        raise Bad("a flag such as --system-prompt, or stdin")
    return value.strip()


_TEXT = word("a non-empty string")
ENTRY = {
    "name": Key(_name, required=True, label="provider 'name'"),
    "command": Key(_command, label="provider {name!r}: 'command'"),
    "model": Key(_TEXT, label="provider {name!r}: 'model'"),
    "system": Key(_system, label="provider {name!r}: 'system'"),
    "api_base": Key(_TEXT, label="provider {name!r}: 'api_base'"),
    "description": Key(_TEXT, label="provider {name!r}: 'description'"),
}
TOP = {
    "providers": Key(raw),
    "default": Key(_name, label="'default'"),
    "fallback": Key(texts, (), label="'fallback'"),
}
CHOICE = {
    "default": Key(_name, label="providers 'default'"),
    "fallback": Key(texts, (), label="providers 'fallback'"),
}


def user_file() -> Path:
    """The user's providers file (``$XDG_CONFIG_HOME/cascade/providers.yml``)."""
    base = os.environ.get("XDG_CONFIG_HOME", "").strip() or str(Path.home() / ".config")
    return Path(base) / "cascade" / FILE_NAME


def load_providers(root: Path | None) -> ProviderTable:
    """The repository's declared providers, then the user's over them (name by name; the
    user's ``default`` and ``fallback`` when it gives them)."""
    table = ProviderTable()
    for path in ((root / CONFIG_DIR / FILE_NAME) if root is not None else None, user_file()):
        if path is not None and path.is_file():
            table = _over(table, load_file(path))
    return table


def _over(base: ProviderTable, top: ProviderTable) -> ProviderTable:
    names = top.names()
    return ProviderTable(tuple(e for e in base.entries if e.name not in names) + top.entries,
                         top.default or base.default, top.fallback or base.fallback)


def load_file(path: Path) -> ProviderTable:
    """One providers file, checked (one line naming the file and the line at fault)."""
    data = load_yaml(path)
    if data is None:
        return ProviderTable()
    top = read(data, TOP, path, "providers file")
    listed = top["providers"]
    default, fallback = top["default"], top["fallback"]
    entries: tuple[ProviderEntry, ...] = ()
    if isinstance(listed, LineDict):  # providers: {default:, fallback:}
        choice = read(listed, CHOICE, path, "providers")
        default, fallback = default or choice["default"], fallback or choice["fallback"]
    elif isinstance(listed, LineList):
        entries = _entries(listed, path, start_line(data))
    elif listed is not None:
        raise CascadeError("'providers' must be a list of providers (name and command or "
                           "model) or a mapping of default and fallback", path,
                           data.line_of("providers") if isinstance(data, LineDict) else None)
    return ProviderTable(entries, default, tuple(fallback))


def _entries(listed: list, path: Path, line: int | None) -> tuple[ProviderEntry, ...]:
    out: list[ProviderEntry] = []
    for item, at in items_with_lines(listed, line):
        v = read(item, ENTRY, path, "provider", at)
        where = start_line(item, at)
        if (v["command"] is None) == (v["model"] is None):
            raise CascadeError(f"provider {v['name']!r} must give either 'command' or "
                               "'model'", path, where)
        if any(e.name == v["name"] for e in out):
            raise CascadeError(f"provider {v['name']!r} is declared twice", path, where)
        options = tuple((k, v[k]) for k in ("system", "api_base", "description")
                        if v[k] is not None)
        out.append(ProviderEntry(v["name"], v["command"], v["model"], options,
                                 f"{path}:{where}"))
    return tuple(out)
