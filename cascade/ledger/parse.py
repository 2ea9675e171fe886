"""Turn ledger text into a Ledger. Tolerant of hand-written files; never raises on content.
(Over 400 lines: the one parser -- header, blocks, events, markers -- kept whole, so that
nothing reads a ledger any other way.)

The format is docs/ledger.md's. What is structure is defined once, in cascade.ledger.grammar,
which the writer uses too: inside a block the first delimiter outside a fence ends it,
whatever follows, so an append can never reopen a block.

Markers, inside a block, outside code fences, at the start of a line (up to three spaces,
optionally after a list bullet or number, optionally in bold), upper case, followed by a space
and text: ``Q: TODO: DECISION: ASSIGNED: DONE: CONCERN:`` and the answer ``A:``. Quoted
(``> Q:``), indented-as-code and lower-case lines are not markers. Questions are numbered Q1,
Q2, ..., ``TODO:`` and ``ASSIGNED:`` items together T1, T2, ..., in ledger order: the numbers
never change, because the ledger only grows.

- ``A(Q2): text`` answers question 2, whoever asked it, answered already or not; a number not
  asked before that line answers nothing. ``DONE(T2): text`` marks item 2 done.
- ``A: text`` answers the first still-open question of the latest comment that has one asked
  by someone else, after the block's ``A(Qn):`` lines; each further ``A:`` takes the next by
  the same rule (one comment with two answers means what two comments with one each would).
  It never answers its author's own question, one already answered, or one asked after it.
  The first answer closes a question; later ones are kept.
- ``DONE: text`` marks done the open item, written before it, whose text it repeats or starts
  with at a word boundary (case, spacing, trailing punctuation and an item's leading
  @mentions aside): ``DONE: Write the plan, see #12`` closes ``TODO: write the plan``. Of
  several such items, the longest text, then the oldest.

Ledger order decides everything: nothing appended later changes what an earlier answer or
DONE closed. Write options as "Option A: ...", not ``A:``. The matching itself is in
cascade.ledger.items.
"""
from __future__ import annotations

import copy
import itertools
import re

from cascade.ledger import grammar
from cascade.ledger.grammar import (
    FENCE_FIRST,
    fence_closes,
    fence_opens,
    is_blank,
    is_delimiter,
    name_of,
    trimmed,
)
from cascade.ledger.records import (
    EVENT_KINDS,
    PHASE_TRANSITION,
    VOTES,
    Comment,
    Event,
    Header,
    Ledger,
    Marker,
)

_HEADER_OPEN = re.compile(r"(?i)<!--[ \t]*DISCUSSION[ \t]*(-->)?[ \t]*\Z")
_HEADER_FIELD = re.compile(r"<!--[ \t]*([A-Za-z][\w -]*?)[ \t]*:[ \t]*(.*?)[ \t]*-->[ \t]*\Z")
_FIELD = re.compile(r"([A-Za-z][\w -]*?)[ \t]*:[ \t]*(.*?)[ \t]*\Z")
_KV = re.compile(r"([\w.-]+)=(\"[^\"]*\"|\S+)")
_MARKER = re.compile(
    r"[ \t]{0,3}(?:[-*+][ \t]+|\d{1,3}[.)][ \t]+)?(?:\*\*|__)?"
    r"(Q|A|TODO|DECISION|ASSIGNED|DONE|CONCERN|WAIVE)(?:\([ \t]*([QqTtFf])(\d{1,6})[ \t]*\))?:"
    r"(?:\*\*|__)?[ \t]+(.*\S)")
# A(Q2): answers question 2 (A(F2): finding 2); DONE(T3): closes item 3; WAIVE(F2): waives
# finding 2 (a WAIVE names its finding, or is no marker)
_REF_KIND = {"A": "QF", "DONE": "T", "WAIVE": "F"}
_MENTION = re.compile(r"(?<![\w@/.`])@([A-Za-z][A-Za-z0-9_]*(?:-[A-Za-z0-9_]+)*)")
_CODE_SPAN = re.compile(r"`+[^`]*`+")
_HEADING = re.compile(r"#[ \t]+(.*?)[ \t#]*\Z")
_WORD = re.compile(r"[A-Za-z]+")
_MARKER_START = frozenset(" \t-*+_QTDACW0123456789")
_ARROW = re.compile(r"(\S+)[ \t]*(?:→|->)[ \t]*(\S+)")
# an event's stamp: the ledger it was written for (none before stamps named it), nonce, digest
_STAMP = re.compile(r"(?:\A|[ \t]+)((?:ledger=[0-9a-f]+[ \t]+)?n=[0-9a-f]+[ \t]+sig=[0-9a-f]{64})\Z")
# What Reader.skip looks at: delimiters, fence lines and event lines (found from the newline
# before them: a pattern that begins with a literal is searched for quickly).
_SKIPPED = (r"(?P<line>(?P<delimiter>-{3,}[ \t]*\r?(?=\n))|(?P<fence>[ \t]{0,3}(?:```|~~~)[^\n]*)"
            r"|(?P<event><!--[ \t]*[A-Z][^\n]*))")
_LINE = re.compile(_SKIPPED)
_STRUCTURE = re.compile("\n" + _SKIPPED)
_BLANKS_NAME = re.compile(r"(?:[ \t]*\r?\n)*(Name:[^\n]*)?")


def parse(text: str, default_phase: str = "", *, details: bool = True,
          structure_only: bool = False) -> Ledger:
    """Parse ledger text. Content problems become warnings, never exceptions.

    ``details=False`` skips markers and mentions (what consensus does not need): the same
    comments, votes, events and line numbers, read faster. ``structure_only``: no entries at
    all, only where the text ends (in a block, a fence, the header): see ``sealed``.
    """
    reader = Reader(default_phase, details=details, structure_only=structure_only)
    whole = text[: text.rfind("\n") + 1]
    reader.feed(whole)
    tail = text[len(whole):]  # a last line without its newline
    if tail:
        reader.take([_one_cr(tail)])
    return reader.close(not tail)


def sealed(text: str) -> bool:
    """Can nothing appended to ``text`` change what it says? True when it ends outside any
    comment block and code fence, after its header is complete: the grammar has no other
    way for later lines to change earlier entries (a block ends at its first ---)."""
    ledger = parse(text, structure_only=True)
    return not (ledger.open_block or ledger.open_fence or ledger.header_open)


HEADER_BYTES = 16384  # where parse_header looks for the header


def parse_header(text: str) -> Header:
    """The header alone, read from the first lines (cheap: for finding a ledger's document)."""
    head = text[:HEADER_BYTES].split("\n")
    if len(text) >= HEADER_BYTES:
        head.pop()  # possibly cut short
    reading = _Head()
    for index, line in enumerate(head):
        if not reading.take(line[:-1] if line.endswith("\r") else line, index):
            break
    return reading.header()


_BEFORE, _FIELDS, _COMMENT, _DONE = range(4)  # where the header's reader is


class _Head:
    """The header, a line at a time: blank lines, then ``<!-- DISCUSSION -->`` and one HTML
    comment per field (blank lines between them tolerated), or ``<!-- DISCUSSION`` and field
    lines up to the ``-->`` that closes it. Anything else first: no header."""

    __slots__ = ("state", "raw", "line", "end")

    def __init__(self) -> None:
        self.state = _BEFORE
        self.raw: dict[str, str] = {}
        self.line = 0  # the opening line (1-based); 0: no header
        self.end = 0  # the index of the line after the header's last

    @property
    def open(self) -> bool:
        """Whether more lines could still belong to the header."""
        return self.state in (_FIELDS, _COMMENT)

    def copy(self) -> _Head:
        other = copy.copy(self)
        other.raw = dict(self.raw)
        return other

    def take(self, line: str, index: int) -> bool:
        """Read the line at ``index`` (0-based). False when it is not the header's -- the
        header ended before it, or there is none -- and the body begins with it."""
        state = self.state
        if state == _DONE:
            return False
        if state == _COMMENT:
            fm = _FIELD.match(line.split("-->", 1)[0].strip())
            if fm:
                self.raw.setdefault(fm.group(1).strip().lower(), fm.group(2))
            self.end = index + 1
            if "-->" in line:
                self.state = _DONE
            return True
        if is_blank(line):
            return True  # before the header, or between its field comments
        if state == _BEFORE:
            m = _HEADER_OPEN.match(line)
            if not m:
                self.state = _DONE
                return False
            self.line = self.end = index + 1
            self.state = _FIELDS if m.group(1) else _COMMENT
            return True
        fm = _HEADER_FIELD.match(line)
        if not fm:
            self.state = _DONE
            return False
        self.raw.setdefault(fm.group(1).strip().lower(), fm.group(2))
        self.end = index + 1
        return True

    def header(self) -> Header:
        header = Header()
        if not self.line:
            return header
        raw = dict(self.raw)
        header.line, header.end_line = self.line, self.end
        header.title = raw.pop("title", "")
        for key in ("source", "template", "protocol", "phase", "status", "created"):
            setattr(header, key, raw.pop(key, None) or None)
        parts = raw.pop("participants", "")
        header.participants = [p.strip().lstrip("@") for p in re.split(r"[,\s]+", parts)
                               if p.strip()]
        header.consensus = {k: v.strip('"') for k, v in _KV.findall(raw.pop("consensus", ""))}
        header.extra = raw
        return header


class Reader:
    """``parse``, a piece at a time: ``feed`` whole lines as they come, and ``ledger()`` at
    any point reads what the text so far says -- as ``parse`` would read it whole -- without
    stopping the reader. Entries, once read, never change: a block ends at its first
    delimiter, so only an open block, an open header, or the last line (when it has no
    newline yet) can read differently when more text follows."""

    def __init__(self, default_phase: str = "", *, details: bool = True,
                 structure_only: bool = False) -> None:
        self.default_phase = default_phase
        self.details = details
        self.structure_only = structure_only
        self.count = 0  # lines read
        self.newline: str | None = None  # from the first line, once it is whole
        self.head = _Head()
        self.header: Header | None = None  # once the header is complete
        self.phase = default_phase
        self.entries: list[Comment | Event] = []  # read (since the last skip), never changed
        self.base = 0  # how many entries came before ``entries``
        self.warnings: list[tuple[int, str]] = []
        self.title_line: str | None = None
        self.fence: str | None = None  # the open fence's marker, e.g. "```"
        self.fence_line = 0
        self.block: list[tuple[int, str]] | None = None  # (line_no, text) of the open block
        self.block_start = 0
        self.stray_warned = False  # one warning per run of text between blocks
        self.after_delimiter = False  # a delimiter outside a block, then blank lines only

    def feed(self, text: str) -> None:
        """Read ``text``: whole lines, each ending with its newline."""
        if not text:
            return
        if not text.endswith("\n"):
            raise ValueError("Reader.feed takes whole lines")
        lines = text.split("\n")
        lines.pop()
        if self.newline is None:
            self.newline = "\r\n" if lines[0].endswith("\r") else "\n"
        if "\r" in text:
            lines = [ln[:-1] if ln.endswith("\r") else ln for ln in lines]
        self.take(lines)

    def skip(self, text: str) -> None:  # long: one scan, its state in locals (check's hot path)
        """``feed``, for the structure only: where blocks, fences and the header open and
        close, and the phase. What the lines say -- their entries, warnings, a title -- is
        not kept, nor are the entries read before them: ``entries`` starts again, ``base``
        counts those left out. Much faster than ``feed``: only the lines that can change the
        structure are looked at (delimiters, fences, events), found by a regular expression."""
        if not text.endswith("\n"):
            raise ValueError("Reader.skip takes whole lines")
        pos, n = 0, len(text)
        while self.header is None and pos < n:  # the header: its few lines, read as fed
            end = text.index("\n", pos) + 1
            self.feed(text[pos:end])
            pos = end
        self.base += len(self.entries)
        self.entries = []
        if pos == n:
            return
        fence, fence_line, phase = self.fence, self.fence_line, self.phase
        block, block_start = self.block, self.block_start
        lineno, counted = self.count, pos  # lines before ``counted``
        block_from, block_line = pos, lineno + 1  # where the open block's unread lines begin
        skipped, after = 0, False

        def follow(q: int) -> None:
            """After a delimiter, from ``q``: a Name: line after blank lines opens a block."""
            nonlocal lineno, counted, block, block_start, block_from, block_line, after
            m = _BLANKS_NAME.match(text, q)
            name = m.group(1)
            if name is not None and name_of(_one_cr(name)) is not None:
                lineno += text.count("\n", counted, m.start(1))
                counted = m.start(1)
                block, block_start, block_from, block_line = [], lineno + 1, counted, lineno + 1
            else:
                after = m.end() == n

        if self.after_delimiter:
            follow(pos)
        first = _LINE.match(text, pos)
        for m in itertools.chain([first] if first else [], _STRUCTURE.finditer(text, pos)):
            p = m.start("line")
            lineno += text.count("\n", counted, p)
            counted = p
            line = m.group("fence")
            if fence is not None:
                if line is not None and fence_closes(_one_cr(line), fence):
                    fence = None
                continue
            if line is not None:
                opened = fence_opens(_one_cr(line))
                if opened:
                    fence, fence_line = opened, lineno + 1
                continue
            if m.group("delimiter") is not None:
                if block is not None:
                    block = None
                    skipped += 1
                follow(m.end() + 1)
                continue
            if block is None:  # <!-- between blocks: an event, maybe a phase transition
                ev = _event_kind(_one_cr(m.group("event")))
                if ev:
                    skipped += 1
                    kind, value = ev
                    if kind == PHASE_TRANSITION:
                        stamp = _STAMP.search(value)
                        target = _fields(value[:stamp.start()] if stamp else value).get("to")
                        if target:
                            phase = target
        self.count = lineno + text.count("\n", counted)
        if block is not None:
            rest = text[block_from:].split("\n")
            rest.pop()
            block.extend(enumerate([_one_cr(ln) for ln in rest], block_line))
        self.fence, self.fence_line, self.phase = fence, fence_line, phase
        self.block, self.block_start = block, block_start
        self.after_delimiter = after
        self.base += skipped

    def copy(self) -> Reader:
        """Another reader where this one is, read on apart from it."""
        other = copy.copy(self)
        other.entries = list(self.entries)
        other.warnings = list(self.warnings)
        if self.block is not None:
            other.block = list(self.block)
        if self.header is None:
            other.head = self.head.copy()
        return other

    def ledger(self, tail: str = "", start: int = 0) -> Ledger:
        """What the text read so far says, followed by ``tail`` (a last line without its
        newline, if any), as ``parse`` reads it; its entries from index ``start`` on. The
        reader is left as it was."""
        other = self.copy()
        other.base, other.entries = self.base + len(self.entries), []
        if tail:
            other.take([_one_cr(tail)])
        ledger = other.close(not tail)
        ledger.entries[:0] = self.entries[start:]
        return ledger

    def take(self, lines: list[str]) -> None:  # long: the line loop, its state in locals (hot)
        """Read ``lines`` (without their line ends)."""
        start = self.count
        self.count += len(lines)
        i = 0
        if self.header is None:
            head = self.head
            while i < len(lines) and head.take(lines[i], start + i):
                i += 1
            if head.state != _DONE:
                return
            self.header = head.header()
            self.phase = self.header.phase or self.default_phase
            if i:
                lines = lines[i:]
        details, structure_only = self.details, self.structure_only
        entries, warnings, base = self.entries, self.warnings, self.base
        phase, title_line = self.phase, self.title_line
        fence, fence_line = self.fence, self.fence_line
        block, block_start = self.block, self.block_start
        stray_warned, after_delimiter = self.stray_warned, self.after_delimiter
        for lineno, line in enumerate(lines, start + i + 1):
            if fence is not None:
                if fence_closes(line, fence):
                    fence = None
                if block is not None:
                    block.append((lineno, line))
                continue
            if after_delimiter:  # a delimiter opens a block when a Name: line follows it
                if is_blank(line):
                    continue
                after_delimiter = False
                if name_of(line) is not None:
                    block_start = lineno
                    block = [(lineno, line)]
                    continue
            first = line[:1]
            opened = fence_opens(line) if first in FENCE_FIRST else None
            if opened:
                fence, fence_line = opened, lineno
                if block is not None:
                    block.append((lineno, line))
                continue
            if first == "-" and is_delimiter(line):
                if block is not None:
                    entries.append(_make_comment(block, block_start, lineno - 1, phase,
                                                 warnings, details))
                    block = None
                    stray_warned = False
                after_delimiter = True
                continue
            if block is not None:
                if not structure_only:
                    block.append((lineno, line))
                continue
            if is_blank(line):
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
            elif not entries and not base:
                if title_line is None:
                    hm = _HEADING.match(line)
                    if hm:
                        title_line = hm.group(1)
            elif not stray_warned and not line.startswith("<!--"):
                stray_warned = True
                warnings.append((lineno, "text after a comment's closing --- belongs to no "
                                         "comment (a --- line inside a comment ends it: write "
                                         "*** for a thematic break)"))
        self.phase, self.title_line = phase, title_line
        self.fence, self.fence_line = fence, fence_line
        self.block, self.block_start = block, block_start
        self.stray_warned, self.after_delimiter = stray_warned, after_delimiter

    def close(self, ends_with_newline: bool) -> Ledger:
        """The Ledger of everything read, the reader's own state spent on it."""
        n = self.count
        block, fence = self.block, self.fence
        header = self.header if self.header is not None else self.head.header()
        if block is not None and not self.structure_only:
            self.entries.append(_make_comment(block, self.block_start, n, self.phase,
                                              self.warnings, self.details))
        if fence is not None:
            self.warnings.append((self.fence_line, f"unclosed code fence {fence}"))
        return Ledger(header, self.title_line, self.entries, n, self.newline or "\n",
                      ends_with_newline, block is not None, self.warnings, fence,
                      self.fence_line if fence else 0, self.head.open)


def _one_cr(line: str) -> str:
    return line[:-1] if line.endswith("\r") else line


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
            cast = _vote_of(line, lineno, warnings)
            if cast is not None:
                vote = cast or vote  # "": a VOTE: line that casts none (warned)
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
                if letter is None and kind != "WAIVE":
                    markers.append(Marker(kind, text, author, lineno))
                elif letter is not None and letter.upper() in _REF_KIND.get(kind, ""):
                    markers.append(Marker(kind, text, author, lineno,
                                          f"{letter.upper()}{int(number)}"))
        if "@" in line:
            _add_mentions(line, mentions)
        body.append(line)
    return Comment(author, trimmed(body), vote, start, end, phase, markers, mentions,
                   provenance, origin, stamps)


def _vote_of(line: str, lineno: int, warnings: list[tuple[int, str]]) -> str | None:
    """The vote a vote line casts (one of VOTES); "" for a ``VOTE:`` line that casts none
    (warned), None for a line only like one (body text)."""
    vm = grammar.VOTE.match(line)
    raw = vm.group(1) if vm else ""
    wm = _WORD.search(raw)
    word = wm.group(0).upper() if wm else ""
    if word in VOTES:
        return word
    if line.startswith("VOTE:"):
        warnings.append((lineno, f"unrecognised vote {raw!r} (use READY, CHANGES or REJECT)"))
        return ""
    return None


def _add_mentions(line: str, mentions: list[str]) -> None:
    """Add the @aliases ``line`` mentions (outside code spans) to ``mentions``, once each."""
    plain = _CODE_SPAN.sub("", line) if "`" in line else line
    for alias in _MENTION.findall(plain):
        alias = alias.lower()
        if alias not in mentions:
            mentions.append(alias)
