"""Text the ledger gains: headers, comment blocks, events. Only ever appended.

Anything written into a comment block is neutralised first, so that no text -- a model's or a
person's -- can open a block, forge a ``Name:`` header, a ``VOTE:`` line or a state event.
Structural lines must start at column 0; a neutralised line gains one leading space, which
markdown renders identically (a paragraph or a thematic break either way).

Every value written -- a comment, an author, a header field, an event, a stamp field -- is
also made inert first (cascade.base.text.ledger_text): no control character reaches a ledger, so
git always diffs it as text and a terminal that shows it is never driven by it.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from cascade.ledger import grammar
from cascade.ledger.records import VOTES
from cascade.ledger.parse import parse
from cascade.ledger.provenance import (
    LEDGER,
    NONCE,
    SIG,
    bound_to,
    digest,
    event_digest,
    nonce,
    verify,
    verify_event,
)
from cascade.base.text import ledger_text

_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)*?\1")


def neutralise(text: str, *, untrusted: bool = False) -> str:
    """Make text safe to place inside a comment block.

    - first made inert (cascade.base.text.ledger_text, ``untrusted``: a model's text); its
      line ends, a lone CR too, become ``\\n``, so that every piece is checked as a line;
    - outside fenced code, every line the parser could read as structure
      (grammar.structural_in_block) gains a leading space; inside a fence nothing is
      structural, so code stays as written (fences tracked by the parser's own functions);
    - an unclosed code fence is closed, so it cannot swallow the blocks after it;
    - ``untrusted``: outside code, ``<!--`` becomes ``&lt;!--``, so an HTML comment shows as
      text instead of hiding what follows it from a reader;
    - blank lines at either end are dropped, as the parser drops them from a comment.
    """
    text = ledger_text(text, untrusted=untrusted)
    out: list[str] = []
    fence: str | None = None
    for line in text.split("\n"):
        if fence is not None:
            if grammar.fence_closes(line, fence):
                fence = None
            out.append(line)
            continue
        opened = grammar.fence_opens(line)
        if opened:
            fence = opened
            out.append(line)
            continue
        if untrusted and "<!--" in line:
            line = _escape_comments(line)
        if grammar.structural_in_block(line):
            line = " " + line
        out.append(line)
    if fence is not None:
        out.append(fence)
    return grammar.trimmed(out)


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
    """Keep a value from ending the HTML comment it sits in (and from carrying controls)."""
    text = ledger_text(text)
    return text.replace("-->", "- ->").replace("--!>", "- -!>").replace("<!--", "<!- -")


def render_comment(author: str, body: str, vote: str | None = None, *,
                   provenance: Mapping[str, object] | None = None, untrusted: bool = False,
                   origin: str = "ai") -> str:
    """One whole comment block, ending with its closing delimiter and a newline; with
    ``provenance``, carrying the tool's stamp (``<!-- cascade:<origin> ... -->``: a fresh
    nonce, and a digest of what the parser reads back: cascade.ledger.provenance). The block
    is parsed back first: if the parser does not read exactly the block meant, nothing is
    returned (ValueError)."""
    author = " ".join(ledger_text(author).split())
    if vote is not None and vote not in VOTES:
        raise ValueError(f"vote must be one of {', '.join(VOTES)}, not {vote!r}")
    text = neutralise(body, untrusted=untrusted)
    if provenance is None:
        rendered = _block(author, text, vote, None)
        _verify(rendered, author, text, vote, None, None)
        return rendered
    fields = {k: v for k, v in provenance.items() if v is not None and k != SIG}
    fields.setdefault(NONCE, nonce())
    draft = _block(author, text, vote, f"<!-- cascade:{origin} {format_fields(fields)} -->")
    comment = _parse_one(draft)
    signed = {**fields, SIG: digest(comment)}
    stamp = f"<!-- cascade:{origin} {format_fields(signed)} -->"
    rendered = _block(author, text, vote, stamp)
    _verify(rendered, author, text, vote, origin, comment.provenance)
    return rendered


def _block(author: str, text: str, vote: str | None, stamp: str | None) -> str:
    lines = ["---", f"Name: {author}"]
    if stamp:
        lines.append(stamp)
    if text:
        lines += ["", text]
    if vote is not None:
        lines += ["", f"VOTE: {vote}"]
    lines.append("---")
    return "\n".join(lines) + "\n"


def _parse_one(rendered: str):
    ledger = parse(rendered, details=False)
    if len(ledger.entries) != 1 or not ledger.comments or ledger.open_block:
        raise ValueError("a rendered comment block does not parse back as one block")
    return ledger.comments[0]


def _verify(rendered: str, author: str, text: str, vote: str | None, origin: str | None,
            fields: Mapping[str, str] | None) -> None:
    """The block must read back as exactly what was meant: one block, this author, this body,
    this vote, this stamp (and a digest that verifies)."""
    c = _parse_one(rendered)
    ok = (c.author == author and c.body == text and c.vote == vote and c.origin == origin
          and c.stamps == (1 if origin else 0))
    if ok and origin:
        ok = ({k: v for k, v in c.provenance.items() if k != SIG} == dict(fields or {})
              and verify(c) is None)
    if not ok:
        raise ValueError(f"refusing to write a comment block by {author!r} that would not read "
                         "back as written")


def render_event(kind: str, value: str = "", fields: Mapping[str, object] | None = None, *,
                 stamp: bool = False, ledger: str | None = None) -> str:
    """One event line. ``stamp``: the tool's stamp (``ledger=`` the ledger it is written for,
    when given, ``n=`` a nonce, then ``sig=`` a digest of everything before it), as every
    event the tool writes carries; the line is parsed back and must verify, else nothing is
    returned (ValueError)."""
    fields = {k: v for k, v in (fields or {}).items() if not (stamp and k == LEDGER)}
    if stamp:
        fields[LEDGER] = ledger
        fields[NONCE] = nonce()
    parts = [p for p in (" ".join(ledger_text(value).split()), format_fields(fields)) if p]
    payload = _comment_safe(" ".join(parts))
    if not stamp:
        return f"<!-- {kind}: {payload} -->\n" if payload else f"<!-- {kind} -->\n"
    line = f"<!-- {kind}: {payload} {SIG}={event_digest(kind, payload)} -->\n"
    read = parse(line, details=False)
    events = read.events
    if len(read.entries) != 1 or not events or events[0].kind != kind \
            or verify_event(events[0]) is not None or bound_to(events[0]) != ledger:
        raise ValueError(f"refusing to write a {kind} event that would not read back as written")
    return line


def render_header(fields: Iterable[tuple[str, str]]) -> str:
    """The metadata header: one HTML comment per field, invisible when rendered."""
    out = ["<!-- DISCUSSION -->"]
    for key, value in fields:
        value = _comment_safe(" ".join(ledger_text(str(value)).split()))
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
