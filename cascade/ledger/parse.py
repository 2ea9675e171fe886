"""Turn ledger text into a Ledger. Tolerant of hand-written files; never raises on content.

Structure (seed 002): an optional header of HTML comments, free markdown (the context),
then comment blocks::

    ---
    Name: AI-Architect
    markdown ...
    VOTE: CHANGES
    ---

and state events, one HTML comment line each, between blocks. Structural lines start at
column 0 and never count inside a fenced code block. A ``---`` line is a block delimiter only
when the next non-blank line is a ``Name:`` header, an event, another delimiter, or the end of
the file; any other ``---`` is a thematic break inside the markdown.
"""
from __future__ import annotations

import re

from cascade.ledger.model import (
    EVENT_KINDS, PHASE_TRANSITION, VOTES, Comment, Event, Header, Ledger, Marker,
)

_DELIM = re.compile(r"-{3,}[ \t]*\Z")
_NAME = re.compile(r"Name:[ \t]*(\S.*?)[ \t]*\Z")
_VOTE = re.compile(r"(?i)vote:[ \t]*(.*?)[ \t]*\Z")
_EVENT = re.compile(r"<!--[ \t]*([A-Z][A-Z-]+[A-Z])[ \t]*:?[ \t]*(.*?)[ \t]*-->[ \t]*\Z")
_HEADER_OPEN = re.compile(r"(?i)<!--[ \t]*DISCUSSION[ \t]*(-->)?[ \t]*\Z")
_HEADER_FIELD = re.compile(r"<!--[ \t]*([A-Za-z][\w -]*?)[ \t]*:[ \t]*(.*?)[ \t]*-->[ \t]*\Z")
_FIELD = re.compile(r"([A-Za-z][\w -]*?)[ \t]*:[ \t]*(.*?)[ \t]*\Z")
_PROVENANCE = re.compile(r"<!--[ \t]*cascade:ai\b(.*?)-->[ \t]*\Z")
_KV = re.compile(r"([\w.-]+)=(\"[^\"]*\"|\S+)")
# A backtick fence's info string cannot hold a backtick (CommonMark): ```x``` is inline code.
FENCE = re.compile(r"[ \t]{0,3}(`{3,}(?=[^`]*\Z)|~{3,})")
_MARKER = re.compile(
    r"[ \t]{0,3}(?:[-*+][ \t]+|\d{1,3}[.)][ \t]+)?(?:\*\*|__)?"
    r"(Q|TODO|DECISION|ASSIGNED|DONE|CONCERN):(?:\*\*|__)?[ \t]+(.*\S)")
_MENTION = re.compile(r"(?<![\w@/.`])@([A-Za-z][A-Za-z0-9_]*(?:-[A-Za-z0-9_]+)*)")
_CODE_SPAN = re.compile(r"`+[^`]*`+")
_HEADING = re.compile(r"#[ \t]+(.*?)[ \t#]*\Z")
_WORD = re.compile(r"[A-Za-z]+")
_FENCE_START = frozenset(" \t`~")
_MARKER_START = frozenset(" \t-*+_QTDAC0123456789")
_ARROW = re.compile(r"(\S+)[ \t]*(?:→|->)[ \t]*(\S+)")


def parse(text: str, default_phase: str = "", *, details: bool = True) -> Ledger:
    """Parse ledger text. Content problems become warnings, never exceptions.

    ``details=False`` skips markers and mentions (what consensus does not need): the same
    comments, votes, events and line numbers, read faster.
    """
    newline = "\r\n" if "\r\n" in text[: text.find("\n") + 1 or len(text)] else "\n"
    ends_with_newline = text.endswith("\n") or text == ""
    lines = text.split("\n")
    if ends_with_newline:
        lines.pop()
    if "\r" in text:
        lines = [ln[:-1] if ln.endswith("\r") else ln for ln in lines]
    n = len(lines)

    header, i = _parse_header(lines)
    phase = header.phase or default_phase
    entries: list[Comment | Event] = []
    warnings: list[tuple[int, str]] = []
    title_line: str | None = None

    fence: str | None = None  # the open fence's marker, e.g. "```"
    block: list[tuple[int, str]] | None = None  # (line_no, text) of the open block
    block_start = 0
    block_fence: str | None = None

    def next_nonblank(j: int) -> int:
        while j < n and not lines[j].strip():
            j += 1
        return j

    def is_delimiter(j: int) -> bool:
        """Line j is '---'; is it structural?"""
        k = next_nonblank(j + 1)
        if k >= n:
            return True
        nxt = lines[k]
        return bool(_NAME.match(nxt) or _DELIM.match(nxt) or _event_kind(nxt))

    def close_block(end: int) -> None:
        nonlocal block
        if block is not None:
            entries.append(_make_comment(block, block_start, end, phase, warnings, details))
            block = None

    while i < n:
        line = lines[i]
        lineno = i + 1
        first = line[:1]
        if fence is not None:
            if first in _FENCE_START:
                stripped = line.strip()
                if stripped.startswith(fence) and not stripped.strip(fence[0]):
                    fence = None
            if block is not None:
                block.append((lineno, line))
            i += 1
            continue
        if first in _FENCE_START:
            m = FENCE.match(line)
            if m:
                fence = m.group(1)
                if block is not None:
                    block.append((lineno, line))
                i += 1
                continue
        if first == "-" and _DELIM.match(line) and (block is not None or _opens_block(lines, next_nonblank(i + 1))):
            if block is not None and not is_delimiter(i):
                block.append((lineno, line))  # a thematic break inside the comment
                i += 1
                continue
            close_block(lineno - 1)
            k = next_nonblank(i + 1)
            if k < n and _NAME.match(lines[k]):
                block = []
                block_start = k + 1
                i = k + 1
                block.append((block_start, lines[k]))
                continue
            i += 1
            continue
        if block is not None:
            block.append((lineno, line))
            i += 1
            continue
        if not first:
            i += 1
            continue
        # Between blocks: events, the context markdown, stray text.
        ev = _event_kind(line)
        if ev:
            kind, value = ev
            event = Event(kind, value, _fields(value), lineno, phase)
            if kind == PHASE_TRANSITION:
                target = event.fields.get("to")
                if target:
                    phase = target
                else:
                    warnings.append((lineno, "phase transition names no target phase"))
            entries.append(event)
        elif title_line is None and not entries:
            hm = _HEADING.match(line)
            if hm:
                title_line = hm.group(1)
        i += 1
    open_block = block is not None
    if block is not None:
        close_block(n)
    if fence is not None:
        warnings.append((n, f"unclosed code fence {fence}"))
    ledger = Ledger(header, title_line, entries, n, newline, ends_with_newline, open_block, warnings)
    ledger.open_fence = fence  # type: ignore[attr-defined]
    return ledger


def _opens_block(lines: list[str], k: int) -> bool:
    return k < len(lines) and bool(_NAME.match(lines[k]))


def _event_kind(line: str) -> tuple[str, str] | None:
    if not line.startswith("<!--"):
        return None
    m = _EVENT.match(line)
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


def _parse_header(lines: list[str]) -> tuple[Header, int]:
    header = Header()
    i = 0
    while i < len(lines) and not lines[i].strip():
        i += 1
    if i >= len(lines):
        return header, i
    m = _HEADER_OPEN.match(lines[i])
    if not m:
        return header, 0
    header.line = i + 1
    i += 1
    raw: dict[str, str] = {}
    if m.group(1):  # one comment per field: <!-- Title: X -->
        while i < len(lines):
            j = i
            while j < len(lines) and not lines[j].strip():
                j += 1  # blank lines between field comments are tolerated
            fm = _HEADER_FIELD.match(lines[j]) if j < len(lines) else None
            if not fm:
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
    return header, i


def _make_comment(block: list[tuple[int, str]], start: int, end: int, phase: str,
                  warnings: list[tuple[int, str]], details: bool = True) -> Comment:
    author = _NAME.match(block[0][1]).group(1)  # type: ignore[union-attr]
    vote: str | None = None
    body: list[str] = []
    markers: list[Marker] = []
    mentions: list[str] = []
    provenance: dict[str, str] = {}
    fence: str | None = None
    for lineno, line in block[1:]:
        first = line[:1]
        if fence is not None:
            if first in _FENCE_START:
                stripped = line.strip()
                if stripped.startswith(fence) and not stripped.strip(fence[0]):
                    fence = None
            body.append(line)
            continue
        if not first:
            body.append(line)
            continue
        if first in _FENCE_START:
            fm = FENCE.match(line)
            if fm:
                fence = fm.group(1)
                body.append(line)
                continue
        if (first == "V" or first == "v") and line[:5].lower() == "vote:":
            vm = _VOTE.match(line)
            wm = _WORD.search(vm.group(1)) if vm else None
            word = wm.group(0).upper() if wm else ""
            if word in VOTES:
                vote = word
                continue
            if line.startswith("VOTE:"):
                warnings.append((lineno, f"unrecognised vote {vm.group(1)!r} (use READY, CHANGES or REJECT)"))
                continue
        if first == "<" and line.startswith("<!--"):
            pm = _PROVENANCE.match(line)
            if pm:
                provenance = {k: v.strip('"') for k, v in _KV.findall(pm.group(1))}
                continue
        if not details:
            body.append(line)
            continue
        if first in _MARKER_START and ":" in line:
            mm = _MARKER.match(line)
            if mm:
                markers.append(Marker(mm.group(1), mm.group(2), author, lineno))
        if "@" in line:
            plain = _CODE_SPAN.sub("", line) if "`" in line else line
            for alias in _MENTION.findall(plain):
                alias = alias.lower()
                if alias not in mentions:
                    mentions.append(alias)
        body.append(line)
    while body and not body[0].strip():
        body.pop(0)
    while body and not body[-1].strip():
        body.pop()
    return Comment(author, "\n".join(body), vote, start, end, phase, markers, mentions, provenance)
