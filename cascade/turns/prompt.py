"""What a persona is told: its personality, the phase, the document, the discussion.

Bounded: past the token budget, older comments go in as a deterministic summary (never
silently cut). Redacted: credential-looking text never leaves the machine; each redaction is
reported with the file and line it came from.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from cascade.config import templates
from cascade.config.personas import Persona
from cascade.errors import display_path
from cascade.ledger.discussion import Discussion
from cascade.ledger.model import Comment
from cascade.ledger.summary import gist
from cascade.turns.redact import redact
from cascade.turns.settings import Settings
from cascade.turns.sources import SourceText

_LIST_CAP = 10


def estimate_tokens(text: str) -> int:
    """A model-independent estimate (about four characters a token); no tokenizer download."""
    return len(text) // 4 + 1


@dataclass
class Prompt:
    messages: list[dict[str, str]]
    redactions: list[str] = field(default_factory=list)  # "path:line kind"
    notes: list[str] = field(default_factory=list)  # e.g. "document withheld: ..."
    summarised: int = 0  # comments that went in as the summary
    seen: str | None = None  # how much of the document went in: "all", "<shown>/<total>", "none"

    @property
    def tokens(self) -> int:
        return sum(estimate_tokens(m["content"]) for m in self.messages)


def _clip(text: str, budget_tokens: int, what: str) -> str:
    limit = budget_tokens * 4
    if len(text) <= limit:
        return text
    return text[:limit].rstrip() + f"\n\n[... {len(text) - limit} more characters of {what} not shown]"


def _preamble(d: Discussion) -> str:
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


def _earlier_summary(d: Discussion, older: list[Comment]) -> str:
    positions: dict[str, tuple[str | None, str]] = {}
    for c in older:
        positions[c.author] = (c.vote or positions.get(c.author, (None, ""))[0], gist(c.body, 100))
    out = [f"{len(older)} earlier comments, in short:"]
    out += [f"- {name}: {vote or 'no vote'} - {text}" for name, (vote, text) in positions.items()]
    older_ids = {id(c) for c in older}

    def capped(title: str, items: list[str]) -> None:
        if items:
            shown = items[-_LIST_CAP:]
            more = f" (the last {len(shown)} of {len(items)})" if len(items) > len(shown) else ""
            out.append(f"\n{title}{more}:")
            out.extend(f"- {item}" for item in shown)

    def marked(kind: str) -> list[str]:
        return [f"{m.text} ({m.author})" for c in older if id(c) in older_ids
                for m in c.markers if m.kind == kind]

    capped("Questions asked", marked("Q"))
    capped("Decisions proposed", marked("DECISION"))
    capped("Concerns raised", marked("CONCERN"))
    capped("Action items", marked("TODO") + marked("ASSIGNED"))
    return "\n".join(out)


def build_prompt(d: Discussion, persona: Persona, why: str, source: SourceText | None,
                 settings: Settings) -> Prompt:
    prompt = Prompt(messages=[])
    ledger_name = display_path(d.path)

    def scrub(text: str, where: str, first_line: int) -> str:
        clean, found = redact(text)
        for r in found:
            prompt.redactions.append(f"{where}:{first_line + r.line - 1} {r.kind}")
        return clean

    source_view: dict[str, Any] | None = None
    if source is not None:
        if source.text is None:
            prompt.notes.append(f"{source.path} withheld: {source.note}")
            source_view = {"path": source.path, "text": None, "note": source.note}
            prompt.seen = "none"
        else:
            text = scrub(source.text, source.path, 1)
            limit = settings.source_tokens * 4
            clipped = _clip(text, settings.source_tokens, "the document")
            note = ""
            prompt.seen = "all"
            if clipped != text:
                prompt.seen = f"{limit}/{len(text)}"
                note = "the document was longer than the prompt budget; its end is not shown"
                prompt.notes.append(
                    f"{source.path}: the panel sees {limit:,} of its {len(text):,} characters "
                    f"(CASCADE_SOURCE_TOKENS={settings.source_tokens}): its votes will not "
                    "count for this revision")
            source_view = {"path": source.path, "text": clipped.replace("````", "` ` ` `"),
                           "note": note}

    budget = settings.context_tokens
    preamble = _preamble(d)
    if preamble:
        preamble = _clip(scrub(preamble, ledger_name, d.header.end_line + 1), budget // 4,
                         "the background")
        budget -= estimate_tokens(preamble)

    comments = d.comments
    recent: list[dict[str, Any]] = []
    used = 0
    cut = len(comments)
    for index in range(len(comments) - 1, -1, -1):
        c = comments[index]
        body = _clip(scrub(c.body, ledger_name, c.line + 1), max(budget // 2, 100), "this comment")
        cost = estimate_tokens(body) + 10
        if recent and used + cost > budget:
            break
        recent.append({"author": c.author, "vote": c.vote, "body": body})
        used += cost
        cut = index
    recent.reverse()
    older = comments[:cut]
    earlier = scrub(_earlier_summary(d, older), ledger_name, 1) if older else ""
    prompt.summarised = len(older)

    system = templates.render("prompts", "system", d.root, persona=persona)
    user = templates.render("prompts", "turn", d.root, title=d.title, phase=d.current_phase,
                            source=source_view, context=preamble, earlier=earlier,
                            recent=recent, persona=persona, why=why)
    system = scrub(system, display_path(persona.path), 1)
    prompt.messages = [{"role": "system", "content": system.strip() + "\n"},
                       {"role": "user", "content": user.strip() + "\n"}]
    return prompt


def why_text(reason: str) -> str:
    if reason.startswith("mentioned by "):
        return f"You were {reason}: answer what they asked of you, in your role."
    if reason == "asked":
        return "You were asked for your view."
    return "There is new input since you last spoke (or you have not spoken yet): give your review."
