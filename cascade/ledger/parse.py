"""Turn ledger text into a Ledger. Tolerant of hand-written files; never raises on content.

Structure (seed 002): an optional header of HTML comments, free markdown (the context),
then comment blocks::

    ---
    Name: AI-Architect
    markdown ...
    VOTE: CHANGES
    ---

and state events, one HTML comment line each, between blocks. What is structure is defined
once, in cascade.ledger.grammar, which the writer uses too. Inside a block the first
delimiter outside a fence ends it, whatever follows: an append can never reopen a block.

Markers (seed 002), inside a block, outside code fences, at the start of a line (up to three
spaces, optionally after a list bullet or number, optionally in bold), upper case, followed
by a space and text: ``Q: TODO: DECISION: ASSIGNED: DONE: CONCERN:`` and the answer ``A:``.
Quoted (``> Q:``), indented-as-code and lower-case lines are not markers.

Questions and answers. Every ``Q:`` is numbered in ledger order, Q1, Q2, ... (``status`` and
the summary print the numbers); numbers never change, because the ledger only grows.

- ``A(Q2): text`` answers question 2, whoever asked it (the asker too: "found it: ..."),
  answered already or not. A number not asked before that line answers nothing.
- ``A: text`` answers the first still-open question of the latest comment that has one
  asked by someone else: a reply to the comment just made answers its questions in the order
  they were asked; each further ``A:`` takes the next one by the same rule (so one comment
  with two answers means what two comments with one answer each would). A block's
  ``A(Qn):`` lines count first. A plain ``A:`` never answers its own author's question, nor
  one already answered (that takes ``A(Qn):``), nor one asked after it; with no such
  question it answers nothing.
- A question with an answer is answered; the first answer closed it, later ones are kept.

Action items. ``TODO:`` and ``ASSIGNED:`` items are numbered together, T1, T2, ...

- ``DONE(T2): text`` marks item 2 done.
- ``DONE: text`` marks done the open item, written before it, whose text it repeats or
  starts with (case, spacing, trailing punctuation and an item's leading @mentions aside;
  a prefix must end at a word boundary): ``DONE: Write the plan, see #12`` closes
  ``TODO: write the plan``. Of several such items, the longest text, then the oldest.

Ledger order decides everything, so an answer or a DONE means what it meant when it was
written: nothing appended later changes what an earlier one closed. ``A:`` at the start of a
line is a marker like ``Q:``: write options as "Option A: ..." (or "- **A** ...").
The matching itself is in cascade.ledger.discussion (``questions``, ``todos``).
"""
from __future__ import annotations

import re

from cascade.ledger import grammar
from cascade.ledger.grammar import (
    FENCE_FIRST, fence_closes, fence_opens, is_blank, is_delimiter, name_of,
)
from cascade.ledger.model import (
    EVENT_KINDS, PHASE_TRANSITION, VOTES, Comment, Event, Header, Ledger, Marker,
)

_HEADER_OPEN = re.compile(r"(?i)<!--[ \t]*DISCUSSION[ \t]*(-->)?[ \t]*\Z")
_HEADER_FIELD = re.compile(r"<!--[ \t]*([A-Za-z][\w -]*?)[ \t]*:[ \t]*(.*?)[ \t]*-->[ \t]*\Z")
_FIELD = re.compile(r"([A-Za-z][\w -]*?)[ \t]*:[ \t]*(.*?)[ \t]*\Z")
_KV = re.compile(r"([\w.-]+)=(\"[^\"]*\"|\S+)")
FENCE = grammar.FENCE_OPEN
_MARKER = re.compile(
    r"[ \t]{0,3}(?:[-*+][ \t]+|\d{1,3}[.)][ \t]+)?(?:\*\*|__)?"
    r"(Q|A|TODO|DECISION|ASSIGNED|DONE|CONCERN)(?:\([ \t]*([QqTt])(\d{1,6})[ \t]*\))?:"
    r"(?:\*\*|__)?[ \t]+(.*\S)")
_REF_KIND = {"A": "Q", "DONE": "T"}  # A(Q2): answers question 2; DONE(T3): closes item 3
_MENTION = re.compile(r"(?<![\w@/.`])@([A-Za-z][A-Za-z0-9_]*(?:-[A-Za-z0-9_]+)*)")
_CODE_SPAN = re.compile(r"`+[^`]*`+")
_HEADING = re.compile(r"#[ \t]+(.*?)[ \t#]*\Z")
_WORD = re.compile(r"[A-Za-z]+")
_MARKER_START = frozenset(" \t-*+_QTDAC0123456789")
_ARROW = re.compile(r"(\S+)[ \t]*(?:→|->)[ \t]*(\S+)")
_STAMP = re.compile(r"(?:\A|[ \t]+)(n=[0-9a-f]+[ \t]+sig=[0-9a-f]{64})\Z")  # an event's stamp


def parse(text: str, default_phase: str = "", *, details: bool = True,
          structure_only: bool = False) -> Ledger:
    """Parse ledger text. Content problems become warnings, never exceptions.

    ``details=False`` skips markers and mentions (what consensus does not need): the same
    comments, votes, events and line numbers, read faster. ``structure_only``: no entries at
    all, only where the text ends (in a block, a fence, the header): see ``sealed``.
    """
    newline = "\r\n" if "\r\n" in text[: text.find("\n") + 1 or len(text)] else "\n"
    ends_with_newline = text.endswith("\n") or text == ""
    lines = text.split("\n")
    if ends_with_newline:
        lines.pop()
    if "\r" in text:
        lines = [ln[:-1] if ln.endswith("\r") else ln for ln in lines]
    n = len(lines)

    header, i, header_open = _parse_header(lines)
    phase = header.phase or default_phase
    entries: list[Comment | Event] = []
    warnings: list[tuple[int, str]] = []
    title_line: str | None = None

    fence: str | None = None  # the open fence's marker, e.g. "```"
    fence_line = 0
    block: list[tuple[int, str]] | None = None  # (line_no, text) of the open block
    block_start = 0
    stray_warned = False  # one warning per run of text between blocks

    def next_nonblank(j: int) -> int:
        while j < n and is_blank(lines[j]):
            j += 1
        return j

    def open_after(j: int) -> int | None:
        """After a delimiter at j: the index of the Name: line that opens a block, or None."""
        k = next_nonblank(j + 1)
        if k < n and name_of(lines[k]) is not None:
            return k
        return None

    while i < n:
        line = lines[i]
        lineno = i + 1
        if fence is not None:
            if fence_closes(line, fence):
                fence = None
            if block is not None:
                block.append((lineno, line))
            i += 1
            continue
        first = line[:1]
        opened = fence_opens(line) if first in FENCE_FIRST else None
        if opened:
            fence, fence_line = opened, lineno
            if block is not None:
                block.append((lineno, line))
            i += 1
            continue
        if first == "-" and is_delimiter(line):
            if block is not None:
                entries.append(_make_comment(block, block_start, lineno - 1, phase, warnings,
                                             details))
                block = None
                stray_warned = False
            k = open_after(i)
            if k is not None:
                block_start = k + 1
                block = [(block_start, lines[k])]
                i = k + 1
                continue
            i += 1
            continue
        if block is not None:
            if not structure_only:
                block.append((lineno, line))
            i += 1
            continue
        if is_blank(line):
            i += 1
            continue
        # Between blocks: events, the context markdown, stray text.
        ev = _event_kind(line) if not structure_only else None
        if ev:
            kind, value = ev
            stamp = _STAMP.search(value)
            if stamp:
                value, stamp = value[:stamp.start()], stamp.group(1)
            event = Event(kind, value, _fields(value), lineno, phase, stamp or "")
            if kind == PHASE_TRANSITION:
                target = event.fields.get("to")
                if target:
                    phase = target
                else:
                    warnings.append((lineno, "phase transition names no target phase"))
            entries.append(event)
        elif not entries:
            if title_line is None:
                hm = _HEADING.match(line)
                if hm:
                    title_line = hm.group(1)
        elif not stray_warned and not line.startswith("<!--"):
            stray_warned = True
            warnings.append((lineno, "text after a comment's closing --- belongs to no comment "
                                     "(a --- line inside a comment ends it: write *** for a "
                                     "thematic break)"))
        i += 1
    open_block = block is not None
    if block is not None and not structure_only:
        entries.append(_make_comment(block, block_start, n, phase, warnings, details))
    if fence is not None:
        warnings.append((fence_line, f"unclosed code fence {fence}"))
    ledger = Ledger(header, title_line, entries, n, newline, ends_with_newline, open_block, warnings)
    ledger.open_fence = fence  # type: ignore[attr-defined]
    ledger.open_fence_line = fence_line if fence else 0  # type: ignore[attr-defined]
    ledger.header_open = header_open  # type: ignore[attr-defined]
    return ledger


def sealed(text: str) -> bool:
    """Can nothing appended to ``text`` change what it says? True when it ends outside any
    comment block and code fence, after its header is complete: the grammar has no other
    way for later lines to change earlier entries (a block ends at its first ---)."""
    ledger = parse(text, structure_only=True)
    return not (ledger.open_block or ledger.open_fence  # type: ignore[attr-defined]
                or ledger.header_open)  # type: ignore[attr-defined]


HEADER_BYTES = 16384  # where parse_header looks for the header


def parse_header(text: str) -> Header:
    """The header alone, read from the first lines (cheap: for finding a ledger's document)."""
    head = text[:HEADER_BYTES].split("\n")
    if len(text) >= HEADER_BYTES:
        head.pop()  # possibly cut short
    return _parse_header([ln[:-1] if ln.endswith("\r") else ln for ln in head])[0]


def _event_kind(line: str) -> tuple[str, str] | None:
    if not line.startswith("<!--"):
        return None
    m = grammar.EVENT.match(line)
    if m and m.group(1) in EVENT_KINDS:
        return m.group(1), m.group(2)
    return None


def _fields(value: str) -> dict[str, str]:
    fields = {k: v.strip('"') for k, v in _KV.findall(value)}
    m = _ARROW.match(value)
    if m:
        fields.setdefault("from", m.group(1))
        fields.setdefault("to", m.group(2))
    return fields


def _parse_header(lines: list[str]) -> tuple[Header, int, bool]:
    """(header, index after it, whether the text ended while the header was still open)."""
    header = Header()
    i = 0
    while i < len(lines) and is_blank(lines[i]):
        i += 1
    if i >= len(lines):
        return header, i, False
    m = _HEADER_OPEN.match(lines[i])
    if not m:
        return header, 0, False
    still_open = True
    header.line = i + 1
    i += 1
    raw: dict[str, str] = {}
    if m.group(1):  # one comment per field: <!-- Title: X -->
        while i < len(lines):
            j = i
            while j < len(lines) and is_blank(lines[j]):
                j += 1  # blank lines between field comments are tolerated
            fm = _HEADER_FIELD.match(lines[j]) if j < len(lines) else None
            if not fm:
                still_open = j >= len(lines)
                break
            raw.setdefault(fm.group(1).strip().lower(), fm.group(2))
            i = j + 1
    else:  # one multi-line comment: <!-- DISCUSSION \n Title: X \n -->
        while i < len(lines):
            line = lines[i]
            closing = "-->" in line
            fm = _FIELD.match(line.split("-->", 1)[0].strip())
            if fm:
                raw.setdefault(fm.group(1).strip().lower(), fm.group(2))
            i += 1
            if closing:
                still_open = False
                break
    header.end_line = i
    header.title = raw.pop("title", "")
    header.source = raw.pop("source", None) or None
    header.template = raw.pop("template", None) or None
    header.protocol = raw.pop("protocol", None) or None
    header.phase = raw.pop("phase", None) or None
    header.status = raw.pop("status", None) or None
    header.created = raw.pop("created", None) or None
    parts = raw.pop("participants", "")
    header.participants = [p.strip().lstrip("@") for p in re.split(r"[,\s]+", parts) if p.strip()]
    header.consensus = {k: v.strip('"') for k, v in _KV.findall(raw.pop("consensus", ""))}
    header.extra = raw
    return header, i, still_open


def _make_comment(block: list[tuple[int, str]], start: int, end: int, phase: str,
                  warnings: list[tuple[int, str]], details: bool = True) -> Comment:
    author = name_of(block[0][1]) or ""
    vote: str | None = None
    body: list[str] = []
    markers: list[Marker] = []
    mentions: list[str] = []
    provenance: dict[str, str] = {}
    origin: str | None = None
    stamps = 0
    fence: str | None = None
    for lineno, line in block[1:]:
        if fence is not None:
            if fence_closes(line, fence):
                fence = None
            body.append(line)
            continue
        first = line[:1]
        if not first:
            body.append(line)
            continue
        opened = fence_opens(line) if first in FENCE_FIRST else None
        if opened:
            fence = opened
            body.append(line)
            continue
        if (first == "V" or first == "v") and grammar.is_vote_line(line):
            vm = grammar.VOTE.match(line)
            raw = vm.group(1) if vm else ""
            wm = _WORD.search(raw)
            word = wm.group(0).upper() if wm else ""
            if word in VOTES:
                vote = word
                continue
            if line.startswith("VOTE:"):
                warnings.append((lineno, f"unrecognised vote {raw!r} (use READY, CHANGES or REJECT)"))
                continue
        if first == "<" and line.startswith("<!--"):
            pm = grammar.STAMP.match(line)
            if pm:
                stamps += 1
                origin = pm.group(1)
                provenance = {k: v.strip('"') for k, v in _KV.findall(pm.group(2))}
                continue
        if not details:
            body.append(line)
            continue
        if first in _MARKER_START and ":" in line:
            mm = _MARKER.match(line)
            if mm:
                kind, letter, number, text = mm.groups()
                if letter is None:
                    markers.append(Marker(kind, text, author, lineno))
                elif _REF_KIND.get(kind) == letter.upper():
                    markers.append(Marker(kind, text, author, lineno,
                                          f"{letter.upper()}{int(number)}"))
        if "@" in line:
            plain = _CODE_SPAN.sub("", line) if "`" in line else line
            for alias in _MENTION.findall(plain):
                alias = alias.lower()
                if alias not in mentions:
                    mentions.append(alias)
        body.append(line)
    lo, hi = 0, len(body)
    while lo < hi and is_blank(body[lo]):
        lo += 1
    while hi > lo and is_blank(body[hi - 1]):
        hi -= 1
    return Comment(author, "\n".join(body[lo:hi]), vote, start, end, phase, markers, mentions,
                   provenance, origin, stamps)
