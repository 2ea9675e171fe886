"""Where a repository keeps its ADRs: what ``cascade init`` writes rules for (README.md,
"It finds your layout").

Found from the tracked files: the folders ``--dir`` names, else adr-tools' ``.adr-dir``,
log4brains' ``.log4brains.yml`` (``project.adrFolder``, and each package's ``adrFolder``: a
rule ``adr-<package>`` each) and the ecosystems' known folders (cascade.config.adr_conventions);
when none of these has documents, the folders of files named like numbered decisions (or,
when they are area folders of one parent, that parent). Three shapes, one rule each: flat
``<dir>/*.md``; folder per ADR ``<dir>/<topic>/index.md`` (plus ``<dir>/*.md`` when there are
flat ones); area folders ``<dir>/**/*.md``. Every ledger is
``{dir}/discussions/{stem}.discussion.md``, next to its document. Templates, READMEs and the
``index.md`` at the ADR folder's top are excluded; a ``0000-*.md`` that is not a template is a
decision like any other (MADR's first one). The rule's ``status:`` moves a document's status
at consensus to the words the folder's ADRs already use (Approved, where cascade says
Accepted).
"""
from __future__ import annotations

import posixpath
import re
from collections import Counter

import msgspec
import yaml

from cascade.base import docstatus
from cascade.config.adr_conventions import (ADR_DIR_FILE, DATED_POST, KNOWN_DIRS,
                                            LOG4BRAINS_FILE, NUMBERED_FILE, OUTCOME_STATUSES)
from cascade.config.rules import DEFAULT_STATUS, NEVER_GOVERNED, slug
from cascade.config.globs import glob_match

DISCUSSION = "{dir}/discussions/{stem}.discussion.md"
_FIRST_WORD = re.compile(r"[^A-Za-z]*([A-Za-z]+)")
LOOKED_FOR = (f"--dir, {ADR_DIR_FILE}, {LOG4BRAINS_FILE}, " + ", ".join(f"{d}/" for d in KNOWN_DIRS)
              + ", and files named like numbered decisions (0001-title.md, ADR-0001-title.md)")


class Found(msgspec.Struct):
    """One ADR folder and the rule that governs its documents."""

    name: str
    folder: str
    shape: str  # flat, folder-per-ADR, area folders
    match: list[str]
    exclude: list[str]
    source: str  # how it was found: ".adr-dir", ".log4brains.yml", "known folder"
    documents: list[str] = []
    status: dict[str, str] | None = None  # its ADRs' own status words (status_words)

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
                + ("    status: true   # at consensus, Proposed -> Accepted in the ADR itself\n"
                   if self.status is None else
                   f"    status: {{ready: {self.status['READY']}, reject: {self.status['REJECT']}}}"
                   f"   # at consensus, Proposed -> {self.status['READY']}, as these ADRs say\n"))


def status_words(texts: list[str]) -> dict[str, str] | None:
    """The words ADRs with these ``texts`` use for a decision accepted and one rejected (the
    most common of each, as written: Approved), where they differ from cascade's own
    (Accepted, Rejected; a word's case follows the document anyway); None where they do not,
    or no ADR states such a status."""
    counts: dict[str, Counter] = {outcome: Counter() for outcome in OUTCOME_STATUSES}
    for text in texts:
        found = docstatus.find(text)
        m = _FIRST_WORD.match(found.value) if found is not None else None
        if m is None:
            continue
        word = m.group(1)
        for outcome, words in OUTCOME_STATUSES.items():
            if word.lower() in words:
                counts[outcome][word[:1].upper() + word[1:].lower()] += 1
    words = {outcome: c.most_common(1)[0][0] if c else DEFAULT_STATUS[outcome]
             for outcome, c in counts.items()}
    return None if words == DEFAULT_STATUS else words


def _excludes(folder: str) -> list[str]:
    return [f"{folder}/**/README.md", f"{folder}/**/readme.md", f"{folder}/index.md",
            f"{folder}/**/*template*.md", f"{folder}/**/*template*/**"]


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


def log4brains_folders(config: object) -> list[tuple[str, str]]:
    """The ADR folders a loaded ``.log4brains.yml`` names: (folder, "") for the project's
    ``adrFolder``, (folder, package name) for each package's; what is not there is skipped
    (log4brains reads the file, not cascade)."""
    project = config.get("project") if isinstance(config, dict) else None
    if not isinstance(project, dict):
        return []
    out = []
    if isinstance(project.get("adrFolder"), str):
        out.append((project["adrFolder"], ""))
    for package in project.get("packages") or []:
        if isinstance(package, dict) and isinstance(package.get("adrFolder"), str):
            out.append((package["adrFolder"], str(package.get("name") or "")))
    return [(f, name) for f, name in ((_inside(f), name) for f, name in out) if f]


def _inside(folder: str) -> str:
    """A configured folder relative to the top (``./docs/adr`` -> ``docs/adr``), or "" when it
    is the top or outside."""
    folder = posixpath.normpath(folder.strip().strip("/") or ".")
    return "" if folder == "." or folder.startswith("..") else folder


def find_layout(files: list[str], adr_dir: str | None, dirs: tuple[str, ...] = (),
                log4brains: list[tuple[str, str]] | None = None) -> list[Found]:
    """The ADR folders of a repository whose tracked files are ``files``; ``adr_dir``: the
    content of ``.adr-dir`` (None when there is none); ``dirs``: the folders a person named
    (each one kept, documents or not); ``log4brains``: the folders .log4brains.yml names
    (log4brains_folders)."""
    folders: list[tuple[str, str, str]] = [(d, "--dir", "") for d in dict.fromkeys(dirs)]
    if adr_dir and not dirs:
        folder = _inside(adr_dir.strip().splitlines()[0])
        if folder:
            folders.append((folder, ADR_DIR_FILE, ""))
    for folder, package in (log4brains or []) if not dirs else ():
        if all(f != folder for f, _, _ in folders):
            folders.append((folder, LOG4BRAINS_FILE, package))
    for folder in KNOWN_DIRS if not dirs else ():
        if (any(f.startswith(folder + "/") for f in files)
                and all(f != folder for f, _, _ in folders)):
            folders.append((folder, "known folder", ""))
    if not folders:
        folders = [(f, "numbered files", "") for f in numbered_folders(files)]
    found: list[Found] = []
    for folder, source, package in folders:
        shape, match = _shape(folder, files)
        name = "adr-" + (slug(package) if package else folder.replace("/", "-"))
        if not found:
            name = "adr"
        elif any(f.name == name for f in found):
            name = "adr-" + folder.replace("/", "-")
        item = Found(name, folder, shape, match, _excludes(folder), source)
        item.documents = [f for f in files if item.governs(f)]
        found.append(item)
    return found


def numbered_folders(files: list[str]) -> list[str]:
    """The folders that hold files named like numbered decisions, outside the known folders:
    each such folder, or, for folders that are areas of one parent (two or more of them), that
    parent. Ledgers, templates and dated posts do not count."""
    holders: dict[str, int] = {}
    for path in files:
        folder, _, name = path.rpartition("/")
        if (not NUMBERED_FILE.match(name) or DATED_POST.match(name) or "template" in name.lower()
                or path.endswith(NEVER_GOVERNED) or "discussions" in folder.split("/")):
            continue
        holders[folder] = holders.get(folder, 0) + 1
    parents: dict[str, list[str]] = {}
    for folder in holders:
        parents.setdefault(posixpath.dirname(folder), []).append(folder)
    out: list[str] = []
    for folder in sorted(holders):
        parent = posixpath.dirname(folder)
        top = parent if parent and len(parents[parent]) > 1 else folder
        if top and top not in out and not any(top.startswith(o + "/") for o in out):
            out.append(top)
    return out


def rules_text(found: list[Found], features: bool = False) -> str:
    """The rules for the folders found; ``features``: the repository has ``docs/features/``
    (the feature-spec preset's folder), so the preset is extended too."""
    return ("# CascadingDev: which documents get a review panel, and how the panel decides.\n"
            "# Written by `cascade init` for the ADR folders it found. Patterns are relative\n"
            "# to this file's folder; a .ai-rules.yml further down overrides a rule of the\n"
            "# same name. Each ledger sits next to its document: {dir}/discussions/.\n"
            "# Documents committed before adoption are listed in .cascade/baseline: they need\n"
            "# no ledger until they change.\n"
            + ("extends: [feature-spec]\n" if features else "") +
            "rules:\n" + "".join(f.yaml() for f in found) +
            "\n# This file, .cascade/ and the ledgers decide what passes: give them code owners.\n")


def extended_rules(text: str, found: list[Found], taken: set[str]) -> str | None:
    """``text`` (a rules file a person wrote, or edited) with the rules for ``found`` added at
    its end, each named apart from the ``taken`` names: under its block ``rules:`` when that is
    the file's last key (in its indentation), else under a new one. None when that cannot be
    done without rewriting what is there (a flow ``rules: [...]``, ``rules:`` not last, not a
    mapping)."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        return None
    for f in found:
        if f.name in taken:
            f.name = "adr-" + f.folder.replace("/", "-")
        taken.add(f.name)
    items = "".join(f.yaml() for f in found)
    lines = text.splitlines()
    if "rules" in data:
        keys = [i for i, line in enumerate(lines) if re.match(r"[^\s#-][^:]*:", line)]
        if not isinstance(data["rules"], list) or not keys or not lines[keys[-1]].startswith(
                "rules:") or lines[keys[-1]].split(":", 1)[1].split("#")[0].strip():
            return None
        indent = next((len(line) - len(line.lstrip(" ")) for line in lines[keys[-1] + 1:]
                       if line.lstrip(" ").startswith("- ")), 2)
        items = "".join(line[2 - indent:] if indent < 2 else " " * (indent - 2) + line
                        for line in items.splitlines(keepends=True))
    else:
        items = "rules:\n" + items
    out = text + ("" if not text or text.endswith("\n") else "\n") + items
    try:
        again = yaml.safe_load(out)
    except yaml.YAMLError:
        return None
    before = len(data.get("rules") or [])
    return out if len(again.get("rules") or []) == before + len(found) else None
