"""Who added a line of a ledger: the author of the commit that added it.

A person's decision, and a person's vote that counts toward ``human_required``, count only when
the commit that added them is that person's (cascade.protocol.derivation.derive, ``authors``). In a
committed ledger that is ``git blame``; in a ledger a commit is about to hold (the hook, and
``status`` on the working tree), the lines HEAD already has are blamed at HEAD, the lines a
merge in progress brings from the other side are blamed there, and the rest are what the
commit being made adds: they are the identity it is made as (``git var GIT_AUTHOR_IDENT``).
"""
from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from cascade.base.errors import CascadeError
from cascade.base.gitio import git, merge_head, next_author, version_at
from cascade.protocol.discussion import Discussion


def committed(root: Path, ref: str, path: str, lines: Iterable[int]) -> dict[int, str]:
    """{line: "Name <email>"} of the commits that added ``lines`` of ``path`` at ``ref``."""
    wanted = sorted(set(lines))
    if not wanted:
        return {}
    ranges = [f"-L{n},{n}" for n in wanted]
    out = git(root, "blame", "--porcelain", *ranges, ref, "--", path, check=False)
    authors: dict[str, list[str]] = {}  # commit -> [name, email]
    found: dict[int, str] = {}
    commit, final = "", 0
    for raw in out.decode("utf-8", "replace").split("\n"):
        if raw.startswith("\t"):
            who = authors.get(commit)
            if who is not None:
                found[final] = f"{who[0]} <{who[1]}>"
            continue
        words = raw.split(" ")
        if len(words) >= 3 and len(words[0]) in (40, 64) and words[1].isdigit():
            commit, final = words[0], int(words[2])
            authors.setdefault(commit, ["", ""])
        elif raw.startswith("author "):
            authors[commit][0] = raw[len("author "):]
        elif raw.startswith("author-mail "):
            authors[commit][1] = raw[len("author-mail "):].strip().strip("<>")
    return found


def identity(root: Path) -> str | None:
    """The identity a commit made now is authored as (``Name <email>``), or None: the one
    cascade.base.gitio.next_author gives the commands that record a person's text."""
    try:
        return next_author(root).ident
    except CascadeError:
        return None


def pending(root: Path, path: str, d: Discussion, lines: Iterable[int]) -> dict[int, str]:
    """{line: author} for ``lines`` of ``d``, the ledger ``path`` as a commit about to be made
    holds it: the lines HEAD has (its text begins with them) are blamed at HEAD, the others
    are the commit's (_added)."""
    wanted = set(lines)
    if not wanted:
        return {}
    head = version_at(root, path)
    head_lines = 0 if head is None else head.count(b"\n") + (0 if head.endswith(b"\n") else 1)
    found = committed(root, "HEAD", path, [n for n in wanted if n <= head_lines])
    rest = sorted(n for n in wanted if n > head_lines)
    if rest:
        found.update(_added(root, path, d, rest))
    return found


def _added(root: Path, path: str, d: Discussion, lines: list[int]) -> dict[int, str]:
    """{line: author} for ``lines`` of ``d`` that HEAD does not have: a block that a merge in
    progress brings from its other parent is blamed there; the rest is the identity the
    commit is made as."""
    merging = merge_head(root)
    theirs = version_at(root, path, merging) if merging else None
    other = theirs.decode("utf-8", "replace").split("\n") if theirs is not None else []
    me = identity(root)
    text_lines = d.text.split("\n")
    blocks = {c.line: c for c in d.ledger.comments}
    found: dict[int, str] = {}
    at_theirs: dict[int, int] = {}  # line here -> line in the other parent's text
    for n in lines:
        c = blocks.get(n)
        if merging and c is not None and other:
            k = _find(other, text_lines[c.line - 2:c.end_line + 1])  # its delimiters too
            if k is not None:
                at_theirs[n] = k + 2  # the Name: line, 1-based
                continue
        if me is not None:
            found[n] = me
    if at_theirs and merging:
        blamed = committed(root, merging, path, at_theirs.values())
        found.update({n: blamed[k] for n, k in at_theirs.items() if k in blamed})
    return found


def _find(haystack: list[str], needle: list[str]) -> int | None:
    if not needle:
        return None
    first = needle[0]
    for i, line in enumerate(haystack):
        if line == first and haystack[i:i + len(needle)] == needle:
            return i
    return None


def knowing_authors(root: Path, ledger: str, d: Discussion) -> Discussion:
    """``d`` -- the ledger at ``ledger`` (repository-relative) as a commit about to be made
    holds it -- with its state derived knowing who added the lines whose author matters."""
    claims = d.state.claims
    if not claims:
        return d
    return d.with_authors(pending(root, ledger, d, claims))
