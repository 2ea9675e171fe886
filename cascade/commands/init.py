from __future__ import annotations

import shutil
import stat
import subprocess
import sys
from pathlib import Path

from cascade.atomic import atomic_write
from cascade.errors import CascadeError
from cascade.loop.gitio import git, repo_root
from cascade.resources import bundled

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

PRECOMMIT_LOCAL = """\
# The CascadingDev gate runs on every commit; the check runs in CI (pre-commit run
# cascade-check --hook-stage manual --from-ref origin/main --to-ref HEAD).
repos:
  - repo: local
    hooks:
      - id: cascade
        name: cascade (AI design review)
        entry: cascade hook
        language: system
        require_serial: true
        stages: [pre-commit]
      - id: cascade-check
        name: cascade check (no model calls)
        entry: cascade check
        language: system
        pass_filenames: false
        always_run: true
        stages: [pre-push, manual]
"""

PRECOMMIT_REMOTE = """\
# The CascadingDev gate runs on every commit; the check runs in CI (pre-commit run
# cascade-check --hook-stage manual --from-ref origin/main --to-ref HEAD).
repos:
  - repo: {repo}
    rev: {rev}
    hooks:
      - id: cascade
      - id: cascade-check
"""

HOOKS = ("pre-commit", "prepare-commit-msg")
_OURS = "CascadingDev"


def _write_new(path: Path, text: str, made: list[str], kept: list[str]) -> None:
    if path.exists():
        kept.append(path.name)
        return
    atomic_write(path, text.encode("utf-8"))
    made.append(path.name)


def init(plain: bool, repo: str | None, rev: str | None) -> int:
    root = repo_root()
    made: list[str] = []
    kept: list[str] = []
    _write_new(root / ".ai-rules.yml", RULES, made, kept)
    if plain:
        installed = _install_plain(root)
        made += installed
    else:
        if bool(repo) != bool(rev):
            raise CascadeError("--repo and --rev go together")
        config = PRECOMMIT_REMOTE.format(repo=repo, rev=rev) if repo else PRECOMMIT_LOCAL
        _write_new(root / ".pre-commit-config.yaml", config, made, kept)
    made += _register_merge_driver(root, kept)
    for name in made:
        print(f"wrote {name}")
    for name in kept:
        print(f"kept your {name} as it is" + (
            "; add the cascade hook to it (see README)" if name == ".pre-commit-config.yaml" else ""))
    if not plain:
        if shutil.which("pre-commit"):
            proc = subprocess.run(["pre-commit", "install"], cwd=root, capture_output=True,
                                  text=True)
            print(proc.stdout.strip() or proc.stderr.strip())
        else:
            print("next: pip install pre-commit && pre-commit install")
    print("next: commit a document under docs/adr/ to see the panel at work")
    return 0


def _install_plain(root: Path) -> list[str]:
    hooks_dir = Path(git(root, "rev-parse", "--git-path", "hooks").decode().strip())
    if not hooks_dir.is_absolute():
        hooks_dir = root / hooks_dir
    hooks_dir.mkdir(parents=True, exist_ok=True)
    foreign = [h for h in HOOKS if (hooks_dir / h).exists()
               and _OURS not in (hooks_dir / h).read_text(errors="replace")]
    if foreign:
        raise CascadeError(f"a {foreign[0]} hook is already installed; not replacing it "
                           "(move it aside, or call cascade from it)", hooks_dir / foreign[0])
    done = []
    for name in HOOKS:
        text = (bundled("hooks") / name).read_text()
        text = text.replace('PY="${CASCADE_PYTHON:-}"', f'PY="${{CASCADE_PYTHON:-{sys.executable}}}"')
        target = hooks_dir / name
        atomic_write(target, text.encode("utf-8"))
        target.chmod(target.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        done.append(f"{target.relative_to(root) if target.is_relative_to(root) else target}")
    return done


MERGE_ATTRIBUTE = "*.discussion.md merge=cascade-ledger"
MERGE_CONFIG = (("merge.cascade-ledger.name", "cascade ledger merge"),
                ("merge.cascade-ledger.driver", "cascade merge-driver %O %A %B %P"))


def _register_merge_driver(root: Path, kept: list[str]) -> list[str]:
    """Two branches that each append to a ledger merge without a conflict: the attribute in
    .gitattributes (appended when missing; the user's lines are kept as they are), the driver
    in this clone's git config (each clone runs ``cascade init``; where ``cascade`` is not on
    PATH, git reports the driver failed and leaves the usual conflict)."""
    made = []
    path = root / ".gitattributes"
    old = path.read_bytes() if path.exists() else b""
    lines = [ln.split() for ln in old.decode("utf-8", "replace").splitlines()]
    if MERGE_ATTRIBUTE.split() not in lines:
        newline = b"\r\n" if b"\r\n" in old.split(b"\n", 1)[0] + b"\n" else b"\n"
        lead = newline if old and not old.endswith(b"\n") else b""
        line = MERGE_ATTRIBUTE.encode() + newline
        atomic_write(path, old + lead + line, path.stat().st_mode if old else None)
        made.append(".gitattributes (merge=cascade-ledger: two appends to a ledger merge)")
    for key, value in MERGE_CONFIG:
        current = git(root, "config", "--local", "--get", key, check=False).decode().strip()
        if not current:
            git(root, "config", "--local", key, value)
        elif current != value:
            kept.append(f"git config {key} ({current!r})")
    return made

