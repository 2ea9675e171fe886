"""Sample ledger text for the benchmarks: realistic comments of about a kilobyte, and the
rule that governs the benchmarks' ADRs."""
from __future__ import annotations

RULES = """\
rules:
  - name: adr
    match: "docs/adr/*.md"
    discussion: "docs/adr/discussions/{stem}.discussion.md"
    participants: [architect, security, pragmatist]
"""


def comment(i: int, author: str, vote: str | None, decision_every: int = 50,
            stamp: dict | None = None) -> str:
    """One comment block with markers, a table, a code fence and a quote. With ``stamp``, the
    block is written as the tool writes a persona's turn (stamped, digest included)."""
    body = [
        f"Comment {i}: looking at this from my side, the proposal holds up in most places but",
        "there are a few points that need attention before it can be accepted as written.",
        "",
        f"Q: How does option {i % 7} behave under load when the queue backs up?",
        f"- TODO: measure the p99 latency of path {i % 11}",
        "CONCERN: the retry policy may amplify outages (see @architect and @security)",
        "",
        "| metric | now | target |",
        "|---|---|---|",
        f"| p99 | {i % 300} ms | 250 ms |",
        "",
        "```python",
        "def handler(event):",
        "    return store.append(event)  # --- not a delimiter",
        "```",
        "",
        "> A quoted line from an earlier comment, with **bold** and `code @notamention`.",
        "",
        "Some further prose so that each comment is about one kilobyte in size, as long",
        "review comments are: context, reasoning, alternatives, and a recommendation. " * 3,
    ]
    if i % decision_every == 0:
        body.append(f"DECISION: adopt approach {i % 3}")
    if stamp is not None:
        from cascade.ledger.render import render_comment

        return render_comment(author, "\n".join(body), vote, provenance=stamp) + "\n"
    out = ["---", f"Name: {author}", "", *body]
    if vote:
        out += ["", f"VOTE: {vote}"]
    return "\n".join(out + ["---"]) + "\n\n"
