"""A repository's own personas (``.cascade/personas/<alias>.yml``): added from a file or from
answers, removed -- by ``cascade personas add/remove`` and the UI's persona manager. A
persona is checked exactly as loading checks it (cascade.config.personas) before it is
written, and again with every other persona after (a name too like another's is refused,
and the file put back as it was). Bundled personas cannot be removed; a repository file of
the same alias replaces one."""
from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from cascade.base.atomic import atomic_write
from cascade.config.personas import (
    forget_loaded,
    is_alias,
    load_persona,
    load_personas,
    normal_name,
)
from cascade.config.yamlio import load_yaml
from cascade.base.errors import CascadeError
from cascade.config.ruleset import RULES_FILE, RuleSet

FOLDER = Path(".cascade") / "personas"


def folder(root: Path) -> Path:
    return root / FOLDER


def own_file(root: Path, alias: str) -> Path | None:
    """The repository's file for ``alias`` (.yml or .yaml), if it has one."""
    for ext in (".yml", ".yaml"):
        path = folder(root) / f"{alias}{ext}"
        if path.is_file():
            return path
    return None


def _check_alias(alias: str) -> str:
    alias = alias.strip().lstrip("@")
    if not is_alias(alias):
        raise CascadeError(f"persona name {alias!r} must be lower-case letters, digits, - or _ "
                           "(the alias: @" + (alias or "name") + ")")
    return alias


def from_answers(alias: str, answers: Mapping[str, Any]) -> str:
    """A persona file's text from answers (the interactive add, the UI's form): ``name``,
    ``role``, ``personality`` and ``type`` (strings), ``expertise`` and ``concerns`` (lists of
    strings); an empty name or type takes its default."""
    def listed(key: str) -> list[str]:
        return [x.strip() for x in answers[key] if x.strip()]

    data = {"name": answers["name"].strip()
            or f"AI-{alias.replace('-', ' ').title().replace(' ', '-')}",
            "alias": alias, "role": answers["role"].strip(),
            "personality": answers["personality"].strip() + "\n",
            "expertise": listed("expertise"), "concerns": listed("concerns"),
            "type": answers["type"].strip() or "voting", "model": None}
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=88)


def add(root: Path, alias: str, text: str, source: Path | None = None,
        force: bool = False) -> tuple[Path, str]:
    """Write ``text`` as the repository's persona ``alias``; (its file, a note: what it
    replaces, if anything). ``source``: the file the text came from, named in errors. A file
    without an ``alias:`` gets this one; one with another alias is refused."""
    alias = _check_alias(alias)
    shown = source if source is not None else Path(f"{alias}.yml")
    text = _with_alias(text, alias, shown)
    with tempfile.TemporaryDirectory() as tmp:  # checked as loading checks it, first
        probe = Path(tmp) / f"{alias}.yml"
        probe.write_text(text, encoding="utf-8")
        try:
            persona = load_persona(probe)
        except CascadeError as exc:
            raise CascadeError(exc.message.replace(repr(probe.name), repr(shown.name)), shown,
                               exc.line) from None
    others = [p for p in load_personas(root) if p.alias != alias]
    clash = next((p for p in others if normal_name(p.name) == normal_name(persona.name)), None)
    if clash is not None:  # two names that read alike would take each other's blocks
        raise CascadeError(f"its name {persona.name!r} reads like @{clash.alias}'s "
                           f"({clash.name!r}): choose another name", shown)
    existing = own_file(root, alias)
    if existing is not None and not force:
        raise CascadeError(f"the repository already has persona {alias!r}: give --force to "
                           "replace it", existing)
    bundled = load_personas(None).get(alias)
    target = existing or folder(root) / f"{alias}.yml"
    before = existing.read_bytes() if existing is not None else None
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(target, text.encode("utf-8"))
    forget_loaded()
    try:
        load_personas(root)  # with every other persona: names that read alike are refused
    except CascadeError:
        if before is None:
            target.unlink()
        else:
            atomic_write(target, before)
        forget_loaded()
        raise
    note = ("replaces the repository's own" if existing is not None
            else f"replaces the bundled persona {alias!r}" if bundled is not None else "new")
    return target, note


def _with_alias(text: str, alias: str, shown: Path) -> str:
    data = load_yaml(shown, text)
    if not isinstance(data, dict):
        raise CascadeError("a persona file is a mapping (name, alias, role, personality, "
                           "type, ...)", shown)
    given = data.get("alias")
    if given is None:
        return f"alias: {alias}\n" + text
    if given != alias:
        raise CascadeError(f"its alias is {given!r}, not {alias!r}: add it as {given!r}, or "
                           "change its alias", shown, data.line_of("alias"))
    return text


def remove(root: Path, alias: str) -> Path:
    """Remove the repository's persona ``alias``; its file. A bundled persona cannot be
    removed, nor one a rule still names as a participant."""
    alias = _check_alias(alias)
    path = own_file(root, alias)
    if path is None:
        if load_personas(None).get(alias) is not None:
            raise CascadeError(f"{alias!r} is a bundled persona: it cannot be removed (a "
                               f"repository file replaces it: cascade personas add {alias} "
                               "--from-file F)")
        own = sorted(p.stem for p in folder(root).glob("*.y*ml"))  # none: no folder
        raise CascadeError(f"no repository persona {alias!r} (the repository's own: "
                           f"{', '.join(own) or 'none'})")
    for rule in _rules(root):
        if alias in rule.participants:
            raise CascadeError(f"rule {rule.name!r} names {alias!r} as a participant: take it "
                               "out of the rule first", rule.file, rule.line_of("participants"))
    path.unlink()
    forget_loaded()
    return path


def _rules(root: Path):
    """Every rule of the repository's rule files (a file that cannot be read is skipped:
    its own errors are the hook's and check's to report)."""
    rules = RuleSet(root)
    for top, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "node_modules")
        if RULES_FILE in files:
            rel = Path(top).relative_to(root).as_posix()
            try:
                yield from rules.rules_in("" if rel == "." else rel)
            except CascadeError:
                continue
