"""What a persona is told: its personality, the phase, the document, the discussion --
bounded (past the token budget, older comments go in as a deterministic summary), redacted
and fenced as docs/secrets.md says (each redaction reported with the file and line it came
from). What every prompt shares -- its opening blocks (``frame``) and the last scan
(``finish``) -- is here once; every turn's prompt (cascade.run.step_prompt) is built on it.
"""
from __future__ import annotations

import hashlib
import re
from typing import Any

import msgspec.structs
from msgspec import Struct, field

from cascade.config.personas import Persona
from cascade.base.errors import display_path
from cascade.ledger.records import Comment
from cascade.protocol.discussion import Discussion
from cascade.base.safepath import read_config
from cascade.turns.redact import redact
from cascade.turns.settings import Settings
from cascade.turns.sources import SourceText


def estimate_tokens(text: str) -> int:
    """A model-independent estimate (about four characters a token); no tokenizer download."""
    return len(text) // 4 + 1


class Prompt(Struct):
    messages: list[dict[str, str]]
    redactions: list[str] = field(default_factory=list)  # "path:line kind"
    notes: list[str] = field(default_factory=list)  # e.g. "document withheld: ..."
    summarised: int = 0  # comments that went in as the summary
    seen: str | None = None  # how much of the document went in: "all", "<shown>/<total>", "none"

    @property
    def tokens(self) -> int:
        return sum(estimate_tokens(m["content"]) for m in self.messages)


def clip(text: str, budget_tokens: int, what: str) -> str:
    limit = budget_tokens * 4
    if len(text) <= limit:
        return text
    return text[:limit].rstrip() + f"\n\n[... {len(text) - limit} more characters of {what} not shown]"


def preamble_of(d: Discussion) -> str:
    lines = d.text.split("\n")
    start = d.header.end_line
    entries = d.ledger.entries
    end = len(lines)
    if entries:
        first = entries[0]
        end = first.line - 2 if isinstance(first, Comment) else first.line - 1
    body = "\n".join(ln.rstrip("\r") for ln in lines[start:max(start, end)]).strip()
    body = re.sub(r"\n-{3,}\s*\n+\*[^\n]*\*\s*\Z", "", body)  # the "discussion begins" footer
    return body.strip()


def _label(text: str) -> str:
    """An author name or path as it may stand in a block's opening line: one line, no angle
    brackets, at most 80 characters."""
    return " ".join(str(text).replace("<", "(").replace(">", ")").split())[:80]


class Blocks:
    """Untrusted text, each piece in its own block that it cannot close (docs/secrets.md,
    "Prompt injection"): ID, a digest of every piece of the request, taken out of any piece
    that holds it anyway; a quoted piece's lines start with "> "."""

    def __init__(self) -> None:
        self.pieces: list[tuple[str, str, bool]] = []  # (what, text, quoted)

    def add(self, what: str, text: str, quoted: bool = True) -> int:
        self.pieces.append((what, text, quoted))
        return len(self.pieces) - 1

    def render(self) -> tuple[str, list[str]]:
        digest = hashlib.sha256()
        for what, text, _ in self.pieces:
            digest.update(what.encode("utf-8", "replace") + b"\0" + text.encode("utf-8", "replace") + b"\0")
        ident = digest.hexdigest()[:16]
        out = []
        for what, text, quoted in self.pieces:
            text = text.replace(ident, "[id]")
            if quoted:
                text = "\n".join("> " + line if line else ">" for line in text.split("\n"))
            out.append(f"<<<material {ident}: {_label(what).replace(ident, '[id]')}>>>\n"
                       f"{text}\n<<<end {ident}>>>")
        return ident, out


def first_line(lines: list[str], after: int, text: str) -> int:
    """The ledger line (1-based) where ``text`` -- a part of the ledger, stripped of its
    leading blank lines -- starts, looking from line ``after`` on (within the blank lines a
    block may open with); ``after`` when it cannot be found."""
    first = text.split("\n", 1)[0].strip()
    if not first:
        return after
    for number in range(max(after, 1), min(len(lines), after + 64) + 1):
        if first in lines[number - 1]:
            return number
    return after


def line_of(d: Discussion, needle: str, default: int = 1) -> int:
    for number, line in enumerate(d.text.split("\n"), 1):
        if needle and needle in line:
            return number
    return default


def scrub_persona(persona: Persona, scrub) -> Persona:
    """The persona with its file's text redacted, each redaction reported at its line in the
    persona file."""
    try:  # as it was loaded: never through a symbolic link
        file_text = read_config(persona.path).decode("utf-8", errors="replace")
    except OSError:
        file_text = ""
    where = display_path(persona.path)  # once: it resolves the path on disk

    def field_(text: str) -> str:
        first = text.strip().split("\n", 1)[0]
        at = file_text.find(first) if first else -1
        line = file_text.count("\n", 0, at) + 1 if at >= 0 else 1
        return scrub(text, where, line)

    return msgspec.structs.replace(
        persona, name=field_(persona.name), role=field_(persona.role),
        personality=field_(persona.personality),
        expertise=tuple(field_(e) for e in persona.expertise),
        concerns=tuple(field_(c) for c in persona.concerns))


def scrubber(prompt: Prompt):
    """``scrub(text, where, first_line)``: the text redacted, each redaction recorded in the
    prompt at the file and line it came from."""
    def scrub(text: str, where: str, first_line: int) -> str:
        clean, found = redact(text)
        for r in found:
            prompt.redactions.append(f"{where}:{first_line + r.line - 1} {r.kind}")
        return clean
    return scrub


def add_source(prompt: Prompt, blocks: Blocks, source: SourceText | None, settings: Settings,
               scrub) -> tuple[dict[str, Any] | None, int | None]:
    """The document, redacted and clipped to its budget, in a code fence it cannot close (its
    own block); returns the template's view of it and the block's index. Sets
    ``prompt.seen``: how much of it the model is shown."""
    if source is None:
        return None, None
    if source.text is None:
        prompt.notes.append(f"{source.path} withheld: {source.note}")
        prompt.seen = "none"
        return {"path": _label(source.path), "block": None, "note": source.note}, None
    text = scrub(source.text, source.path, 1)
    limit = settings.source_tokens * 4
    clipped = clip(text, settings.source_tokens, "the document")
    note = ""
    prompt.seen = "all"
    if clipped != text:
        prompt.seen = f"{limit}/{len(text)}"
        note = "the document was longer than the prompt budget; its end is not shown"
        prompt.notes.append(
            f"{source.path}: the panel sees {limit:,} of its {len(text):,} characters "
            f"(CASCADE_SOURCE_TOKENS={settings.source_tokens}): its votes will not "
            "count for this revision")
    fenced = "````markdown\n" + clipped.replace("````", "` ` ` `") + "\n````"
    at = blocks.add(f"document {source.path}", fenced, quoted=False)
    return {"path": _label(source.path), "block": None, "note": note}, at


class Frame(Struct):
    """What every turn's prompt opens with, each piece in its own block: the title (or the
    topic), the document, the background. ``rest``: the context tokens left for the rest."""

    prompt: Prompt
    scrub: Any
    blocks: Blocks
    ledger_name: str
    title_at: int
    source_view: dict[str, Any] | None
    source_at: int | None
    context_at: int | None
    rest: int

    def render(self) -> tuple[str, list[str], dict[str, Any]]:
        """Every block rendered: the request's id, the blocks, and the template's view of the
        opening ones (``title_block``, ``source``, ``context``)."""
        ident, rendered = self.blocks.render()
        if self.source_view is not None and self.source_at is not None:
            self.source_view["block"] = rendered[self.source_at]
        return ident, rendered, {
            "title_block": rendered[self.title_at], "source": self.source_view,
            "context": rendered[self.context_at] if self.context_at is not None else ""}


def frame(d: Discussion, source: SourceText | None, settings: Settings,
          title: str = "title") -> Frame:
    """The opening blocks of a prompt for ``d`` (``title``: what the title block is called)."""
    prompt = Prompt(messages=[])
    ledger_name = display_path(d.path)
    scrub = scrubber(prompt)
    blocks = Blocks()
    title_at = blocks.add(title, scrub(d.title, ledger_name,
                                       line_of(d, d.title, d.header.line or 1)))
    source_view, source_at = add_source(prompt, blocks, source, settings, scrub)
    budget = settings.context_tokens
    preamble = preamble_of(d)
    context_at = None
    if preamble:
        first = first_line(d.text.split("\n"), d.header.end_line + 1, preamble)
        preamble = clip(scrub(preamble, ledger_name, first), budget // 4, "the background")
        budget -= estimate_tokens(preamble)
        context_at = blocks.add("background", preamble)
    return Frame(prompt, scrub, blocks, ledger_name, title_at, source_view, source_at,
                 context_at, budget)


def finish(prompt: Prompt, scrub, system: str, user: str) -> Prompt:
    """The prompt's messages. The last line of defence: whatever the templates added (a
    protocol's instructions, a repository's own template) is scanned too; anything found
    there is reported as such."""
    system = scrub(system, "the system prompt", 1)
    user = scrub(user, "the prompt", 1)
    prompt.messages = [{"role": "system", "content": system.strip() + "\n"},
                       {"role": "user", "content": user.strip() + "\n"}]
    return prompt
