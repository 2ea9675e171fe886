"""The gate's verdict on each involved ledger, from its *staged* text with the verdict
``check`` and ``status`` use (cascade.protocol.verdict.gate), and the command that commits
again, for the way this commit was made."""
from __future__ import annotations

import os
import shlex
from pathlib import Path

from msgspec.structs import replace

from cascade.base.gitio import index_blobs, read_blobs
from cascade.ledger.identity import is_decider
from cascade.check import attribution
from cascade.loop.item import Item, HookVerdict
from cascade.protocol.state import State
from cascade.protocol.discussion import Discussion
from cascade.protocol.setting import setting_of
from cascade.protocol.verdict import Judgement, gate


def next_step(item: Item) -> str:
    """The exact command that stages the ledger and commits again, for the way this commit
    was made: git names its index file by the form of `git commit` (FACTS: `index.lock` for
    -a, `next-index-*.lock` for `git commit <path>`). A bare `git add <ledger>` after
    `git commit -a` would land a ledger-only commit under the document's message."""
    ledger = " ".join(shlex.quote(p) for p in [*([] if item.staged.ledger else
                                                 [item.move_to or item.ledger]),
                                               *item.ran.also_add])
    move = (f"git mv {shlex.quote(item.ledger)} {shlex.quote(item.move_to)} && "
            if item.move_to else "")
    name = Path(os.environ.get("GIT_INDEX_FILE", "")).name
    if name == "index.lock":
        return f"{move}git add {ledger} && git commit -a"
    if name.startswith("next-index"):
        paths = " ".join(shlex.quote(p) for p in (item.renamed_from, item.doc,
                                                   item.move_to and item.ledger,
                                                   item.move_to or item.ledger) if p)
        return f"{move}git add {ledger} && git commit {paths}"
    return f"{move}git add {ledger}"


def decide(root: Path, items: list[Item]) -> list[Item]:
    """Decide each item from its staged ledger: the items, with their verdicts."""
    blobs = index_blobs(root, [i.ledger for i in items])
    texts = read_blobs(root, list(blobs.values()))
    return [replace(item, verdict=_verdict(root, item, blobs, texts)) for item in items]


def _verdict(root: Path, item: Item, blobs: dict[str, str], texts: dict[str, bytes]) -> HookVerdict:
    add = next_step(item)
    ran = item.ran
    if item.problems:
        return HookVerdict(item.problems[0].split(": ", 1)[1])
    if ran.discussion is None:
        return HookVerdict("not reviewed: fix the problem above first (no model was asked)")
    if ran.failures:
        return HookVerdict(f"{', '.join(ran.failures)} failed (see above); their votes do not "
                       "count: commit again to retry")
    if item.staged.whole:
        return _decide_staged(root, item, texts.get(blobs.get(item.ledger, ""), b""))
    if item.move_to:
        return HookVerdict(f"renamed from {shlex.quote(item.renamed_from or '')}: its discussion "
                       f"follows it (recorded in {shlex.quote(item.ledger)}): {add}")
    if ran.created:
        return HookVerdict(f"new ledger with the panel's reviews: read it, reply, then {add}")
    if ran.waiting:
        return HookVerdict(f"waiting for a person: {ran.waiting}; answer it, then {add}"
                       if ran.appended else f"waiting for a person: {ran.waiting}")
    if ran.closed is not None and not ran.replies:
        return HookVerdict(f"{ran.closed.describe(item.doc)}: {add}")
    if ran.appended and ran.carried and not ran.replies:
        return HookVerdict(f"{ran.carried}: the revision is recorded, nobody was asked: {add}")
    if ran.appended:
        entries = ("1 new entry: read it" if ran.appended == 1
                   else f"{ran.appended} new entries: read them")
        return HookVerdict(f"{entries} (git diff {shlex.quote(item.ledger)}), reply, then {add}")
    if item.ledger not in blobs:
        return HookVerdict(f"ledger not staged: {add}")
    staged = texts.get(blobs[item.ledger], b"")
    if staged != (root / item.ledger).read_bytes():
        return HookVerdict(f"the ledger has unstaged changes: {add}")
    verdict, d = _staged_verdict(root, item, staged)
    text = verdict.reason
    if verdict.ways_out(item.doc) and item.doc:
        text += f"; ways out: {verdict.ways_out(item.doc, _deciding(root, item, d.state))}"
    return HookVerdict(text, verdict.ok, open_items(item, verdict, d) if verdict.ok else ())


def _staged_verdict(root: Path, item: Item, staged: bytes) -> tuple[Judgement, Discussion]:
    """The gate's verdict (cascade.protocol.verdict) on the staged ledger ``staged``, its
    people known by the commits that added their lines; and that ledger."""
    staged_d = Discussion(root / item.ledger, staged.decode("utf-8", "replace"), setting_of(root),
                          authority=item.authority)
    staged_d = attribution.knowing_authors(root, item.ledger, staged_d)
    return gate(staged_d.state, item.doc_blob, item.doc, item.doc_data), staged_d


SHOWN_ITEMS = 4  # open items listed on a passing commit (a heading and a pointer besides)


def open_items(item: Item, verdict: Judgement, d: Discussion) -> tuple[str, ...]:
    """What a passing review leaves open, for the commit's author: the open findings (a
    CONCERN is one) and questions, at most ``SHOWN_ITEMS`` of them, who raised each and
    where, and the command that shows the rest. Empty when nothing is open."""
    rows = [f"{f.id} {f.severity} ({_where(f)}) from {f.author}: {f.what}"
            for f in verdict.open]
    rows += [f"{q['id']} question from {q['author']} (ledger line {q['line']}): {q['text']}"
             for q in d.questions if q["status"] == "open"]
    if not rows:
        return ()
    name = item.doc or item.ledger
    shown = rows if len(rows) <= SHOWN_ITEMS else rows[:SHOWN_ITEMS - 1]
    more = f"{len(rows) - len(shown)} more, and " if len(shown) < len(rows) else ""
    return (f"{name} passes with {len(rows)} open item(s) in its review:",
            *(f"  {_short(r)}" for r in shown),
            f"  {more}the whole review: cascade status {shlex.quote(name)}")


def _where(f) -> str:
    return f.place or ("not located" if f.where else f"ledger line {f.line}")


def _short(text: str, width: int = 110) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1].rstrip() + "…"


def _deciding(root: Path, item: Item, state: State) -> str:
    """The way out through a person's decision, as one that can work: ``cascade decide`` when
    the person this commit is made as may decide (the rule names no ``deciders:``, or names
    them); else a decision counts only from a decider's own commit, so it says who, never a
    command that would record a decision that does not count."""
    doc = shlex.quote(item.doc or "")
    deciders = item.authority.deciders if item.authority is not None else ()
    me = attribution.identity(root)
    if me is not None and (not deciders or is_decider(me, deciders)):
        return f"cascade decide {doc} READY --reason '...'"
    theirs = [d.by for d in state.decisions
              if not d.in_force and d.note.startswith("recorded as ")
              and (not deciders or is_decider(d.by, deciders))]
    if theirs:
        return (f"{theirs[-1]} commits their decision from their own identity (a decision "
                "counts only in a commit by the person it names)")
    who = f"a decider ({', '.join(deciders)})" if deciders else "a person"
    return (f"{who} runs cascade decide {doc} READY --reason '...' and commits it from their "
            f"own identity (a decision counts only in a commit by the person it names; "
            f"this commit is {me or 'by someone git does not know'})")


def _decide_staged(root: Path, item: Item, staged: bytes) -> HookVerdict:
    """The hook staged what it wrote: the staged ledger decides, in this very commit. Blocked,
    the verdict says in one line why and what to do; after `git commit -a` or `git commit
    <path>` git drops the index the ledger was staged in, so that includes the `git add`."""
    name = Path(os.environ.get("GIT_INDEX_FILE", "")).name
    dropped = name == "index.lock" or name.startswith("next-index")
    ledger = shlex.quote(item.ledger)
    if dropped:
        unstaged = replace(item, staged=replace(item.staged, ledger=False), ran=replace(
            item.ran, also_add=tuple(p for p in item.staged.paths if p != item.ledger)))
        again = f"then {next_step(unstaged)}"
        read = f"read the replies in {ledger}"
    else:
        again, read = "commit again", f"read the replies (staged: git diff --cached {ledger})"
    if item.ran.waiting:
        where = f"({ledger}{'' if dropped else ', staged'})"
        return HookVerdict(f"waiting for a person: {item.ran.waiting}; answer it in the ledger "
                       f"{where}, {again}")
    verdict, d = _staged_verdict(root, item, staged)
    text = verdict.reason
    if verdict.ok:
        return HookVerdict(text, True, open_items(item, verdict, d))
    if item.ran.appended:
        text += f": {read}, answer in the ledger, {again}"
    elif dropped:
        text += f": {again.removeprefix('then ')}"
    if verdict.ways_out(item.doc) and item.doc:
        text += f"; ways out: {verdict.ways_out(item.doc, _deciding(root, item, d.state))}"
    return HookVerdict(text, False)


def _votes(d: Discussion) -> str:
    result = d.consensus_result
    text = " ".join(f"{v}:{n}" for v, n in result.counts.items() if n) or "-"
    if result.advisory:
        panel = {v: 0 for v in result.counts}
        for vote in result.advisory.values():
            panel[vote] += 1
        text += " (advisory: " + " ".join(f"{v}:{n}" for v, n in panel.items() if n) + ")"
    if d.decision is not None:
        text += f" (decided {d.decision.vote})"
    return text


def status_table(items: list[Item]) -> str:
    rows = [("ledger", "phase", "votes", "status")]
    for item in items:
        d = item.ran.discussion
        rows.append((item.ledger, d.phase if d else "-", _votes(d) if d else "-",
                     ("ok: " if item.verdict.passed else "blocked: ") + item.verdict.text))
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r[:3], widths)) + "  " + r[3]
                     for r in rows)
