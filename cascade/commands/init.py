from __future__ import annotations

import shutil
import stat
import subprocess
import sys
from collections import Counter
from pathlib import Path

from cascade.base.atomic import atomic_write
from cascade.check.baseline import BASELINE, parse, render
from cascade.config.precommit import CONFIG, has_hook, hook_filter
from cascade.base.errors import CascadeError
from cascade.base.gitio import git, records, repo_root, tracked
from cascade.config.globs import glob_match
from cascade.config.adr_conventions import ADR_DIR_FILE, LOG4BRAINS_FILE
from cascade.config.layout import LOOKED_FOR, find_layout, log4brains_folders, status_words
from cascade.config.yamlio import load_yaml
from cascade.config.ruleset import RULES_FILE, RuleSet
from cascade.commands.init_rules import committed, read, say_next, write_rules
from cascade.base.resources import LEDGER_SUFFIX, bundled

PRECOMMIT_LOCAL = """\
# The CascadingDev gate runs on every commit; the check runs in CI (pre-commit run
# cascade-check --hook-stage manual --from-ref {base} --to-ref HEAD).
#
# language: system -- EVERY TEAMMATE NEEDS `cascade` ON PATH (pip install cascadingdev): the
# hook runs on every commit, and returns at once when no rule governs what it changes.
# Better: `cascade init --repo <cascadingdev git URL> --rev <tag>` writes a `repo:` entry
# instead, and pre-commit installs cascade itself.
# Give the cascade hook no filter on paths: one written from today's rules would hide the
# documents of a rule added tomorrow.
ci:
  skip: [cascade]   # pre-commit.ci: the gate needs a model; CI runs `cascade check`
repos:
  - repo: local
    hooks:
      - id: cascade
        name: cascade (AI design review)
        entry: cascade hook
        language: system
        require_serial: true
        verbose: true     # a passing review's open findings and questions reach the author
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
# cascade-check --hook-stage manual --from-ref {base} --to-ref HEAD).
ci:
  skip: [cascade]   # pre-commit.ci: the gate needs a model; CI runs `cascade check`
repos:
  - repo: {repo}
    rev: {rev}
    hooks:
      - id: cascade
      - id: cascade-check
"""

HOOKS = ("pre-commit", "prepare-commit-msg")
_OURS = "CascadingDev"


def init(plain: bool, repo: str | None, rev: str | None, dirs: tuple[str, ...] = ()) -> int:
    root = repo_root()
    made: list[str] = []
    kept: list[str] = []
    found = _layout(root, tuple(_folder(root, d) for d in dirs))
    # a clone of a repository that adopted cascade: its rules are committed, as they are
    settled = (root / RULES_FILE).is_file() and committed(root, RULES_FILE)
    if not found and not settled:
        print(f"no ADR folder found (looked for {LOOKED_FOR}): the rules below are the presets "
              "(docs/adr/, docs/features/); name your folder with: cascade init --dir PATH")
    features = any(p.startswith("docs/features/") for p in tracked(root))
    changed = write_rules(root, found, features, bool(dirs), (made, kept))
    if changed or not settled:
        _report_rules(root, found)
    if plain:
        made += _install_plain(root)
    else:
        if bool(repo) != bool(rev):
            raise CascadeError("--repo and --rev go together")
        base = _default_branch(root)
        config = (PRECOMMIT_REMOTE.format(repo=repo, rev=rev, base=base) if repo
                  else PRECOMMIT_LOCAL.format(base=base))
        if (root / CONFIG).exists():
            kept.append(CONFIG)
        else:
            atomic_write(root / CONFIG, config.encode("utf-8"))
            made.append(CONFIG)
            if not repo:
                print("note: the cascade hook is `language: system`: every teammate needs "
                      "`cascade` on PATH (pip install cascadingdev) to commit a governed "
                      "document; `cascade init --repo URL --rev TAG` lets pre-commit install it "
                      "instead")
    _write_baseline(root, made, kept, extend=changed)
    made += _register_merge_driver(root, kept)
    _say_done(root, made, kept)
    if not plain:
        if shutil.which("pre-commit"):
            proc = subprocess.run(["pre-commit", "install"], cwd=root, capture_output=True,
                                  text=True)
            print(proc.stdout.strip() or proc.stderr.strip())
        elif not (_hooks_dir(root) / "pre-commit").exists():
            print("next: pip install pre-commit && pre-commit install")
    say_next(root, found)
    return 0


def _say_done(root: Path, made: list[str], kept: list[str]) -> None:
    """What init wrote; what it kept that is worth a word: a file not committed yet (yours,
    or an earlier init's), a config without the cascade hook, git config of another value."""
    for name in made:
        print(f"wrote {name}" if not name.startswith("registered ") else name)
    for name in kept:
        if name == CONFIG:
            text = read(root / CONFIG)
            if not has_hook(text):
                print(f"kept your {name} as it is; add the cascade hook to it (see README)")
            elif not committed(root, name):
                print(f"kept your {name} as it is")
            _warn_filter(root)
        elif not name.startswith((RULES_FILE, BASELINE)) or not committed(root, name):
            print(f"kept your {name} as it is")


def _default_branch(root: Path) -> str:
    """The branch a pull request is checked against: origin's HEAD (``origin/master`` in
    adr-tools), else ``origin/`` and the local main or master, else origin/main."""
    head = git(root, "symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD",
               check=False).decode().strip()
    if head:
        return head
    for name in ("main", "master"):
        if git(root, "rev-parse", "--verify", "--quiet", f"refs/heads/{name}",
               check=False).strip():
            return f"origin/{name}"
    return "origin/main"


def _folder(root: Path, given: str) -> str:
    """A folder named with --dir, relative to the top of the repository; it must be inside."""
    path = (Path.cwd() / given).resolve()
    if not path.is_relative_to(root.resolve()) or path == root.resolve():
        raise CascadeError(f"--dir {given}: not a folder inside the repository ({root})")
    if path.exists() and not path.is_dir():
        raise CascadeError(f"--dir {given}: not a folder", path)
    return path.relative_to(root.resolve()).as_posix()


def _warn_filter(root: Path) -> None:
    """A kept config whose cascade hook has a files:/exclude: filter: say which governed
    documents it hides now, and that it will hide a new rule's."""
    view = hook_filter(read(root / CONFIG))
    if view is None:
        return
    try:
        rules = RuleSet(root)
        hidden = [p for p in tracked(root) if rules.governing(p) and view.hides(p)]
    except CascadeError:
        hidden = []
    now = (f"it hides {len(hidden)} governed document(s) now (e.g. {hidden[0]}); " if hidden
           else "")
    print(f"warning: {CONFIG}: the cascade hook runs only for {view.describe()}: {now}a "
          "document of a rule added later is never reviewed. Remove that filter from the "
          "cascade hook: it returns at once on a commit no rule governs")


def _layout(root: Path, dirs: tuple[str, ...]) -> list:
    adr_dir = root / ADR_DIR_FILE
    text = adr_dir.read_text(errors="replace") if adr_dir.is_file() else None
    l4b = root / LOG4BRAINS_FILE
    log4brains = log4brains_folders(load_yaml(l4b)) if l4b.is_file() and not dirs else []
    found = find_layout(tracked(root), text, dirs, log4brains)
    for f in found:  # the status words its ADRs use, for its rule to write at consensus
        f.status = status_words([read(root / p) for p in f.documents])
    return found


def _report_rules(root: Path, found: list) -> None:
    """Print what was found and how many tracked documents each rule of .ai-rules.yml (as it
    now is: written, or the user's) governs."""
    for f in found:
        how = {ADR_DIR_FILE: f"from {ADR_DIR_FILE}", LOG4BRAINS_FILE: f"from {LOG4BRAINS_FILE}",
               "--dir": "named"}.get(f.source, "found")
        print(f"{how}: ADRs in {f.folder}/ ({f.shape})")
        if f.status is not None:
            print(f"  their status words: {f.status['READY']} (accepted), {f.status['REJECT']} "
                  "(rejected): the rule writes them at consensus")
    try:
        rules = RuleSet(root)
        governing = [rules.governing(path) for path in tracked(root)]
        counts = Counter((r.name, r.where(root)) for r in governing if r is not None)
        folders = {p.rsplit("/", 1)[0] if "/" in p else "" for p in tracked(root)
                   if p.rsplit("/", 1)[-1] == RULES_FILE}
        if (root / RULES_FILE).is_file():
            folders.add("")
        seen = {(rule.name, rule.where(root)): rule for folder in sorted(folders)
                for rule in rules.rules_in(folder)}
    except CascadeError as exc:
        print(f"cascade: {exc}: not counting governed documents")
        return
    for key, rule in seen.items():
        print(f"rule {rule.name!r} ({key[1]}): {', '.join(rule.match)} -> governs {counts[key]} "
              f"document(s)")


def _write_baseline(root: Path, made: list[str], kept: list[str], extend: bool = False) -> None:
    """Record every governed document committed at HEAD with its blob: legacy documents need
    no ledger until they change (cascade.check.baseline). ``extend``: the rules changed, so a
    baseline there gets the documents they now govern, appended (its lines kept as they are)."""
    path = root / BASELINE
    if path.exists() and not extend:
        kept.append(BASELINE)
        return
    head = git(root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", check=False).strip()
    if not head:
        return
    entries = _legacy(root)
    old = path.read_bytes() if path.exists() else None
    if old is not None:
        listed = parse(old.decode("utf-8", "replace"))
        entries = {rel: blob for rel, blob in entries.items() if rel not in listed}
        if not entries:
            kept.append(BASELINE)
            return
        lead = b"" if not old or old.endswith(b"\n") else b"\n"
        atomic_write(path, old + lead + "".join(f"{blob} {rel}\n" for rel, blob in sorted(
            entries.items())).encode("utf-8"))
        made.append(f"{BASELINE} ({len(entries)} more document(s) committed before adoption)")
        return
    if not entries:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, render(entries).encode("utf-8"))
    made.append(f"{BASELINE} ({len(entries)} document(s) committed before adoption: no ledger "
                "needed until they change)")


def _legacy(root: Path) -> dict[str, str]:
    """{path: blob} of the governed documents at HEAD that no ledger reviews yet."""
    try:
        rules = RuleSet(root)
        files = {rel: blob for (_mode, kind, blob), rel in records(git(
            root, "ls-tree", "-r", "-z", "--full-tree", "HEAD")) if kind == "blob"}
        entries = {}
        for rel, blob in files.items():
            rule = rules.governing(rel)
            if rule is None:
                continue
            if "{date}" not in rule.discussion:
                reviewed = rule.ledger_path(rel) in files
            else:
                ledger = rule.ledger_path(rel, date="*")
                reviewed = any(glob_match(ledger, p) for p in files if p.endswith(LEDGER_SUFFIX))
            if not reviewed:  # under review: its ledger decides, not the baseline
                entries[rel] = blob
    except CascadeError:
        return {}
    return entries


def _hooks_dir(root: Path) -> Path:
    hooks_dir = Path(git(root, "rev-parse", "--git-path", "hooks").decode().strip())
    return hooks_dir if hooks_dir.is_absolute() else root / hooks_dir


def _install_plain(root: Path) -> list[str]:
    hooks_dir = _hooks_dir(root)
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


# eol=lf: with core.autocrlf (Git for Windows' default) a checked-out ledger would have CRLF
# line ends, never equal to its staged text; the hook appends whole LF lines.
MERGE_ATTRIBUTE = "*.discussion.md merge=cascade-ledger text eol=lf"
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
        made.append(".gitattributes (merge=cascade-ledger: two appends to a ledger merge; eol=lf)")
    registered = False
    for key, value in MERGE_CONFIG:
        current = git(root, "config", "--local", "--get", key, check=False).decode().strip()
        if not current:
            git(root, "config", "--local", key, value)
            registered = True
        elif current != value:
            kept.append(f"git config {key} ({current!r})")
    if registered:
        made.append("registered the ledger merge driver in this clone (git config "
                    "merge.cascade-ledger.*)")
    return made

