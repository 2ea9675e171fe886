"""Text the ledger gains: headers, comment blocks, events. Only ever appended.

Anything written into a comment block is neutralised first, so that no text -- a model's or a
person's -- can open a block, forge a ``Name:`` header, a ``VOTE:`` line or a state event.
Structural lines must start at column 0; a neutralised line gains one leading space, which
markdown renders identically (a paragraph or a thematic break either way).
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from cascade.ledger.model import VOTES
from cascade.ledger.parse import FENCE

_STRUCTURAL = re.compile(r"(?:-{3,}[ \t]*\Z|Name:|(?i:vote:)|<!--)")
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)*?\1")


def neutralise(text: str, *, untrusted: bool = False) -> str:
    """Make text safe to place inside a comment block.

    - outside fenced code, structural lines (``---``, ``Name:``, ``VOTE:``, ``<!--``) gain a
      leading space; inside a fence nothing is structural, so code stays as written;
    - an unclosed code fence is closed, so it cannot swallow the blocks after it;
    - ``untrusted`` (model output): outside code, ``<!--`` becomes ``&lt;!--``, so an HTML
      comment shows as text instead of hiding what follows it from a reader.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    out: list[str] = []
    fence: str | None = None
    for line in text.split("\n"):
        if fence is not None:
            stripped = line.strip()
            if stripped.startswith(fence) and not stripped.strip(fence[0]):
                fence = None
            out.append(line)
            continue
        m = FENCE.match(line)
        if m:
            fence = m.group(1)
            out.append(line)
            continue
        if untrusted and "<!--" in line:
            line = _escape_comments(line)
        if _STRUCTURAL.match(line):
            line = " " + line
        out.append(line)
    if fence is not None:
        out.append(fence)
    return "\n".join(out).strip("\n")


def _escape_comments(line: str) -> str:
    """Escape ``<!--`` outside inline code spans."""
    parts = []
    last = 0
    for m in _CODE_SPAN.finditer(line):
        parts.append(line[last:m.start()].replace("<!--", "&lt;!--"))
        parts.append(m.group(0))
        last = m.end()
    parts.append(line[last:].replace("<!--", "&lt;!--"))
    return "".join(parts)


def _comment_safe(text: str) -> str:
    """Keep a value from ending the HTML comment it sits in."""
    return text.replace("-->", "- ->").replace("--!>", "- -!>").replace("<!--", "<!- -")


def render_comment(author: str, body: str, vote: str | None = None, *,
                   provenance: Mapping[str, object] | None = None, untrusted: bool = False) -> str:
    """One whole comment block, ending with its closing delimiter and a newline."""
    author = " ".join(author.split())
    lines = ["---", f"Name: {author}"]
    if provenance:
        lines.append(f"<!-- cascade:ai {format_fields(provenance)} -->")
    text = neutralise(body, untrusted=untrusted)
    if text:
        lines += ["", text]
    if vote is not None:
        if vote not in VOTES:
            raise ValueError(f"vote must be one of {', '.join(VOTES)}, not {vote!r}")
        lines += ["", f"VOTE: {vote}"]
    lines.append("---")
    return "\n".join(lines) + "\n"


def render_event(kind: str, value: str = "", fields: Mapping[str, object] | None = None) -> str:
    parts = [p for p in (" ".join(value.split()), format_fields(fields or {})) if p]
    payload = _comment_safe(" ".join(parts))
    return f"<!-- {kind}: {payload} -->\n" if payload else f"<!-- {kind} -->\n"


def render_header(fields: Iterable[tuple[str, str]]) -> str:
    """The metadata header: one HTML comment per field, invisible when rendered."""
    out = ["<!-- DISCUSSION -->"]
    for key, value in fields:
        value = _comment_safe(" ".join(str(value).split()))
        out.append(f"<!-- {key}: {value} -->")
    return "\n".join(out) + "\n"


def format_fields(fields: Mapping[str, object]) -> str:
    parts = []
    for key, value in fields.items():
        if value is None:
            continue
        text = _comment_safe(str(value))
        if not text or any(c.isspace() for c in text) or '"' in text:
            text = '"' + " ".join(text.replace('"', "'").split()) + '"'
        parts.append(f"{key}={text}")
    return " ".join(parts)
