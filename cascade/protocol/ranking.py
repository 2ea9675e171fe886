"""A peer ranking, as registered behaviours any step protocol may name in its data: the
visibility ``anonymous`` (the others' answers of the round, labelled ``Answer A``, ... in an
order shuffled per reader, without names), the field kind ``ranking`` (the labels, best
first, stamped as the message ids they stand for), the step's table -- the Borda count of
the round's rankings (``borda``) -- and ``shows: [peer-ranking]`` for a later step. What
each does, and how Borda places and breaks ties: docs/protocols.md ("Peer ranking"). Pure:
no model, no file.
"""
from __future__ import annotations

import hashlib
import random
import re
import string
from typing import Any

import msgspec.structs
from msgspec import Struct

from cascade.protocol.behaviours import Param, named
from cascade.protocol.context import SHOWS
from cascade.protocol.fields import FIELD_KINDS, Field, Kind, field_error
from cascade.protocol.visibility import VISIBILITIES

LABEL = "Answer "  # a shown answer's label: Answer A, Answer B, ...
ANONYMOUS = "a participant"  # who wrote it, as the reader is told
UNRANKED = ".unranked"  # the stamp key (after the field's name) of the ones left out
_WORD = re.compile(r"[A-Za-z]+\d*")


def letter(index: int) -> str:
    """The label's letter(s) of the answer at ``index``: A ... Z, then A1, B1, ..."""
    letters = string.ascii_uppercase
    return letters[index % 26] + (str(index // 26) if index >= 26 else "")


def _seed(*parts: object) -> int:
    return int.from_bytes(hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()[:8],
                          "big")


def _hidden(text: str, names: list[str]) -> str:
    """``text`` with each of ``names`` (persona names, @aliases) taken out."""
    for name in sorted(names, key=len, reverse=True):
        text = re.sub(re.escape(name), ANONYMOUS, text, flags=re.IGNORECASE)
    return text


@VISIBILITIES.register("anonymous", traits=("no_summary", "independent", "anonymous", "kept"))
def anonymous(run, step, alias: str) -> list:
    """The other speakers' answers of this round of the steps it ``sees`` (default: the
    round's first), labelled and shuffled for this reader, without names."""
    sources = step.sees or (run.steps.round_steps[0].id,)
    others = [t for t in run.turns if t.round == run.round and t.step in sources
              and t.alias != alias]
    # by author, then message: the same answers get the same labels on a rerun, whatever
    # order the replies arrived in
    order = sorted(others, key=lambda t: (t.alias, t.number))
    random.Random(_seed(run.round, step.id, alias, *(t.alias for t in order))).shuffle(order)
    names = [x for t in run.turns for x in (t.name, f"@{t.alias}")] + [
        x for a in run.members for x in (run.name_of(a), f"@{a}")]
    return [msgspec.structs.replace(t, msg=LABEL + letter(i), name=ANONYMOUS, alias="",
                                fields={}, refs=[], body=_hidden(t.body, names),
                                origin=t.msg)
            for i, t in enumerate(order)]


# --- the field kind --------------------------------------------------------------------

def _parse(name, spec, sid, path, line) -> Field:
    if spec != "ranking":
        raise field_error(name, sid, "a ranking is declared as ranking", path, line)
    return Field(name, None, "", kind="ranking")


def _label_of(item: object) -> str:
    """A label as a reply gives it: ``B``, ``Answer B``, ``answer b``, ``"B."`` -> ``B``."""
    if not isinstance(item, (str, int)) or isinstance(item, bool):
        return ""
    words = _WORD.findall(str(item))
    if words and words[0].lower() == LABEL.strip().lower():
        words = words[1:]
    return words[0].upper() if len(words) == 1 else ""


def _items(value: object) -> list[object]:
    """The ranking's items: a list, or a text (``B > A > C``, ``B, A, C``)."""
    if isinstance(value, list):
        return value
    if isinstance(value, str):
        return [x for x in re.split(r"[>,;\n]+|\s+then\s+", value) if x.strip()]
    return []


def _read(f: Field, value: object, reply, shown=()) -> tuple[dict[str, str], str | None]:
    """The labels, best first, as the message ids they stand for; a label not shown is
    dropped, a shown one left out is ranked last -- a note says which."""
    labels = {t.msg[len(LABEL):]: t.origin for t in shown if t.origin}
    ranked: list[str] = []
    dropped: list[str] = []
    for item in _items(value):
        label = _label_of(item)
        if label in labels and label not in ranked:
            ranked.append(label)
        elif label not in ranked:
            dropped.append(" ".join(str(item).split())[:20])
    left = [x for x in labels if x not in ranked]
    notes = []
    if dropped:
        notes.append(f"{', '.join(map(repr, dropped))} not among the answers shown "
                     f"({', '.join(labels) or 'none'}): dropped")
    if left and labels:
        notes.append(f"{', '.join(LABEL + x for x in left)} not ranked: ranked last")
    stamp = {f.name: " > ".join(labels[x] for x in ranked)}
    if left:
        stamp[f.name + UNRANKED] = " ".join(labels[x] for x in left)
    return stamp, (f"{f.name}: " + "; ".join(notes)) if notes else None


def _section(f: Field, stamped: dict[str, str], value: object) -> str | None:
    ranked = [x for x in stamped.get(f.name, "").split(" > ") if x]
    left = stamped.get(f.name + UNRANKED, "").split()
    if not ranked and not left:
        return None
    return (f"**Ranking** (best first): {', '.join(ranked) or 'none'}"
            + (f"; not ranked (last): {', '.join(left)}" if left else ""))


# --- Borda -----------------------------------------------------------------------------

class Place(Struct, frozen=True):
    """One answer in the aggregate: its message, author, points and first places."""

    msg: str
    name: str
    points: int
    firsts: int
    ballots: int  # the ballots it was on


class Count(Struct, frozen=True):
    """The Borda count of a ranking step's round: the answers, best first, the number of
    ballots, and how each tie was broken (a line each)."""

    places: tuple[Place, ...]
    ballots: int
    ties: tuple[str, ...]


def borda(run, step_id: str, round_: int, field_name: str | None = None) -> Count | None:
    """The Borda count of the rankings given in ``step_id`` in ``round_`` (its ``ranking``
    field, or ``field_name``); None when no ballot was given."""
    step = run.steps.step(step_id)
    name = field_name or next((f.name for f in (step.fields if step else ())
                               if f.kind == "ranking"), None)
    turns = [t for t in run.turns if t.step == step_id and t.round == round_
             and name is not None and (t.fields.get(name) or t.fields.get(name + UNRANKED))]
    if not turns:
        return None
    points: dict[str, int] = {}
    firsts: dict[str, int] = {}
    seen: dict[str, int] = {}
    for t in turns:
        ranked = [x for x in t.fields.get(name, "").split(" > ") if x]
        left = t.fields.get(name + UNRANKED, "").split()
        n = len(ranked) + len(left)
        for i, msg in enumerate(ranked):
            points[msg] = points.get(msg, 0) + n - 1 - i
        for msg in ranked + left:
            points.setdefault(msg, 0)
            seen[msg] = seen.get(msg, 0) + 1
        if ranked:
            firsts[ranked[0]] = firsts.get(ranked[0], 0) + 1
    by_msg = {t.msg: t for t in run.turns}
    number = {m: by_msg[m].number if m in by_msg else 10 ** 9 for m in points}
    order = sorted(points, key=lambda m: (-points[m], -firsts.get(m, 0), number[m], m))
    places = tuple(Place(m, by_msg[m].name if m in by_msg else "?", points[m],
                         firsts.get(m, 0), seen[m]) for m in order)
    return Count(places, len(turns), _ties(places))


def _ties(places: tuple[Place, ...]) -> tuple[str, ...]:
    """How each tie on points was broken, a line each."""
    out = []
    groups: dict[int, list[Place]] = {}
    for p in places:
        groups.setdefault(p.points, []).append(p)
    for tied in groups.values():
        if len(tied) < 2:
            continue
        by_firsts = len({p.firsts for p in tied}) == len(tied)
        how = ("by more first places" if by_firsts else
               "by more first places, then by the earlier answer" if len(
                   {p.firsts for p in tied}) > 1 else "by the earlier answer")
        points = f"{tied[0].points} point{'' if tied[0].points == 1 else 's'}"
        out.append(f"{' and '.join(f'{p.msg} ({p.name})' for p in tied)} tie on {points}: "
                   f"placed {how}")
    return tuple(out)


def count_table(count: Count) -> str:
    """The Borda count as a markdown table, with how the points are given and each tie."""
    rows = ["| Place | Answer | Participant | Points | First places |",
            "| --- | --- | --- | --- | --- |"]
    rows += [f"| {i} | {p.msg} | {p.name.replace('|', '/')} | {p.points} | {p.firsts} |"
             for i, p in enumerate(count.places, 1)]
    rows += ["", (f"Borda count of {count.ballots} ballots: on a ballot of n answers the first "
                  "gets n-1 points, the last 0; an answer a ballot left out counts as last. "
                  "Nobody ranked its own answer.")]
    rows += [f"Tie: {line}." for line in count.ties]
    return "\n".join(rows)


def _table(run, step_id: str, round_: int, f: Field, names: dict[str, str]) -> str | None:
    """The count of the step's rankings in ``round_``, as its table."""
    count = borda(run, step_id, round_, f.name)
    return count_table(count) if count is not None else None


FIELD_KINDS.register("ranking", Kind(
    _parse, lambda f: '["<the label of an answer shown, best first>", ...]', _read, _section,
    _table), traits=("word", "shown"))


# --- what a later step is shown --------------------------------------------------------

@SHOWS.register("peer-ranking", params={
    "step": Param((str,), "", "the ranking step (default: the one with a ranking field)",
                  check=named("a step's id"))})
def peer_ranking(run: Any, request: Any, step: str = "") -> tuple[str, str] | None:
    """The latest Borda count of the ranking step before this one."""
    step_id = step or next((s.id for s in run.steps.all_steps
                            if any(f.kind == "ranking" for f in s.fields)), "")
    rounds = sorted({t.round for t in run.turns if t.step == step_id}, reverse=True)
    for round_ in rounds:
        count = borda(run, step_id, round_)
        if count is not None:
            return f"peer ranking (Borda count), round {round_}", count_table(count)
    return None
