"""What ``cascade init`` writes into ``.ai-rules.yml``, and the step it advises next: the rules
for the ADR folders found (cascade.config.layout), else the presets; run again (``cascade init
--dir PATH`` after an ``init`` that found nothing), the presets it wrote, untouched, are
replaced, and rules a person wrote get the missing rule appended when the folder is named, else
shown to add. A ``next:`` line never names a folder no rule governs.
"""
from __future__ import annotations

from pathlib import Path

from cascade.base.atomic import atomic_write
from cascade.base.errors import CascadeError
from cascade.base.gitio import git
from cascade.check.baseline import BASELINE
from cascade.config.layout import extended_rules, rules_text
from cascade.config.precommit import CONFIG
from cascade.config.ruleset import RULES_FILE, RuleSet

RULES = """\
# CascadingDev: which documents get a review panel, and how the panel decides.
# Patterns are relative to this file's folder; a .ai-rules.yml further down overrides a rule
# of the same name. Presets: adr (docs/adr/*.md), feature-spec (docs/features/*.md).
extends: [adr, feature-spec]

# Your own rules, for example:
# rules:
#   - name: rfc
#     match: "rfcs/*.md"
#     template: feature
#     discussion: "rfcs/discussions/{stem}.discussion.md"
#     participants: [architect, security, pragmatist]
#     consensus: {threshold_ready: 0.67, threshold_reject: 0.01, human_required: true}
#     # or let the panel advise and people decide:
#     # consensus: {threshold_ready: 1.0, persona_votes: advisory}
#     deciders: [lead@example.com]   # who may override the panel (cascade decide); unset: anyone
#
# This file, .cascade/ and the ledgers decide what passes: give them code owners.
"""

def write_rules(root: Path, found: list, features: bool, named: bool,
                 lists: tuple[list[str], list[str]]) -> bool:
    """Write .ai-rules.yml, or make the one there govern the folders found (as the module
    says). Whether the file was written."""
    made, kept = lists
    path = root / RULES_FILE
    if not path.exists():
        atomic_write(path, (rules_text(found, features) if found else RULES).encode("utf-8"))
        made.append(RULES_FILE)
        return True
    try:
        rules = RuleSet(root)
        missing = ungoverned(rules, found)
    except CascadeError as exc:  # a rule file that does not read: kept, and said
        print(f"cascade: {exc}: {RULES_FILE} kept as it is")
        kept.append(RULES_FILE)
        return False
    text = read(path)
    folders = ", ".join(f"{f.folder}/" for f in missing)
    if missing and text == RULES:
        atomic_write(path, rules_text(found, features).encode("utf-8"))
        made.append(f"{RULES_FILE} (the presets init wrote, replaced: rules for {folders})")
        return True
    if missing and named:
        taken = {r.name for r in rules.rules_in("")}
        more = extended_rules(text, missing, taken)
        if more is not None:
            atomic_write(path, more.encode("utf-8"), path.stat().st_mode)
            names = ", ".join(repr(f.name) for f in missing)
            made.append(f"{RULES_FILE} (added rule {names} for {folders})")
            return True
    kept.append(RULES_FILE)
    for f in missing:
        print(f"your {RULES_FILE} governs nothing under {f.folder}/: add this rule to it "
              f"(under rules:)\n{f.yaml().rstrip()}")
    return False


def ungoverned(rules: RuleSet, found: list) -> list:
    """The folders found whose documents no rule governs (an empty folder: a document that
    would be there)."""
    out = []
    for f in found:
        probes = f.documents or [f"{f.folder}/x/index.md" if f.shape == "folder-per-ADR"
                                 else f"{f.folder}/0001-x.md"]
        if all(rules.governing(p) is None for p in probes):
            out.append(f)
    return out


def committed(root: Path, rel: str) -> bool:
    """Whether ``rel`` is tracked and as committed (no change staged or not)."""
    return bool(git(root, "ls-files", "--", rel).strip()) and not git(
        root, "status", "--porcelain", "--", rel).strip()


def say_next(root: Path, found: list) -> None:
    """The next step: commit what init wrote (when it wrote something), then a document in a
    folder a rule governs; never a folder none does."""
    pending = bool(git(root, "status", "--porcelain", "--", RULES_FILE, CONFIG, BASELINE,
                       ".gitattributes").strip())
    try:
        rules = RuleSet(root)
        folder = next((f.folder for f in found if not ungoverned(rules, [f])), None)
        preset = rules.governing("docs/adr/0001-x.md") is not None
    except CascadeError:
        return  # a rule file that does not read: said where init read it
    if found:
        if pending:
            print("next: commit init's files" + (
                f"; then commit a document under {folder}/ to see the panel at work"
                if folder else ""))
        elif folder is None:
            print(f"next: add the rule above to {RULES_FILE}")
        return
    if pending or not committed(root, RULES_FILE):
        print("next: cascade init --dir PATH (your ADR folder)" + (
            ", or commit init's files and put ADRs under docs/adr/" if preset else ""))


def read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
