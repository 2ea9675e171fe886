"""Decision drift: the commits since a decision was accepted that changed the paths it
governs. No model; read from git objects at ``ref`` only (docs/configuration.md, *What a
decision governs and its drift*).

A decision is a governed document whose own status says accepted (cascade.base.docstatus)
-- or, stating none, whose ledger's last outcome is READY -- and that names the paths it
governs: its own ``governs:`` (repository-relative), else its rule's (relative to the rule
file's folder). It was accepted by the commit whose version first said so, in the latest run
of versions that all say so; without a status, by the commit that appended the ledger's last
``OUTCOME: READY`` (ledgers only grow: the versions are searched by halves). Drift is every
later commit (merges aside) that changed a governed path.

Git calls: one ``git log`` for the histories, a few ``cat-file`` batches, one ``git log`` per
decision.
"""
from __future__ import annotations

import posixpath
from bisect import bisect_left
from pathlib import Path

from msgspec import Struct, field

from cascade.check.documents import find_ledgers, governed
from cascade.check.gittree import Blobs, Tree
from cascade.config.rules import Rule
from cascade.base.docstatus import find, governs, superseded_by
from cascade.base.errors import CascadeError
from cascade.base.gitio import BlobReader, git
from cascade.ledger.records import OUTCOME
from cascade.ledger.parse import parse
from cascade.config.globs import glob_match
from cascade.config.ruleset import RULES_FILE, RuleSet

_WILD = "*?["


class Commit(Struct):
    """A commit that changed governed paths: its id, short id, date, author, subject and the
    governed paths it changed."""

    id: str
    short: str
    date: str
    author: str
    subject: str
    paths: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        return {"commit": self.id, "date": self.date, "author": self.author,
                "subject": self.subject, "paths": self.paths}


class Decision(Struct):
    """An accepted decision that governs paths: its document, rule and ledger; the globs
    (repository-relative), and where they are said (``source``:``line``); the commit that
    accepted it (None: not found in the history) and what drifted since."""

    doc: str
    rule: Rule
    ledger: str
    globs: tuple[str, ...]
    source: str
    line: int
    by_status: bool  # accepted by its status (else by its ledger's outcome)
    outcome_line: bytes = b""
    accepted: str | None = None
    accepted_date: str = ""
    drift: list[Commit] = field(default_factory=list)

    def governs(self, path: str) -> bool:
        return any(glob_match(g, path) for g in self.globs)

    def as_dict(self) -> dict[str, object]:
        return {"document": self.doc, "ledger": self.ledger, "governs": list(self.globs),
                "accepted": self.accepted, "accepted_date": self.accepted_date,
                "commits": [c.as_dict() for c in self.drift]}


def any_rule(rules: RuleSet, tree: Tree, wanted) -> bool:
    """Whether a committed rule file holds a rule ``wanted(rule)`` says yes to."""
    folders = sorted(posixpath.dirname(p) for p in tree.files
                     if p == RULES_FILE or p.endswith("/" + RULES_FILE))
    return any(wanted(rule) for folder in folders for rule in rules.rules_in(folder))


def _within(path: str, paths: list[str] | None) -> bool:
    if paths is None:
        return True
    return any(p in ("", ".") or path == p or path.startswith(p.rstrip("/") + "/")
               for p in paths)


def _safe(glob: str, where: str, line: int) -> str:
    """A document's glob, checked to stay inside the repository (``./`` dropped)."""
    while glob.startswith("./"):
        glob = glob[2:]
    parts = glob.split("/")
    if glob.startswith(("/", "~")) or ".." in parts or not glob.strip():
        raise CascadeError(f"governs path {glob!r} must stay inside the repository (no "
                           "leading /, no ..)", where, line)
    return glob


def accepted_words(rule: Rule) -> tuple[str, ...]:
    """The statuses that say accepted: ``accepted``, and the word the rule's ``status:``
    writes at consensus READY (``Approved``)."""
    word = (rule.status or {}).get("READY", "")
    return tuple(dict.fromkeys(w.lower() for w in ("accepted", word) if w))


def _accepted_status(text: str, words: tuple[str, ...] = ("accepted",)) -> bool | None:
    """True: the document says accepted (one of ``words``); False: it says something else
    (proposed, superseded, ...); None: it states no status."""
    found = find(text)
    if found is None or not found.value.strip():
        return None
    if superseded_by(text) is not None:
        return False
    return found.value.strip().lower().startswith(words)


def _ledger_outcome(data: bytes | None) -> bytes | None:
    """The line of the ledger's last OUTCOME event, when it is READY."""
    if data is None:
        return None
    text = data.decode("utf-8", "replace")
    events = [e for e in parse(text, details=False).events if e.kind == OUTCOME]
    if not events or not events[-1].value.strip().upper().startswith("READY"):
        return None
    lines = data.split(b"\n")
    at = events[-1].line
    for i in (at, at - 1):  # the line, 0- or 1-based
        if 0 <= i < len(lines) and OUTCOME.encode() in lines[i]:
            return lines[i]
    return None


def decisions(tree: Tree, rules: RuleSet, paths: list[str] | None = None,
              wanted=None) -> list[Decision]:
    """The accepted decisions at the tree that govern paths (below ``paths``, when given; of
    the rules ``wanted(rule)`` accepts, when given)."""
    docs = governed([p for p in tree.files if _within(p, paths)], rules)
    if wanted is not None:
        docs = {d: r for d, r in docs.items() if wanted(r)}
    tree.blobs.fetch([tree.files[d] for d in docs])
    out = []
    for item in find_ledgers(docs, tree):
        text = tree.data(item.doc).decode("utf-8", "replace")
        own = governs(text)
        if own is not None and own.bad:
            raise CascadeError(f"governs must be a path or a list of paths, not {own.bad!r}",
                               item.doc, own.line)
        if own is not None and own.paths:
            globs = tuple(_safe(g, item.doc, own.line) for g in own.paths)
            source, line = item.doc, own.line
        elif item.rule.governs:
            base = item.rule.base
            globs = tuple(posixpath.join(base, g) if base else g for g in item.rule.governs)
            source = str(item.rule.file)
            line = item.rule.line_of("governs")
        else:
            continue
        status = _accepted_status(text, accepted_words(item.rule))
        outcome = None
        if status is None and item.ledger in tree.files:
            outcome = _ledger_outcome(tree.data(item.ledger))
        if status or outcome is not None:
            out.append(Decision(item.doc, item.rule, item.ledger, globs, source, line,
                                by_status=bool(status), outcome_line=outcome or b""))
    return out


def _histories(root: Path, ref: str, paths: list[str]) -> dict[str, list[tuple[str, str | None]]]:
    """{path: [(commit, blob or None when deleted)]}, newest first: one ``git log``."""
    if not paths:
        return {}
    out = git(root, "--literal-pathspecs", "log", "--no-abbrev", "--format=%x01%H", "-z",
              "--raw", "--no-renames", "--full-history", ref, "--", *paths)
    wanted = set(paths)
    found: dict[str, list[tuple[str, str | None]]] = {p: [] for p in paths}
    for chunk in out.decode("utf-8", "surrogateescape").split("\x01")[1:]:
        fields = chunk.split("\0")
        commit = fields[0].strip()
        i = 1
        while i + 1 < len(fields):
            meta, path = fields[i].strip(), fields[i + 1]
            i += 2
            if not meta.startswith(":") or path not in wanted:
                continue
            blob = meta.split()[3]
            found[path].append((commit, None if set(blob) == {"0"} else blob))
    return found


def _by_status(decision: Decision, versions: list[tuple[str, str | None]],
               blobs: Blobs) -> str | None:
    """The commit of the oldest version in the newest run of versions that say accepted."""
    blobs.fetch([b for _, b in versions if b])
    accepted = None
    for commit, blob in versions:
        text = blobs.get(blob).decode("utf-8", "replace") if blob is not None else None
        if text is None or not _accepted_status(text, accepted_words(decision.rule)):
            break
        accepted = commit
    return accepted


def _by_outcome(decision: Decision, versions: list[tuple[str, str | None]],
                reader: BlobReader) -> str | None:
    """The commit that appended the ledger's last ``OUTCOME: READY``: the oldest version
    that holds its line (ledgers only grow: searched by halves, newest run of versions)."""
    run = []
    for commit, blob in versions:
        if blob is None:
            break
        run.append((commit, blob))
    run.reverse()  # oldest first: the versions without the line, then those with it
    lo = bisect_left(run, True, key=lambda v: decision.outcome_line in reader.read(v[1]))
    return run[lo][0] if lo < len(run) else None


def find_accepted(root: Path, ref: str, found: list[Decision], blobs: Blobs) -> None:
    """Set each decision's ``accepted`` commit (and its date)."""
    paths = list(dict.fromkeys([d.doc if d.by_status else d.ledger for d in found]))
    histories = _histories(root, ref, paths)
    with BlobReader(root) as reader:
        for d in found:
            if d.by_status:
                d.accepted = _by_status(d, histories.get(d.doc, []), blobs)
            else:
                d.accepted = _by_outcome(d, histories.get(d.ledger, []), reader)


def _prefix(glob: str) -> str:
    """The folder a glob stays within ("" when it may match anywhere)."""
    cut = min([glob.find(c) for c in _WILD if c in glob] or [len(glob)])
    if cut == len(glob):
        return glob
    return glob[:cut].rpartition("/")[0]


def commits_since(root: Path, ref: str, d: Decision) -> list[Commit]:
    """The commits after ``d.accepted`` up to ``ref`` (merges aside) that changed a path
    ``d`` governs, newest first: one ``git log``."""
    prefixes = [_prefix(g) for g in d.globs]
    spec = [] if "" in prefixes else ["--", *dict.fromkeys(prefixes)]
    since = f"{d.accepted}..{ref}" if d.accepted else ref
    out = git(root, "--literal-pathspecs", "log", "--no-merges", "-z", "--name-only",
              "--date=short", "--format=%x01%H%x00%h%x00%ad%x00%an%x00%s", since, *spec)
    result = []
    for chunk in out.decode("utf-8", "surrogateescape").split("\x01")[1:]:
        fields = chunk.split("\0")
        if len(fields) < 5:
            continue
        names = [f.lstrip("\n") for f in fields[5:]]
        paths = [p for p in names if p and d.governs(p)]
        if paths:
            result.append(Commit(fields[0], fields[1], fields[2], fields[3], fields[4], paths))
    return result


def accepted_date(root: Path, found: list[Decision]) -> None:
    commits = [d.accepted for d in found if d.accepted]
    if not commits:
        return
    out = git(root, "show", "-s", "--date=short", "--format=%H %ad", *dict.fromkeys(commits))
    dates = dict(line.split(" ", 1) for line in out.decode().splitlines() if " " in line)
    for d in found:
        d.accepted_date = dates.get(d.accepted or "", "")


def drifted(root: Path, tree: Tree, rules: RuleSet, paths: list[str] | None = None,
            wanted=None) -> list[Decision]:
    """Every accepted decision at ``tree`` that governs paths, with its drift (empty: none)."""
    found = decisions(tree, rules, paths, wanted)
    if not found:
        return []
    find_accepted(root, tree.commit, found, tree.blobs)
    accepted_date(root, found)
    for d in found:
        d.drift = commits_since(root, tree.commit, d) if d.accepted else []
    return found


def drift_notices(root: Path, tree: Tree, rules: RuleSet) -> list[tuple[str, int, str]]:
    """``cascade check``'s warnings: (document, line, message) for each drifted decision of
    a rule with ``drift: warn``; none (and no git call) when no rule asks for them."""
    if not any_rule(rules, tree, lambda r: r.drift):
        return []
    out = []
    for d in drifted(root, tree, rules, wanted=lambda r: r.drift):
        if not d.drift:
            continue
        shown = ", ".join(f"{c.short} {c.subject!r}" for c in d.drift[:3])
        more = f" and {len(d.drift) - 3} more" if len(d.drift) > 3 else ""
        line = d.line if d.source == d.doc else 1
        message = (f"decision drift: {len(d.drift)} commit(s) since it was accepted at "
                   f"{(d.accepted or '')[:7]} changed the paths it governs "
                   f"({', '.join(d.globs)}): {shown}{more} -- `cascade drift` lists them")
        out.append((d.doc, line, message))
    return out
