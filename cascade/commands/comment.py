from __future__ import annotations

import re
import sys

from cascade.base.errors import CascadeError, display_path
from cascade.base.gitio import next_author
from cascade.ledger import grammar
from cascade.ledger.identity import recorded_name
from cascade.ledger.records import VOTES
from cascade.ledger.parse import parse
from cascade.ledger.render import render_comment
from cascade.loop.closing import close_now
from cascade.loop.staging import writing_staged
from cascade.protocol.about import about
from cascade.base.text import printable

_WORD = re.compile(r"[A-Za-z]+")


def comment(path: str, text: str, vote: str | None, author: str | None,
            waive: str | None = None) -> int:
    """Append a person's comment, its text kept as written: a ``VOTE:`` line in it is
    neutralised like any structural line (it reads as text and never counts; a note on stderr
    says so); the vote comes only from ``--vote``. The author is who authors the next commit
    (``author``: as ``git commit --author`` takes it; cascade.base.gitio.next_author); a waiver
    under a rule whose ``deciders:`` are e-mail addresses records ``Name <email>``, which is
    what those entries match."""
    if waive is not None:  # --waive F3 "reason": the marker, written as the ledger reads it
        ref = waive.strip().upper()
        if not re.fullmatch(r"F\d{1,6}", ref):
            raise CascadeError(f"--waive takes a finding's id (F3), not {waive!r}")
        if not " ".join(text.split()):
            raise CascadeError(f'a waiver needs a reason: --waive {ref} "reason"')
        text = f"WAIVE({ref}): {' '.join(text.split())}"
    with writing_staged(path, "cascade comment") as (d, written):
        person = next_author(d.path.parent, author)
        author = person.name
        markers = _markers(text)
        if unknown := _naming_no_finding(markers, len(d.findings)):
            known = f"F1-F{len(d.findings)}" if d.findings else "none yet"
            raise CascadeError(f"{unknown} names no finding of this discussion (its findings: "
                               f"{known}; cascade status lists them): nothing written", d.path)
        if d.authority.deciders and any(m.kind == "WAIVE" for m in markers):
            author = recorded_name(person.name, person.email, d.authority.deciders)
        if d.personas.is_persona_name(author):
            raise CascadeError(f"{author!r} is a persona's name; people comment under their "
                               "own name", d.path)
        if not text.strip() and vote is None:
            raise CascadeError("empty comment: give some text or a --vote", d.path)
        d.add_comment(author, text, vote)
        d.save()
        print(f"Added comment from {author} to {display_path(d.path)}"
              + (f" (VOTE: {vote})." if vote else "."))
        told = about(d.state.run, d.personas)
        for line in told.unclear if told is not None else []:  # an answer it cannot take
            print(printable(f"cascade: {line}"))
        if vote is not None:
            closed, _moved = close_now(d, path)
            if closed is not None:
                print(printable(f"cascade: {d.source}: {closed.describe(d.source)}."))
    written.say()
    if typed := _vote_lines(text):
        line, word = typed[-1]
        if vote is None:
            hint = f"--vote {word}" if word in VOTES else "--vote READY|CHANGES|REJECT"
            print(printable(f'cascade: the text\'s "{line}" line is kept as text; to vote, '
                            f"pass {hint}"), file=sys.stderr)
        elif word != vote:
            print(printable(f'cascade: the text\'s "{line}" line is kept as text; the vote is '
                            f"--vote {vote}"), file=sys.stderr)
    return 0


def _markers(text: str) -> list:
    """The markers of ``text`` as a person's comment block reads them (none when it cannot be
    one: add_comment refuses it, saying why)."""
    try:
        block = parse(render_comment("-", text))
    except ValueError:
        return []
    return [m for c in block.comments for m in c.markers]


def _naming_no_finding(markers: list, count: int) -> str | None:
    """The first ``A(Fn):`` or ``WAIVE(Fn):`` of ``markers`` whose finding does not exist in a
    discussion of ``count`` findings; None: none."""
    for m in markers:
        if m.kind in ("A", "WAIVE") and m.ref and m.ref[:1] in "Ff" \
                and not 1 <= int(m.ref[1:]) <= count:
            return f"{m.kind}({m.ref.upper()})"
    return None


def _vote_lines(text: str) -> list[tuple[str, str]]:
    """The lines of ``text`` a ledger would read as a vote (at column 0, outside code fences),
    each with its vote word upper-cased."""
    found: list[tuple[str, str]] = []
    fence: str | None = None
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if fence is not None:
            if grammar.fence_closes(line, fence):
                fence = None
            continue
        fence = grammar.fence_opens(line)
        if fence is None and grammar.is_vote_line(line):
            m = grammar.VOTE.match(line)
            word = _WORD.search(m.group(1) if m else "")  # as the parser reads the word
            found.append((line.strip(), word.group(0).upper() if word else ""))
    return found
