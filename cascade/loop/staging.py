"""What the hook may stage of what it wrote, and staging it: the one place the tool writes
to git's index (the rules, and their reasons, as users read them: docs/hook.md, *Staging*).

Inside a commit the hook stages its own writes -- the ledger, a step protocol's record and
artifacts, the document whose status it moved, a ledger moved after its document -- so a
panel that reaches consensus lands in the same ``git commit``. A file is staged only where
that cannot touch the person's own unstaged work:

- its working-tree text before the hook wrote equals its staged text in the index git gave
  the hook (``GIT_INDEX_FILE``: ``.git/index`` for ``git commit``, ``.git/index.lock`` for
  ``-a``, ``.git/next-index-<pid>.lock`` for ``git commit <path>``), or it was in neither;
- for ``git commit <path>``, the same holds in the real index (``.git/index.lock``, which
  becomes ``.git/index``): it is staged there too, or the real index would show a staged
  revert of it after the commit;
- under pre-commit (``PRE_COMMIT=1``), the patch it stashed the unstaged edits into does not
  touch it: restoring a patch over a staged change to the same file fails and leaves the
  person's edit only in that patch. pre-commit names its patch to nobody: it is found by
  pre-commit's pid and start time, read from ``/proc``; without them (macOS, Windows), or
  when the patch cannot be read, nothing is staged, and one line says why.

Staging is off outside a commit, with ``CASCADE_STAGE=0``, and for a rule with ``stage:
false``: the appends stay in the working tree and the hook names the exact ``git add``. A
command a person runs on a ledger stages what it wrote under the same rule, in the real index
(``Written``).
"""
from __future__ import annotations

import contextlib
import os
import re
import shlex
from pathlib import Path
from typing import TextIO

from msgspec.structs import replace

from cascade.base.errors import CascadeError, display_path
from cascade.base.gitio import git, index_blobs, repo_root
from cascade.check.governance import inside, open_at
from cascade.loop.item import Item, Staged
from cascade.ledger.lock import ledger_lock
from cascade.protocol.record import artifact_paths
from cascade.base.revision import blob_id
from cascade.base.text import printable

_ABSENT = ""  # neither in the working tree nor in the index
PROC = Path("/proc")  # where the parent's command line and start time are read (Linux)
NO_PROC = ("nothing staged: under pre-commit the hook finds which files pre-commit stashed "
           "through /proc, which this system lacks; git add what it names (or use the plain "
           "git hooks, cascade init --plain, which stage)")
UNREADABLE = ("nothing staged: the hook cannot tell which files pre-commit stashed (its patch "
              "file cannot be found or read); git add what it names")
_DIFF = re.compile(r"^diff --git a/(.*) b/(.*)$")


def allowed() -> bool:
    """Whether ``CASCADE_STAGE`` lets the tool stage (it does unless set to 0/false/no/off)."""
    return os.environ.get("CASCADE_STAGE", "").strip().lower() not in ("0", "false", "no", "off")


def enabled() -> bool:
    """Whether this hook run may stage at all: inside a commit (git gave it an index file, or
    pre-commit runs it), unless ``CASCADE_STAGE`` says no."""
    return allowed() and (bool(os.environ.get("GIT_INDEX_FILE"))
                          or os.environ.get("PRE_COMMIT") == "1")


def pre_commit_touched() -> set[str] | None:
    """The paths pre-commit's stash patch touches (empty: it stashed nothing), or None when
    that cannot be told (the parent is not pre-commit, its cache cannot be read, a path in
    the patch is quoted)."""
    parent = os.getppid()
    started = _started(parent)
    if started is None:
        return None
    home = os.environ.get("PRE_COMMIT_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "pre-commit")
    folder = Path(os.path.realpath(home))
    try:
        names = [p.name for p in folder.iterdir()]
    except OSError:
        return None
    touched: set[str] = set()
    for name in names:
        m = re.fullmatch(rf"patch(\d+)-{parent}", name)
        if m is None or int(m.group(1)) < started - 1:
            continue  # another process's (an earlier pre-commit that had the same pid)
        try:
            lines = (folder / name).read_bytes().decode("utf-8", "surrogateescape").splitlines()
        except OSError:
            return None
        for line in lines:
            if not line.startswith("diff --git "):
                continue
            m = _DIFF.match(line)
            if m is None or '"' in line:
                return None  # a quoted or unusual path: cannot tell which file
            touched.update(m.groups())
    return touched


def _started(pid: int) -> float | None:
    """When process ``pid`` started (Unix time), if it is pre-commit; else None."""
    try:
        cmdline = (PROC / str(pid) / "cmdline").read_bytes()
        stat = (PROC / str(pid) / "stat").read_text()
        boot = next(float(line.split()[1]) for line in (PROC / "stat").read_text().splitlines()
                    if line.startswith("btime "))
    except (OSError, StopIteration, ValueError, IndexError):
        return None
    if b"pre_commit" not in cmdline and b"pre-commit" not in cmdline:
        return None
    try:
        ticks = int(stat.rsplit(")", 1)[1].split()[19])  # field 22: start time, in clock ticks
        return boot + ticks / os.sysconf("SC_CLK_TCK")
    except (ValueError, IndexError, OSError):
        return None


def _text_id(path: Path) -> str:
    """The blob id of a file's text; ``_ABSENT`` when there is none, "?" when it cannot be read
    (never staged)."""
    try:
        return blob_id(path.read_bytes())
    except FileNotFoundError:
        return _ABSENT
    except OSError:
        return "?"


class Stager:
    """Remembers the working-tree text of the files the hook is about to write, then stages
    those it may. ``active``: staging is on and it can be told what is safe."""

    def __init__(self, root: Path, on: bool | None = None) -> None:
        self.root = root
        self.before: dict[str, str] = {}  # path -> blob id of its text before the hook wrote
        self.active = enabled() if on is None else on
        self.touched: set[str] = set()
        self.indexes: list[str | None] = [None]  # None: the index git gave the hook
        self.why = ""  # staging was wanted and cannot be done safely: why, in one line
        if self.active and os.environ.get("PRE_COMMIT") == "1":
            touched = pre_commit_touched()
            if touched is None:
                self.active = False
                self.why = UNREADABLE if (PROC / "stat").is_file() else NO_PROC
            else:
                self.touched = touched
        index = os.environ.get("GIT_INDEX_FILE", "")
        if self.active and Path(index).name.startswith("next-index"):
            real = (root / index).parent / "index.lock"
            self.indexes.append(str(real) if real.is_file() else "")
            if not real.is_file():
                self.active = False

    def remember(self, *paths: str | None) -> None:
        """Note the text of ``paths`` before anything is written to them."""
        for path in paths:
            if path and path not in self.before:
                self.before[path] = _text_id(self.root / path)

    def may_write(self, path: str) -> bool:
        """Whether a write to ``path`` is safe from pre-commit's stash: not when its patch
        holds an edit of ``path`` (restoring it over the write would fail). Elsewhere the
        caller's own check (the file equals the staged text) decides."""
        return path not in self.touched

    def stageable(self, paths: list[str]) -> set[str]:
        """Of ``paths`` (remembered before the writes), those whose earlier text is what every
        index concerned holds (or that were in none), and that no stash patch touches."""
        if not self.active:
            return set()
        wanted = [p for p in paths if p in self.before and p not in self.touched
                  and self.before[p] != "?"]
        ok = set(wanted)
        for index in self.indexes:
            staged = index_blobs(self.root, wanted, index)
            ok &= {p for p in wanted if staged.get(p, _ABSENT) == self.before[p]}
        return ok

    def stage(self, paths: list[str]) -> bool:
        """``git add -A`` the paths (a removed one is staged as removed) in every index
        concerned; False when git refused (nothing is then counted as staged)."""
        if not paths:
            return True
        for index in self.indexes:
            try:
                git(self.root, "add", "-A", "--", *paths, index=index)
            except CascadeError:  # git refused (an ignored path, a lock): not staged
                return False
        return True


class Written:
    """What a command run by a person writes beside one ledger (the ledger, its record and
    artifacts, the document whose status moved), staged in the index where that cannot touch
    the person's unstaged work (``Stager``'s rule). Made before the writes (``d``: the
    Discussion, ``rule``: its rule or None); ``finish`` after them; ``line`` says what
    happened, ``say`` prints it. Outside a git repository nothing is staged and nothing said."""

    def __init__(self, d, rule=None) -> None:
        try:
            self.root: Path | None = repo_root(Path(d.path).parent)
        except CascadeError:
            self.root = None
        self.staged: list[str] = []
        self.kept = False  # staging was on, and a changed file held unstaged work
        self.left: list[str] = []  # changed (or named by ``also``) and not staged
        self.paths: list[str] = []  # what it may stage: the ledger first
        if self.root is None:
            return
        try:
            ledger = Path(os.path.realpath(d.path)).relative_to(os.path.realpath(self.root))
        except ValueError:
            self.root = None
            return
        on = allowed() and getattr(rule, "stage", True) is not False
        self.stager = Stager(self.root, on=on)
        self.paths = [ledger.as_posix(), *([d.source] if d.source else []),
                      *(p.as_posix() for p in artifact_paths(ledger, d.protocol.steps))]
        self.stager.remember(*self.paths)
        self.extra: list[str] = []
        if not index_blobs(self.root, self.paths[:1]):  # a ledger nobody added to git yet
            self.stager.active = False  # the person adds it (a governed one), or not at all
            if rule is None:  # a topic's, which may be a scratch discussion: nothing said
                self.paths = []

    def also(self, path: str) -> None:
        """``path`` (repository-relative) is for the person to stage with what was written."""
        if self.root is not None and path not in self.extra:
            self.extra.append(path)

    def finish(self) -> None:
        """Stage, of the files the command changed, those it may."""
        if self.root is None:
            return
        changed = [p for p in self.paths
                   if _text_id(self.root / p) != self.stager.before.get(p)]
        ok = self.stager.stageable(changed)
        if not self.stager.stage([p for p in changed if p in ok]):
            ok = set()
        self.staged = [p for p in changed if p in ok]
        self.kept = self.stager.active and any(p not in ok for p in changed)
        self.left = list(dict.fromkeys(p for p in changed + self.extra if p not in ok))

    def line(self) -> str | None:
        """One line: what was staged, and the ``git add`` for the rest (None: nothing to say)."""
        def shown(paths: list[str]) -> str:
            return " ".join(shlex.quote(display_path(self.root / p))  # type: ignore[operator]
                            for p in paths)
        if self.staged and not self.left:
            return f"Staged {shown(self.staged)}: commit when ready."
        if self.staged:
            return f"Staged {shown(self.staged)}; stage the rest and commit: git add " \
                   f"{shown(self.left)}"
        if self.left:
            why = " (not staged for you: it already held changes that were not staged)" if self.kept else ""
            return f"Stage it and commit: git add {shown(self.left)}{why}"
        return None

    def say(self) -> None:
        """Print ``line`` (nothing when there is nothing to say)."""
        if staging := self.line():
            print(printable(staging))


def artifacts(item: Item) -> list[str]:
    """The record and artifacts a step protocol keeps beside ``item``'s ledger."""
    d = item.ran.discussion
    if d is None:
        return []
    return [p.as_posix() for p in artifact_paths(Path(item.ledger), d.protocol.steps)]


def stage_items(stager: Stager, items: list[Item], out: TextIO) -> list[Item]:
    """``stage_item`` for each item; when staging was wanted and cannot be done safely (under
    pre-commit, its stash unknown), one line says so and why."""
    staged = [stage_item(stager, item, out) for item in items]
    if stager.why and any(i.ran.appended for i in items):
        print(f"cascade: {stager.why}", file=out)
    return staged


def stage_item(stager: Stager, item: Item, out: TextIO) -> Item:
    """Stage what the hook wrote for ``item`` where it may: the ledger -- moved beside its
    renamed document first --, the record and artifacts, the document whose status moved.
    Returns the item with what was staged (``Staged``), and in ``ran.also_add`` only what the
    person still has to stage."""
    if item.problems or item.ran.discussion is None or getattr(item.rule, "stage", True) is False:
        return item
    root = stager.root
    also_add = list(item.ran.also_add)
    extras = [p for p in artifacts(item) if (root / p).is_file() and p not in also_add]
    removed: list[str] = []
    if item.move_to:
        removed = _move(stager, item, extras, out)
        if not removed:  # not moved: the person moves it (the hint says how)
            return replace(item, ran=replace(item.ran, also_add=tuple(also_add + extras)))
        item = replace(item, ledger=item.move_to, move_to=None)
        extras = [p for p in artifacts(item) if (root / p).is_file()]
    wrote = [item.ledger, *also_add, *extras]
    # a moved file was checked at its old place
    ok = stager.stageable([p for p in wrote if not removed or p in also_add])
    ok |= {p for p in wrote if removed and p not in also_add}
    if not stager.stage(removed + [p for p in wrote if p in ok]):
        ok = set()
    doc_data, doc_blob = item.doc_data, item.doc_blob
    if item.doc in ok and item.doc not in removed:  # its status moved: that text is committed
        doc_data = (root / item.doc).read_bytes()
        doc_blob = blob_id(doc_data)
    left = tuple(p for p in also_add + extras if p not in ok)
    ledger_staged = item.ledger in ok
    return replace(item, doc_data=doc_data, doc_blob=doc_blob,
                   ran=replace(item.ran, also_add=left),
                   staged=Staged(tuple(p for p in wrote if p in ok), ledger_staged,
                                 ledger_staged and not left))


def _move(stager: Stager, item: Item, extras: list[str], out: TextIO) -> list[str]:
    """The document was renamed in this commit: its ledger (and record, artifacts) follow
    it, when nobody has unstaged work in them and the new place is free. Returns the old
    paths (to stage as removed), or [] when nothing moved."""
    root = stager.root
    old_ledger, new_ledger = Path(item.ledger), Path(item.move_to)
    pairs = [(item.ledger, item.move_to)] + [
        (p, (new_ledger.parent / Path(p).relative_to(old_ledger.parent)).as_posix())
        for p in extras]
    olds, news = [o for o, _ in pairs], [n for _, n in pairs]
    if any((root / n).exists() for n in news) or index_blobs(root, news) or \
            len(stager.stageable(olds)) != len(olds):
        return []
    for old, new in pairs:
        (root / new).parent.mkdir(parents=True, exist_ok=True)
        os.replace(root / old, root / new)
    print(f"cascade: {item.doc}: renamed from {item.renamed_from}: its discussion moved "
          f"with it, {item.ledger} -> {item.move_to}", file=out)
    item.ran.discussion.path = root / new_ledger  # type: ignore[union-attr]
    return olds


@contextlib.contextmanager
def writing_staged(path: str | Path, holder: str):
    """``cascade.check.governance.writing``, yielding also a ``Written``: when the block ends
    without an error, what it wrote is staged where that is safe (``written.line()`` says
    what), the lock still held."""
    ledger, doc, rule = inside(path)
    with ledger_lock(ledger, holder=holder):
        d = open_at(path, ledger, doc, rule)
        written = Written(d, rule)
        yield d, written
        written.finish()
