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

_STRUCTURAL = re.compile(r"(?:-{3,}[ \t]*\Z|Name:|(?i:vote:)|<!--)")
_FENCE = re.compile(r"[ \t]{0,3}(`{3,}|~{3,})")


def neutralise(text: str, *, untrusted: bool = False) -> str:
    """Make text safe to place inside a comment block.

    - structural lines (``---``, ``Name:``, ``VOTE:``, ``<!--``) gain a leading space;
    - an unclosed code fence is closed, so it cannot swallow the blocks after it;
    - ``untrusted`` (model output): HTML comments are escaped, so they show as text
      instead of hiding anything from a reader.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if untrusted:
        text = text.replace("<!--", "&lt;!--").replace("-->", "--&gt;")
    out: list[str] = []
    fence: str | None = None
    for line in text.split("\n"):
        if fence is not None:
            stripped = line.strip()
            if stripped.startswith(fence) and not stripped.strip(fence[0]):
                fence = None
        else:
            m = _FENCE.match(line)
            if m:
                fence = m.group(1)
        if _STRUCTURAL.match(line):
            line = " " + line
        out.append(line)
    if fence is not None:
        out.append(fence)
    return "\n".join(out).strip("\n")


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
    parts = [p for p in (value, format_fields(fields or {})) if p]
    payload = " ".join(parts).replace("--", "- -")
    return f"<!-- {kind}: {payload} -->\n" if payload else f"<!-- {kind} -->\n"


def render_header(fields: Iterable[tuple[str, str]]) -> str:
    """The metadata header: one HTML comment per field, invisible when rendered."""
    out = ["<!-- DISCUSSION -->"]
    for key, value in fields:
        value = " ".join(str(value).split()).replace("--", "- -")
        out.append(f"<!-- {key}: {value} -->")
    return "\n".join(out) + "\n"


def format_fields(fields: Mapping[str, object]) -> str:
    parts = []
    for key, value in fields.items():
        if value is None:
            continue
        text = str(value).replace("--", "- -")
        if not text or any(c.isspace() for c in text) or '"' in text:
            text = '"' + " ".join(text.replace('"', "'").split()) + '"'
        parts.append(f"{key}={text}")
    return " ".join(parts)
