"""Where a repository keeps its ADRs: what ``cascade init`` writes rules for.

Found from the tracked files (``git ls-files``) and adr-tools' ``.adr-dir`` (its content is
the ADR folder). Known folders: ``doc/adr``, ``docs/adr``, ``docs/decisions`` (MADR),
``docs/architecture/decisions``, ``doc/architecture/decisions``. Three shapes, one rule each:

- flat: ``<dir>/*.md``;
- folder per ADR: ``<dir>/<topic>/index.md`` (plus ``<dir>/*.md`` when there are flat ones);
- area folders: ``<dir>/**/*.md`` (``<dir>/<area>/*.md``, any depth).

Every rule's ledger is ``{dir}/discussions/{stem}.discussion.md``: next to the document, one
per document whatever the shape (a folder-per-ADR ``index.md`` gets
``<dir>/<topic>/discussions/index.discussion.md``). Templates (``*template*.md``,
``0000-*.md``, and such folders), READMEs, and the ``index.md`` at the ADR folder's top are excluded.
"""
from __future__ import annotations

import posixpath

from cascade.config.rules import NEVER_GOVERNED
from cascade.loop.globs import compile_glob, glob_match

ADR_DIR_FILE = ".adr-dir"
KNOWN_DIRS = ("doc/adr", "docs/adr", "docs/decisions", "docs/architecture/decisions",
              "doc/architecture/decisions")
DISCUSSION = "{dir}/discussions/{stem}.discussion.md"


class Found:
    """One ADR folder and the rule that governs its documents."""

    def __init__(self, name: str, folder: str, shape: str, match: list[str],
                 exclude: list[str], source: str) -> None:
        self.name = name
        self.folder = folder
        self.shape = shape  # flat, folder-per-ADR, area folders
        self.match = match
        self.exclude = exclude
        self.source = source  # how it was found: ".adr-dir", "known folder"
        self.documents: list[str] = []

    def governs(self, path: str) -> bool:
        return (not path.endswith(NEVER_GOVERNED)
                and any(glob_match(p, path) for p in self.match)
                and not any(glob_match(p, path) for p in self.exclude))

    def yaml(self) -> str:
        def seq(items: list[str]) -> str:
            return "[" + ", ".join(f'"{i}"' for i in items) + "]"
        return (f"  - name: {self.name}\n"
                f"    match: {seq(self.match)}\n"
                f"    exclude: {seq(self.exclude)}\n"
                f"    template: adr\n"
                f'    discussion: "{DISCUSSION}"\n'
                f"    participants: [architect, security, pragmatist]\n"
                f"    consensus: {{threshold_ready: 0.67, threshold_reject: 0.01, "
                f"human_required: false}}\n"
                f"    status: true   # at consensus, Proposed -> Accepted in the ADR itself\n")


def _excludes(folder: str) -> list[str]:
    return [f"{folder}/**/README.md", f"{folder}/**/readme.md", f"{folder}/index.md",
            f"{folder}/**/*template*.md", f"{folder}/**/0000-*.md",
            f"{folder}/**/*template*/**", f"{folder}/**/0000-*/**"]


def _shape(folder: str, files: list[str]) -> tuple[str, list[str]]:
    prefix = folder + "/"
    flat, topics, nested = False, set(), False
    for path in files:
        if not path.startswith(prefix) or not path.lower().endswith(".md"):
            continue
        if path.endswith(NEVER_GOVERNED):
            continue
        parts = path[len(prefix):].split("/")
        if "discussions" in parts[:-1]:
            continue
        if len(parts) == 1:
            flat = True
        elif len(parts) == 2 and parts[1] == "index.md":
            topics.add(parts[0])
        else:
            nested = True
    if topics and not nested:
        return "folder-per-ADR", ([f"{folder}/*.md"] if flat else []) + [f"{folder}/*/index.md"]
    if nested or topics:
        return "area folders", [f"{folder}/**/*.md"]
    return "flat", [f"{folder}/*.md"]


def find_layout(files: list[str], adr_dir: str | None) -> list[Found]:
    """The ADR folders of a repository whose tracked files are ``files``; ``adr_dir``: the
    content of ``.adr-dir`` (None when there is none)."""
    folders: list[tuple[str, str]] = []
    if adr_dir:
        folder = posixpath.normpath(adr_dir.strip().splitlines()[0].strip().strip("/"))
        if folder and not folder.startswith("..") and folder != ".":
            folders.append((folder, ADR_DIR_FILE))
    for folder in KNOWN_DIRS:
        if any(f.startswith(folder + "/") for f in files) and all(f != folder for f, _ in folders):
            folders.append((folder, "known folder"))
    found = []
    for i, (folder, source) in enumerate(folders):
        shape, match = _shape(folder, files)
        name = "adr" if i == 0 else "adr-" + folder.replace("/", "-")
        item = Found(name, folder, shape, match, _excludes(folder), source)
        item.documents = [f for f in files if item.governs(f)]
        found.append(item)
    return found


def rules_text(found: list[Found]) -> str:
    return ("# CascadingDev: which documents get a review panel, and how the panel decides.\n"
            "# Written by `cascade init` for the ADR folders it found. Patterns are relative\n"
            "# to this file's folder; a .ai-rules.yml further down overrides a rule of the\n"
            "# same name. Each ledger sits next to its document: {dir}/discussions/.\n"
            "# Documents committed before adoption are listed in .cascade/baseline: they need\n"
            "# no ledger until they change.\n"
            "extends: [feature-spec]\n"
            "rules:\n" + "".join(f.yaml() for f in found) +
            "\n# This file, .cascade/ and the ledgers decide what passes: give them code owners.\n")


def files_regex(patterns: list[str]) -> str:
    """A ``files:`` regex for pre-commit (``re.search`` on the path) from match patterns,
    plus every ledger."""
    parts = [compile_glob(p).pattern.removesuffix(r"\Z") for p in dict.fromkeys(patterns)]
    parts.append(r".*\.discussion\.md")
    return "^(?:" + "|".join(parts) + ")$"
