"""The history walk (cascade.check.history): proving appends from what they appended must
find exactly what proving them from every version read and parsed whole finds.

Random histories are written into real repositories (``git fast-import``: appends of
structural lines to two ledgers, on a main line and a side branch, edits, renames, deletions
and re-adds, merges resolved every way, CRLF, final lines without a newline, bytes that are
not UTF-8) and checked by ``History`` and by ``reference`` below -- the rule as docs/ci.md
states it, done the straightforward way.
"""
from __future__ import annotations

import itertools
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from cascade.check.appendonly import first_edit, is_append
from cascade.check.gittree import Blobs, commit_diffs, commits
from cascade.check.history import History
from cascade.check.merge import merge_problem
from cascade.check.packs import Packs
from cascade.ledger.meaning import changed_by_append, merge_lost
from cascade.ledger.parse import parse
from cascade.base.resources import LEDGER_SUFFIX

DOC = "docs/a.md"
PIECES = [b"", b" ", b"---", b"--- ", b"Name: AI-Security", b"Name: Rob", b"VOTE: READY",
          b"VOTE: REJECT", b"```", b"~~~", b"    ```", b"<!-- DISCUSSION -->", b"<!-- DISCUSSION",
          b"<!-- Title: T -->", b"<!-- Source: docs/a.md -->", b"Source: docs/a.md", b"-->",
          b"<!-- VOTE-RESET: x -->", b"<!-- PHASE-TRANSITION: a -> b -->", b"text", b"more text",
          b"x\r", b"caf\xc3\xa9", b"\xe2\x82", b"\xff"]
RESOLUTIONS = ["both", "side first", "ours", "theirs", "evil"]


# ---- the reference: every version read and parsed whole -------------------------------------

def _is_ledger(path: str | None) -> bool:
    return path is not None and path.endswith(LEDGER_SUFFIX)


def _read(root: Path, blob: str) -> bytes:
    return subprocess.run(["git", "cat-file", "blob", blob], cwd=root, check=True,
                          capture_output=True).stdout


def _parsed(data: bytes):
    return parse(data.decode("utf-8", "replace"), details=False)


def reference(root: Path, walk: list[tuple[str, list[str]]]) -> tuple[list[tuple], set[str]]:
    """(problems, ledger paths added or deleted), as docs/ci.md states the rule."""
    appends, merges, deleted, recreated = [], [], [], set()
    sections = iter(commit_diffs(root, [(c, p) for c, ps in walk for p in (ps or [None])]))
    for commit, parents in walk:
        diffs = [next(sections) for _ in (parents or [None])]
        if len(parents) <= 1:
            for ch in diffs[0]:
                if ch.status in "AD":
                    recreated |= {p for p in (ch.path, ch.old_path) if _is_ledger(p)}
                if _is_ledger(ch.old_path) and ch.status in "MRT":
                    appends.append((commit, ch.path, ch.old_blob, ch.blob))
                elif _is_ledger(ch.old_path) and ch.status == "D":
                    deleted.append((commit, ch.old_path, ch.old_blob))
            continue
        results: dict[str, str] = {}
        for ch in (ch for changes in diffs for ch in changes):
            if _is_ledger(ch.path) and ch.blob:
                results[ch.path] = ch.blob  # type: ignore[index]
        for path, blob in results.items():
            versions = []
            for parent, changes in zip(parents, diffs):
                mine = [ch for ch in changes if ch.path == path]
                if not mine:
                    versions.append((parent, blob))
                elif mine[0].status in "MT" or (mine[0].status == "R"
                                                and _is_ledger(mine[0].old_path)):
                    versions.append((parent, mine[0].old_blob))
            if versions:
                merges.append((commit, path, versions, blob))
        gone = [{ch.old_path: ch.old_blob for ch in changes if ch.status == "D"
                 and _is_ledger(ch.old_path)} for changes in diffs]
        deleted += [(commit, path, blob) for path, blob in gone[0].items()
                    if all(path in other for other in gone[1:])]
    problems = []
    for commit, path, old_blob, new_blob in appends:
        old, new = _read(root, old_blob), _read(root, new_blob)
        if is_append(old, new):
            found = changed_by_append(_parsed(old), _parsed(new))
            if found:
                problems.append((path, found[0], f"an append in {commit[:7]} changes what the "
                                 f"earlier text says: {found[1]}", "meaning", commit))
        else:
            line, kind = first_edit(root, old_blob, new_blob, old)
            what = {"edited": "ledger text edited in", "removed": "ledger text removed in",
                    "inserted": "text inserted into the ledger's earlier text in"}[kind]
            problems.append((path, line, f"{what} {commit[:7]}", kind, commit))
    for commit, path, versions, blob in merges:
        parents = [(sha, _read(root, b)) for sha, b in versions]
        merged = _read(root, blob)
        found = merge_problem(parents, merged) or merge_lost(
            [(sha[:7], _parsed(data)) for sha, data in parents], _parsed(merged))
        if found:
            problems.append((path, found[0], f"merge {commit[:7]} {found[1]}", "merge", commit))
    for commit, path, blob in deleted:
        source = parse(_read(root, blob).decode("utf-8", "replace")).header.source
        if source and subprocess.run(["git", "cat-file", "-e", f"{commit}:{source}"], cwd=root,
                                     capture_output=True).returncode == 0:
            problems.append((path, 1, f"ledger deleted in {commit[:7]} while its document "
                             f"{source} still exists", "deleted", commit))
    return problems, recreated


# ---- histories -----------------------------------------------------------------------------

def fast_import(root: Path, history: list[tuple[list[int], dict[str, bytes]]],
                packing: str = "loose") -> list[str]:
    """Commit each (parents, tree) -- parents by index -- and return the commit ids. The
    objects end ``loose``, in the pack fast-import writes (``packed``: each version of a file
    a delta of the one before), or ``repacked`` as a clone has them (a version a delta of a
    later one)."""
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    out = []
    trees: list[dict[str, bytes]] = []
    for n, (parents, tree) in enumerate(history):
        out.append(b"commit refs/heads/main\nmark :%d\ncommitter T <t@example.com> %d +0000\n"
                   b"data 1\n%d\n" % (n + 1, 1700000000 + n, n % 10))
        base = trees[parents[0]] if parents else {}
        out += [b"from :%d\n" % (parents[0] + 1)] if parents else []
        out += [b"merge :%d\n" % (p + 1) for p in parents[1:]]
        for path, data in tree.items():
            if base.get(path) != data:
                out.append(b"M 100644 inline %s\ndata %d\n%s\n" % (path.encode(), len(data), data))
        out += [b"D %s\n" % path.encode() for path in base if path not in tree]
        trees.append(tree)
    marks = root / "marks"
    limit = 2**30 if packing == "loose" else 0  # fast-import unpacks fewer objects than this
    subprocess.run(["git", "-c", f"fastimport.unpackLimit={limit}", "fast-import", "--quiet",
                    f"--export-marks={marks}"], cwd=root, input=b"".join(out), check=True)
    if packing == "repacked":
        subprocess.run(["git", "repack", "-q", "-a", "-d", "-f", "--window=50", "--depth=50"],
                       cwd=root, check=True)
    ids = dict(line.split() for line in marks.read_text().splitlines())
    return [ids[f":{n + 1}"] for n in range(len(history))]


def play(ops: list[tuple]) -> list[tuple[list[int], dict[str, bytes]]]:
    """The commits a list of operations makes, on a main line and (after "branch") a side
    branch that "merge" brings back."""
    history: list[tuple[list[int], dict[str, bytes]]] = [([], {DOC: b"# A\n"})]
    heads = {"main": 0}
    paths = {"main": {0: "docs/l0.discussion.md", 1: "docs/l1.discussion.md"}}
    fork = 0
    for op in ops:
        kind = op[0]
        if kind == "branch":
            heads["side"], paths["side"], fork = heads["main"], dict(paths["main"]), heads["main"]
            continue
        if kind == "merge":
            if "side" in heads:
                merged = _merge(history[fork][1], history[heads["main"]][1],
                                history[heads["side"]][1], op[1])
                history.append(([heads["main"], heads.pop("side")], merged))
                heads["main"] = len(history) - 1
                paths["main"].update({k: v for k, v in paths.pop("side").items()
                                      if v in merged})
            continue
        head = "side" if op[1] and "side" in heads else "main"
        tree = dict(history[heads[head]][1])
        path = paths[head][op[2]]
        text = tree.get(path, b"")
        if kind == "append":
            pieces, end, crlf, mend = op[3:]
            sep = b"\r\n" if crlf else b"\n"
            if text and not text.endswith(b"\n") and mend:
                text += sep
            tree[path] = text + sep.join(pieces) + (sep if end else b"")
        elif kind == "edit" and text:
            cut = int(op[3] * len(text))
            tree[path] = text[:cut] + b"edited\n" + text[cut + 1:]
        elif kind == "rename" and path in tree:
            paths[head][op[2]] = new = f"docs/moved/{len(history)}-l{op[2]}.discussion.md"
            tree[new] = tree.pop(path)
        elif kind == "delete":
            tree.pop(path, None)
        if tree != history[heads[head]][1]:
            history.append(([heads[head]], tree))
            heads[head] = len(history) - 1
    return history


def _merge(base: dict[str, bytes], ours: dict[str, bytes], theirs: dict[str, bytes],
           how: str) -> dict[str, bytes]:
    out = dict(ours)
    for path in set(ours) | set(theirs):
        if path not in ours or path not in theirs:
            out[path] = ours.get(path, theirs.get(path))  # type: ignore[assignment]
            continue
        b, o, t = base.get(path, b""), ours[path], theirs[path]
        mine, other = (o[len(b):], t[len(b):]) if o.startswith(b) and t.startswith(b) else (o, b"")
        out[path] = {"both": b + mine + other, "side first": b + other + mine, "ours": o,
                     "theirs": t, "evil": b"```\n" + b + mine + other}[how]
    return out


def appended(ledger: int, *pieces: bytes, side: bool = False, end: bool = True,
             crlf: bool = False, mend: bool = True) -> tuple:
    return ("append", side, ledger, pieces, end, crlf, mend)


piece_lists = st.lists(st.sampled_from(PIECES), max_size=5).map(tuple)
operations = st.lists(st.one_of(
    st.tuples(st.just("append"), st.booleans(), st.integers(0, 1), piece_lists, st.booleans(),
              st.booleans(), st.booleans()),
    st.tuples(st.just("append"), st.booleans(), st.integers(0, 1), piece_lists, st.just(True),
              st.just(False), st.just(True)),
    st.tuples(st.just("edit"), st.booleans(), st.integers(0, 1), st.floats(0, 1)),
    st.tuples(st.sampled_from(["rename", "delete"]), st.booleans(), st.integers(0, 1)),
    st.tuples(st.just("branch")),
    st.tuples(st.just("merge"), st.sampled_from(RESOLUTIONS)),
), min_size=1, max_size=10)

OPEN_BLOCK = [appended(0, b"<!-- DISCUSSION -->", b"<!-- Source: docs/a.md -->", b"---",
                       b"Name: Rob", b"text"), appended(0, b"VOTE: REJECT", b"---")]
UNCLOSED_FENCE = [appended(0, b"---", b"Name: Rob", b"```", b"x"),
                  appended(0, b"```", b"---", b"Name: AI-Security", b"VOTE: READY", b"---")]
OPEN_HEADER = [appended(1, b"<!-- DISCUSSION", b"Title: T"),
               appended(1, b"Source: docs/a.md", b"-->", b"---", b"Name: Rob", b"ok", b"---")]
MERGE = [appended(0, b"---", b"Name: Rob", b"VOTE: READY", b"---"), ("branch",),
         appended(0, b"---", b"Name: Sam", b"side", b"---", side=True),
         appended(0, b"---", b"Name: Mo", b"main", b"---"), ("merge", "both"),
         appended(0, b"<!-- VOTE-RESET: x -->")]
# a merge that takes the side's version, where the other parent's ends inside a block
MERGE_OPEN = [appended(0, b"---", b"Name: Rob", b"text"), ("branch",),
              appended(0, b"VOTE: READY", b"---", side=True), ("merge", "theirs")]
RENAME = [appended(1, b"<!-- DISCUSSION -->", b"<!-- Source: docs/a.md -->", b"---",
                   b"Name: Rob", b"VOTE: REJECT", b"---"), ("rename", False, 1),
          appended(1, b"---", b"Name: Rob", b"VOTE: READY", b"---")]
READDED = [appended(0, b"<!-- DISCUSSION -->", b"<!-- Source: docs/a.md -->", b"---"),
           ("delete", False, 0), appended(0, b"---", b"Name: Rob", b"VOTE: READY", b"---"),
           appended(0, b"<!-- VOTE-RESET: x -->")]
CRLF = [appended(0, b"---", b"Name: Rob", b"text", crlf=True),
        appended(0, b"VOTE: READY", b"---", crlf=True)]
NO_FINAL_NEWLINE = [appended(0, b"---", b"Name: Rob", b"VOTE: REJECT", b"---", end=False),
                    appended(0, b"---", b"Name: Sam", end=False),
                    appended(0, b"VOTE: READY", mend=False), appended(0, b"more text")]
# the last line without its newline ends in CR, and the append begins with CRLF: the line is
# read again with one more CR (so "---" closes the block in the old text and not in the new)
CR_AT_THE_END = [appended(0, b"---", b"Name: Rob", b"text", b"---\r", end=False),
                 appended(0, b"", b"more text", crlf=True)]


@settings(max_examples=120, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(ops=operations, packing=st.sampled_from(["loose", "packed", "repacked"]))
@example(ops=OPEN_BLOCK, packing="loose")
@example(ops=UNCLOSED_FENCE, packing="loose")
@example(ops=OPEN_HEADER, packing="loose")
@example(ops=MERGE, packing="loose")
@example(ops=MERGE[:4] + [("merge", "evil")], packing="loose")
@example(ops=MERGE[:4] + [("merge", "theirs")], packing="loose")
@example(ops=MERGE_OPEN, packing="loose")
@example(ops=RENAME, packing="loose")
@example(ops=READDED, packing="loose")
@example(ops=CRLF, packing="loose")
@example(ops=NO_FINAL_NEWLINE, packing="loose")
@example(ops=CR_AT_THE_END, packing="loose")
def test_history_finds_what_reading_every_version_whole_finds(tmp_path_factory, ops, packing):
    root = tmp_path_factory.mktemp("history")
    ids = fast_import(root, play(ops), packing)
    walk = commits(root, ids[0], ids[-1])
    history = History(root, Blobs(root))
    found = [(p.file, p.line, p.reason, p.kind, p.commit) for p in history.check(walk)]
    want, recreated = reference(root, walk)
    assert found == want
    assert history.recreated == recreated


@pytest.mark.parametrize("ops, kinds", [
    (OPEN_BLOCK, ["meaning"]), (UNCLOSED_FENCE, ["meaning"]), (OPEN_HEADER, ["meaning"]),
    (MERGE, []), (MERGE[:4] + [("merge", "evil")], ["merge"]),
    (MERGE[:4] + [("merge", "theirs")], ["merge"]), (MERGE_OPEN, ["meaning", "merge"]),
    (RENAME, []), (READDED, ["deleted"]), (CRLF, ["meaning"]),
    (NO_FINAL_NEWLINE, ["edited", "meaning"]), (CR_AT_THE_END, ["meaning"]),
], ids=["open block", "unclosed fence", "open header", "merge", "evil merge", "dropping merge",
        "merge of an open block", "rename", "delete and re-add", "crlf", "no final newline",
        "cr at the end"])
def test_the_tricky_histories_find_what_they_should(tmp_path, ops, kinds):
    """The examples above, with the problems each must produce (so that the comparison with
    the reference is not between two silences)."""
    root = tmp_path / "repo"
    ids = fast_import(root, play(ops))
    walk = commits(root, ids[0], ids[-1])
    assert [p.kind for p in History(root, Blobs(root)).check(walk)] == kinds


# ---- appends proved from the packs (cascade.check.packs) -------------------------------------

def grown(edit_at: int | None = None,
          count: int = 24) -> list[tuple[list[int], dict[str, bytes]]]:
    """A ledger growing by a comment a commit; ``edit_at``: after that many, one commit
    rewrites a byte of the earlier text and the next puts it back with its append (so the
    version before the edit is the first bytes of the one after: only the edit is not an
    append, on either side)."""
    path = "docs/l0.discussion.md"
    text = b"<!-- DISCUSSION -->\n<!-- Source: docs/a.md -->\n"
    history: list[tuple[list[int], dict[str, bytes]]] = [([], {DOC: b"# A\n"})]
    for n in range(count):
        if n == edit_at:
            edited = text[:60] + b"X" + text[61:]
            history.append(([len(history) - 1], {DOC: b"# A\n", path: edited}))
        text += b"---\nName: Rob\nComment %d: the queue needs a bound%s\n---\n" % (n, b"." * 80)
        history.append(([len(history) - 1], {DOC: b"# A\n", path: text}))
    return history


@pytest.mark.parametrize("packing", ["loose", "packed", "repacked"])
def test_appends_proved_from_the_packs_find_what_reading_whole_finds(tmp_path, packing):
    """A clone stores an old version as the first bytes of a newer one, a commit the new one as
    the old one and more: either way an append is proved from the delta, and an edit (even one
    put back later) is still found."""
    root = tmp_path / "repo"
    ids = fast_import(root, grown(edit_at=12), packing)
    walk = commits(root, ids[0], ids[-1])
    found = [(p.file, p.line, p.reason, p.kind, p.commit)
             for p in History(root, Blobs(root)).check(walk)]
    assert found == reference(root, walk)[0]
    assert [(kind, commit) for *_, kind, commit in found] == [("edited", ids[13]),
                                                              ("edited", ids[14])]


def test_the_packs_prove_which_version_begins_which(tmp_path):
    """What Packs reads: after a commit's packing each new version is the old one and more;
    after a repack each old version is the first bytes of a later one."""
    root = tmp_path / "repo"
    ids = fast_import(root, grown(count=12), "packed")
    path = "docs/l0.discussion.md"
    versions = [subprocess.run(["git", "rev-parse", f"{c}:{path}"], cwd=root, check=True,
                               capture_output=True, text=True).stdout.strip() for c in ids[1:]]
    sizes = Blobs(root).sizes(versions)
    with Packs(root, len(ids[0])) as packs:
        for blob in versions:
            packs.locate(blob)
        for old, new in itertools.pairwise(versions):
            stored = packs.delta(new)
            assert stored is not None and stored.base == old
            assert stored.common == stored.base_size == sizes[old] < stored.size == sizes[new]
    subprocess.run(["git", "repack", "-q", "-a", "-d", "-f", "--window=50", "--depth=50"],
                   cwd=root, check=True)
    with Packs(root, len(ids[0])) as packs:
        for blob in versions:
            packs.locate(blob)
        assert packs.delta(versions[-1]) is None  # the newest is stored whole
        for k, old in enumerate(versions[:-1]):
            stored = packs.delta(old)
            assert stored is not None and stored.base in versions[k + 1:]
            assert stored.common == stored.size == sizes[old] < stored.base_size
