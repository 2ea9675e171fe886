"""Rule files: ``.ai-rules.yml`` in any folder maps changed paths to discussions.

Patterns are relative to the rule file's folder. For a changed file, rule files cascade from
the repository top down to the file's folder; a nearer file's rule replaces a same-named one
from farther up. ``extends:`` pulls in a preset (``rules/<name>.yml``, or the repository's
``.cascade/rules/<name>.yml``) as if its rules were written in that file. What a rule says:
cascade.config.rules. Loading rule files imports only PyYAML: a no-op commit stays cheap.
"""
from __future__ import annotations

from pathlib import Path

from cascade.config.rules import RULE_FILE, Rule, parse_rules
from cascade.config.schema import read_all
from cascade.config.yamlio import check_keys, did_you_mean, load_yaml, read_text
from cascade.base.errors import CascadeError, Found, in_order, raise_all
from cascade.base.resources import search_path

RULES_FILE = ".ai-rules.yml"


def is_config(path: str) -> bool:
    """A file whose change can change verdicts: a rule file, or the repository's own
    personas, protocols and rule presets."""
    return (path == RULES_FILE or path.endswith("/" + RULES_FILE)
            or path.startswith((".cascade/personas/", ".cascade/protocols/", ".cascade/rules/")))


def _rules_rel(folder: str) -> str:
    return f"{folder}/{RULES_FILE}" if folder else RULES_FILE


class WorkTree:
    """Reads rule files from the working tree: what the hook sees."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def is_file(self, rel: str) -> bool:
        path = self.root / rel
        if path.is_file() or path.is_symlink():  # a link is refused as it is read
            return True
        if path.exists():  # a folder (or a device) where a rule file goes: never "no rules"
            raise CascadeError("is not a file: a rule file must be a regular file", path)
        return False

    def read(self, rel: str) -> str:
        return read_text(self.root / rel)


class RuleSet:
    """The rule files of one repository, loaded on demand and cached.

    ``reader`` (``is_file(rel)`` / ``read(rel)``, repository-relative '/' paths) says where
    rule files come from: the working tree by default, a git tree for ``cascade check``.
    ``config_root`` is where ``.cascade/rules/`` presets are looked up (default: ``root``).
    """

    def __init__(self, root: Path, reader: WorkTree | None = None,
                 config_root: Path | None = None) -> None:
        self.root = root
        self.reader = reader if reader is not None else WorkTree(root)
        self.config_root = config_root if config_root is not None else root
        self._files: dict[str, list[Rule]] = {}

    def files_for(self, rel: str) -> list[str]:
        """Folders (repository-relative) from the top down to ``rel``'s folder with a rule file."""
        parts = rel.split("/")[:-1]
        folders = [""] + ["/".join(parts[: i + 1]) for i in range(len(parts))]
        return [f for f in folders if self.reader.is_file(_rules_rel(f))]

    def rules_in(self, folder: str) -> list[Rule]:
        if folder not in self._files:
            self._files[folder] = self._load(folder)
        return self._files[folder]

    def _load(self, folder: str) -> list[Rule]:
        path = self.root / folder / RULES_FILE
        data = load_yaml(path, self.reader.read(_rules_rel(folder)))
        if data is None:
            return []
        v, errors = read_all(data, RULE_FILE, path, "rule file")
        rules: dict[str, Rule] = {}
        for name in v["extends"]:
            with Found(errors).kept():
                for rule in self._preset(name, path, data.line_of("extends")):
                    rules[rule.name] = rule.replace(base=folder)
        own = parse_rules(data, path, folder, "'rules'", errors)
        for rule in own:
            rule.siblings = tuple(own)  # an error in one names the others' too
            rules[rule.name] = rule
        raise_all(in_order(errors))  # every error of the file, in one run
        return list(rules.values())

    def _preset(self, name: str, where: Path, line: int) -> list[Rule]:
        for folder in search_path("rules", self.config_root):
            for ext in (".yml", ".yaml"):
                preset = folder / f"{name}{ext}"
                if preset.is_file() or preset.is_symlink():  # a link: refused as it is read
                    data = check_keys(load_yaml(preset), preset, {"rules"}, {"rules"}, "preset")
                    return parse_rules(data, preset, "", "preset 'rules'")
        known = sorted({p.stem for f in search_path("rules", self.config_root)
                        for p in f.glob("*.y*ml")})
        raise CascadeError(f"unknown rule preset {name!r} (known: {', '.join(known)})"
                           + did_you_mean(name, known), where, line)

    def governing(self, rel: str) -> Rule | None:
        """The rule that governs ``rel``: from the nearest rule file that has a match."""
        best: Rule | None = None
        best_depth = -1
        for rule in self._in_order(rel):
            if rule.matches(rel):
                depth = len(rule.base.split("/")) if rule.base else 0
                if depth > best_depth:
                    best, best_depth = rule, depth
        return best

    def _in_order(self, rel: str) -> list[Rule]:
        by_name: dict[str, Rule] = {}
        for folder in self.files_for(rel):
            for rule in self.rules_in(folder):
                by_name[rule.name] = rule
        return list(by_name.values())
