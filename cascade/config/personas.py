"""Personas: the AI participants. Bundled ones, overridden or extended by a repository's own
``.cascade/personas/<alias>.yml``."""
from __future__ import annotations

import functools
import re
import unicodedata
from pathlib import Path

from msgspec import Struct

from cascade.config.schema import Bad, Key, read, text, text_lines
from cascade.config.yamlio import did_you_mean, load_yaml
from cascade.base.errors import CascadeError
from cascade.base.resources import search_path

_ALIAS = re.compile(r"[a-z][a-z0-9_]*(?:-[a-z0-9_]+)*\Z")
TYPES = ("voting", "background")


class Persona(Struct, frozen=True):
    name: str
    alias: str
    role: str
    personality: str
    expertise: tuple[str, ...]
    concerns: tuple[str, ...]
    type: str
    model: str | None
    path: Path
    line: int = 1  # of its name, in its file: no part of what the persona is (==)
    provider_hint: str | None = None  # the tier or provider it prefers (cascade.turns.tiers)

    @property
    def votes(self) -> bool:
        return self.type == "voting"

    def __eq__(self, other: object) -> bool:
        if type(other) is not Persona:
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in _SAME)

    def __hash__(self) -> int:
        return hash(tuple(getattr(self, name) for name in _SAME))


_SAME = tuple(name for name in Persona.__struct_fields__ if name != "line")  # what == compares


def normal_name(name: str) -> str:
    """How names are compared: NFKC, case-folded, whitespace collapsed, so that a block under
    a look-alike of a persona's name (``ai-security``, ``AI-Security\u00a0``) is taken as that
    persona's, and must carry its stamp."""
    return " ".join(unicodedata.normalize("NFKC", name).casefold().split())


class Personas:
    """All personas visible from one repository, by alias and by display name."""

    def __init__(self, personas: dict[str, Persona]) -> None:
        self.by_alias = personas
        self.by_name = {p.name: p for p in personas.values()}
        self._by_normal = {normal_name(p.name): p for p in personas.values()}
        self._authors: dict[str, Persona | None] = {}  # of_author's answers (names repeat)

    def of_author(self, author: str) -> Persona | None:
        """The persona a block's ``Name:`` stands for (look-alikes included), or None."""
        if author not in self._authors:
            self._authors[author] = self._by_normal.get(normal_name(author))
        return self._authors[author]

    def __contains__(self, alias: str) -> bool:
        return alias in self.by_alias

    def __iter__(self):
        return iter(sorted(self.by_alias.values(), key=lambda p: (p.type != "voting", p.alias)))

    def get(self, alias: str) -> Persona | None:
        return self.by_alias.get(alias.lower().lstrip("@"))

    def require(self, alias: str, where: Path | None = None, line: int | None = None) -> Persona:
        persona = self.get(alias)
        if persona is None:
            known = ", ".join(sorted(self.by_alias))
            raise CascadeError(f"unknown persona {alias!r} (known: {known})"
                               + did_you_mean(alias.lower().lstrip("@"), self.by_alias), where,
                               line)
        return persona

    def is_persona_name(self, name: str) -> bool:
        return self.of_author(name) is not None

    def extended(self, more) -> Personas:
        """These personas and ``more`` (a discussion's generated panel). One whose alias or
        name the registry already has is left out: the registry's stands."""
        merged = dict(self.by_alias)
        for p in more:
            if p.alias not in merged and normal_name(p.name) not in self._by_normal:
                merged[p.alias] = p
        return Personas(merged)


def _name(value: object) -> str:
    """A display name, its spacing collapsed."""
    value = text(value)
    if not value.strip():
        raise Bad("blank", must="must not be")
    return " ".join(value.split())


def _alias(value: object) -> str:
    value = text(value)
    if not _ALIAS.match(value):
        raise Bad("lower-case letters, digits, - or _", subject=f"persona alias {value!r}")
    return value


def _type(value: object) -> str:
    value = text(value)
    if value not in TYPES:
        raise Bad(f"{' or '.join(TYPES)}, not {value!r}", subject="persona type")
    return value


HINTS = ("fast", "strong")
_HINT = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]*\Z")


def _hint(value: object) -> str | None:
    """``provider_hint``: the provider the persona prefers -- a tier (``fast``, ``strong``)
    whose model the rule's ``models:`` (or CASCADE_MODEL_STRONG) gives, or a provider's name
    (``claude-sonnet``) that the rule's ``models:`` or a declared provider
    (.cascade/providers.yml) resolves. A hint nothing resolves is a preference only: the
    persona asks the model it would ask without it."""
    if value is None:
        return None
    value = text(value).strip()
    if not _HINT.match(value):
        raise Bad(f"a tier ({' or '.join(HINTS)}) or a provider's name, not {value!r}",
                  subject="persona provider_hint")
    return value


def _model(value: object) -> str | None:
    if not isinstance(value, str):
        raise Bad("a model string or null")
    return value or None


PERSONA = {
    "name": Key(_name, required=True, label="persona 'name'"),
    "alias": Key(_alias, required=True, label="persona 'alias'"),
    "role": Key(text, required=True, label="persona 'role'"),
    "personality": Key(text, required=True, label="persona 'personality'"),
    "expertise": Key(text_lines, (), label="persona 'expertise'"),
    "concerns": Key(text_lines, (), label="persona 'concerns'"),
    "type": Key(_type, required=True, label="persona 'type'"),
    "model": Key(_model, label="persona 'model'"),
    "provider_hint": Key(_hint, label="persona 'provider_hint'"),
}


def load_persona(path: Path) -> Persona:
    data = load_yaml(path)
    v = read(data, PERSONA, path, "persona")
    alias = v["alias"]
    if alias != path.stem:
        raise CascadeError(f"persona alias {alias!r} does not match the file name {path.name!r}",
                           path, data.line_of("alias"))
    return Persona(v["name"], alias, v["role"], v["personality"], v["expertise"],
                   v["concerns"], v["type"], v["model"], path, data.line_of("name"),
                   v["provider_hint"])


def load_personas(root: Path | None) -> Personas:
    """Bundled personas, then the repository's: a repository file replaces the bundled one."""
    return _load(tuple(search_path("personas", root)))


def forget_loaded() -> None:
    """Drop the loaded persona folders: a persona file was written, deleted or renamed."""
    _load.cache_clear()


def is_alias(alias: str) -> bool:
    """Whether ``alias`` is a persona alias: lower case, words joined by hyphens."""
    return _ALIAS.match(alias) is not None


@functools.lru_cache(maxsize=32)
def _load(folders: tuple[Path, ...]) -> Personas:
    found: dict[str, Persona] = {}
    for folder in reversed(folders):  # bundled first, so the repository's override
        here: dict[str, Persona] = {}
        for path in sorted(folder.glob("*.y*ml")):
            if path.suffix not in (".yml", ".yaml"):
                continue
            persona = load_persona(path)
            other = here.setdefault(persona.alias, persona)
            if other is not persona:  # a.yml and a.yaml
                raise CascadeError(f"persona {persona.alias!r} is also defined in "
                                   f"{_shown(other, folders)}", path, persona.line)
        found.update(here)
    _check_names(found, folders)
    return Personas(found)


def _is_bundled(persona: Persona, folders: tuple[Path, ...]) -> bool:
    return persona.path.parent == folders[-1]  # search_path puts the bundled folder last


def _shown(persona: Persona, folders: tuple[Path, ...]) -> str:
    """How a message names another persona file: ``.cascade/personas/x.yml`` (the same
    wherever the repository's files are read from), or the bundled persona's alias."""
    if _is_bundled(persona, folders):
        return f"the bundled persona {persona.alias!r}"
    return persona.path.relative_to(persona.path.parent.parent.parent).as_posix()


def _check_names(found: dict[str, Persona], folders: tuple[Path, ...]) -> None:
    """Two personas whose names read alike would take each other's blocks: an error, named
    at the repository's file (the bundled ones cannot be edited), the later one by name."""
    names: dict[str, Persona] = {}
    order = sorted(found.values(), key=lambda p: (not _is_bundled(p, folders), p.path.name))
    for persona in order:
        other = names.setdefault(normal_name(persona.name), persona)
        if other is persona:
            continue
        same = ("also used by" if other.name == persona.name
                else f"too like {other.name!r}, the name of")
        raise CascadeError(f"persona name {persona.name!r} is {same} {_shown(other, folders)}",
                           persona.path, persona.line)
