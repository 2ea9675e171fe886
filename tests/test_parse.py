"""Table-driven tests for ``cascade.ledger.parse.parse``: odd hand-written ledgers.

Each row is a ledger text (written one line per argument, so line numbers can be read off the
table) and what ``parse()`` must yield. Keys left out of a row are not checked, except that
every row must produce no warnings, no events and no open block unless it says otherwise.
Every LF row is also checked in CRLF form: identical results, newline "\\r\\n".
"""
from __future__ import annotations

import msgspec.structs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cascade.ledger.records import Comment
from cascade.ledger.parse import Reader, parse
from cascade.protocol.discussion import Discussion


def doc(*lines: str, final_newline: bool = True) -> str:
    """Ledger text from its lines: argument k is line k+1."""
    return "\n".join(lines) + ("\n" if final_newline else "")


def summarise(ledger) -> dict:
    h = ledger.header
    comments = ledger.comments
    return {
        "comments": [(c.author, c.vote, c.line) for c in comments],
        "spans": [(c.line, c.end_line) for c in comments],
        "phases": [c.phase for c in comments],
        "bodies": [c.body for c in comments],
        "markers": [(m.kind, m.text, m.author, m.line) for c in comments for m in c.markers],
        "mentions": [c.mentions for c in comments],
        "provenance": [c.provenance for c in comments],
        "events": [(e.kind, e.value, e.line, e.phase) for e in ledger.events],
        "fields": [e.fields for e in ledger.events],
        "order": "".join("C" if isinstance(e, Comment) else "E" for e in ledger.entries),
        "warnings": [(line, msg) for line, msg in ledger.warnings],
        "header": {
            "title": h.title, "source": h.source, "template": h.template,
            "protocol": h.protocol, "phase": h.phase, "status": h.status,
            "participants": h.participants, "consensus": h.consensus, "created": h.created,
            "extra": h.extra, "line": h.line, "end_line": h.end_line,
        },
        "title_line": ledger.title_line,
        "open_block": ledger.open_block,
        "line_count": ledger.line_count,
        "newline": ledger.newline,
        "ends_with_newline": ledger.ends_with_newline,
    }


NO_HEADER = {"line": 0, "end_line": 0, "title": "", "phase": None, "participants": []}

# ---- ledgers ---------------------------------------------------------------------------------

# Seed 002, "Core Concepts / 1. Discussion", with its line breaks restored.
SEED_EXAMPLE = doc(
    "# Feature X Implementation",                                              # 1
    "",                                                                        # 2
    "## Context",                                                              # 3
    "We need to implement feature X that allows users to...",                  # 4
    "",                                                                        # 5
    "## Requirements",                                                         # 6
    "- Must support...",                                                       # 7
    "- Should integrate with...",                                              # 8
    "",                                                                        # 9
    "---",                                                                     # 10
    "",                                                                        # 11
    "Name: AI-Architect",                                                      # 12
    "Looking at this from a systems perspective, I have concerns about...",    # 13
    "",                                                                        # 14
    "The proposed approach could lead to tight coupling between...",           # 15
    "",                                                                        # 16
    "Q: Have we considered using the adapter pattern here?",                   # 17
    "",                                                                        # 18
    "VOTE: CHANGES",                                                           # 19
    "",                                                                        # 20
    "---",                                                                     # 21
    "",                                                                        # 22
    "Name: AI-Pragmatist",                                                     # 23
    "I think we're overcomplicating this. The simplest approach would be...",  # 24
    "",                                                                        # 25
    "VOTE: READY",                                                             # 26
    "",                                                                        # 27
    "---",                                                                     # 28
)

# The same, exactly as the flattened seed lists the lines (no blank lines at all).
SEED_TIGHT = doc(
    "# Feature X Implementation",                                              # 1
    "## Context",                                                              # 2
    "We need to implement feature X that allows users to...",                  # 3
    "## Requirements",                                                         # 4
    "- Must support...",                                                       # 5
    "- Should integrate with...",                                              # 6
    "---",                                                                     # 7
    "Name: AI-Architect",                                                      # 8
    "Looking at this from a systems perspective, I have concerns about...",    # 9
    "The proposed approach could lead to tight coupling between...",           # 10
    "Q: Have we considered using the adapter pattern here?",                   # 11
    "VOTE: CHANGES",                                                           # 12
    "---",                                                                     # 13
    "Name: AI-Pragmatist",                                                     # 14
    "I think we're overcomplicating this. The simplest approach would be...",  # 15
    "VOTE: READY",                                                             # 16
    "---",                                                                     # 17
)

# Seed 002, "Discussion File Format / Comment Blocks".
SEED_COMMENT_BLOCK = doc(
    "---",                                                   # 1
    "Name: AI-Architect",                                    # 2
    "[Markdown content - the participant's comment]",        # 3
    "Can include:",                                          # 4
    "- Multiple paragraphs",                                 # 5
    "- Code blocks",                                         # 6
    "- Lists",                                               # 7
    "- Q: questions",                                        # 8
    "- TODO: action items",                                  # 9
    "- DECISION: decisions",                                 # 10
    "VOTE: CHANGES",                                         # 11
    "---",                                                   # 12
)

# Seed 002, Appendix B: the runner's output for a reply.
SEED_APPENDIX_B = doc(
    "---",                                  # 1
    "Name: AI-Architect",                   # 2
    "Markdown formatted comment...",        # 3
    "",                                     # 4
    "Q: Question here?",                    # 5
    "",                                     # 6
    "CONCERN: Security issue here",         # 7
    "",                                     # 8
    "VOTE: READY",                          # 9
    "---",                                  # 10
)

# Our own written form (render_comment): self-closed blocks, a blank line between.
OWN_FORM = doc(
    "<!-- DISCUSSION -->",                                           # 1
    "<!-- Title: Event store -->",                                   # 2
    "<!-- Phase: review -->",                                        # 3
    "",                                                              # 4
    "# ADR: Event store",                                            # 5
    "",                                                              # 6
    "---",                                                           # 7
    "Name: AI-Architect",                                            # 8
    '<!-- cascade:ai model=gpt-4o turn=1 note="two words" -->',      # 9
    "",                                                              # 10
    "Looks sound.",                                                  # 11
    "",                                                              # 12
    "VOTE: CHANGES",                                                 # 13
    "---",                                                           # 14
    "",                                                              # 15
    "<!-- VOTE-RESET -->",                                           # 16
    "",                                                              # 17
    "---",                                                           # 18
    "Name: Rob Smith",                                               # 19
    "",                                                              # 20
    "Fixed it.",                                                     # 21
    "",                                                              # 22
    "VOTE: READY",                                                   # 23
    "---",                                                           # 24
)

EXTRA_BLANKS = doc(
    "",                    # 1
    "",                    # 2
    "# Title",             # 3
    "",                    # 4
    "",                    # 5
    "---",                 # 6
    "",                    # 7
    "",                    # 8
    "Name: AI-Architect",  # 9
    "",                    # 10
    "",                    # 11
    "first",               # 12
    "",                    # 13
    "",                    # 14
    "second",              # 15
    "",                    # 16
    "VOTE: READY",         # 17
    "",                    # 18
    "",                    # 19
    "---",                 # 20
    "",                    # 21
    "",                    # 22
    "",                    # 23
    "---",                 # 24
    "   ",                 # 25  (whitespace-only counts as blank)
    "",                    # 26
    "Name: AI-Security",   # 27
    "",                    # 28
    "VOTE: REJECT",        # 29
    "",                    # 30
    "---",                 # 31
    "",                    # 32
    "",                    # 33
)

HEADER_PER_FIELD = doc(
    "<!-- DISCUSSION -->",                                                           # 1
    "<!-- Title: ADR: Event store -- v2 → Störe -->",                                # 2
    "<!-- Source: docs/adr/0007-event-store.md -->",                                 # 3
    "<!-- Template: adr -->",                                                        # 4
    "<!-- Protocol: phased -->",                                                     # 5
    "<!-- Phase: initial_feedback -->",                                              # 6
    "<!-- Status: OPEN -->",                                                         # 7
    "<!-- Participants: @architect, security  pragmatist -->",                       # 8
    "<!-- Consensus: threshold_ready=0.67 threshold_reject=0.01 human_required=true -->",  # 9
    "<!-- Created: 2025-01-02T03:04:05Z -->",                                        # 10
    "<!-- Owner: Rob -->",                                                           # 11
    "",                                                                              # 12
    "# ADR: Event store",                                                            # 13
    "",                                                                              # 14
    "---",                                                                           # 15
    "Name: AI-Architect",                                                            # 16
    "VOTE: READY",                                                                   # 17
    "---",                                                                           # 18
)

HEADER_MULTILINE = doc(
    "<!-- DISCUSSION",                                # 1
    "Title: Multi-line header",                       # 2
    "Protocol: review",                               # 3
    "Phase: review",                                  # 4
    "Participants: architect, security",              # 5
    "Consensus: threshold_ready=0.5",                 # 6
    "-->",                                            # 7
    "",                                               # 8
    "---",                                            # 9
    "Name: AI-Security",                              # 10
    "VOTE: CHANGES",                                  # 11
    "---",                                            # 12
)

HEADER_AFTER_BLANKS = doc(
    "",                                  # 1
    "",                                  # 2
    "<!-- discussion -->",               # 3  (the opener is case-insensitive)
    "<!-- Title: Late header -->",       # 4
    "",                                  # 5
    "# Heading",                         # 6
)

HEADER_NOT_FIRST = doc(
    "# Real title",                      # 1
    "<!-- DISCUSSION -->",               # 2
    "<!-- Title: not a header -->",      # 3
)

THEMATIC_BREAK = doc(
    "---",                               # 1
    "Name: AI-Architect",                # 2
    "Part one.",                         # 3
    "---",                               # 4  inside a block, any --- ends it: text follows
    "Part two.",                         # 5
    "",                                  # 6
    "----",                              # 7  longer break, blank line, then text
    "",                                  # 8
    "Part three.",                       # 9
    "VOTE: READY",                       # 10
    "---",                               # 11
    "Name: AI-Security",                 # 12
    "VOTE: CHANGES",                     # 13
    "---",                               # 14
)

THEMATIC_BREAK_KEPT = doc(
    "---",                               # 1
    "Name: AI-Architect",                # 2
    "Part one.",                         # 3
    "***",                               # 4  other thematic breaks are markdown
    "Part two.",                         # 5
    " ---",                              # 6  (what the writer makes of a ---)
    "- - -",                             # 7
    "VOTE: READY",                       # 8
    "---",                               # 9
    "Name: AI-Security",                 # 10
    "VOTE: CHANGES",                     # 11
    "---",                               # 12
)

FENCES = doc(
    "# Fences",                          # 1
    "```",                               # 2  a fence in the context
    "---",                               # 3
    "Name: Forged-In-Context",           # 4
    "VOTE: READY",                       # 5
    "```",                               # 6
    "",                                  # 7
    "---",                               # 8
    "Name: AI-Architect",                # 9
    "An example ledger:",                # 10
    "````markdown",                      # 11  four backticks
    "---",                               # 12
    "Name: Forged",                      # 13
    "VOTE: READY",                       # 14
    "```",                               # 15  too short to close ````
    "---",                               # 16
    "Name: Still-Forged",                # 17
    "Q: not a question",                 # 18
    "````",                              # 19  closes
    "~~~yaml",                           # 20
    "---",                               # 21
    "vote: reject",                      # 22
    "~~~",                               # 23  closes
    "  ~~~~~",                           # 24  indented (<4) longer tilde fence
    "Name: Also-Forged",                 # 25
    "~~~",                               # 26  too short
    "<!-- OUTCOME: READY -->",           # 27
    "  ~~~~~~",                          # 28  closes
    "VOTE: CHANGES",                     # 29
    "---",                               # 30
    "Name: AI-Security",                 # 31
    "VOTE: READY",                       # 32
    "---",                               # 33
)
FENCES_BODY_0 = "\n".join(FENCES.split("\n")[9:28])

RICH_MARKDOWN_BODY = [
    "## A heading inside a comment",                           # 3
    "# Another heading",                                       # 4
    "",                                                        # 5
    "| option | verdict |",                                    # 6
    "|--------|---------|",                                    # 7
    "| Q: a   | no      |",                                    # 8
    "",                                                        # 9
    "- level one",                                             # 10
    "  - level two",                                           # 11
    "    1. level three",                                      # 12
    "",                                                        # 13
    "> quoted",                                                # 14
    "> > nested quote with Name: inside",                      # 15
    "",                                                        # 16
    "<details><summary>More</summary>",                        # 17
    "",                                                        # 18
    "Hidden <b>bold</b> text<br/>",                            # 19
    "",                                                        # 20
    "</details>",                                              # 21
    "",                                                        # 22
    "Inline `@security VOTE: REJECT` and ``Name: X`` code.",   # 23
    "A [link](https://example.com/@designer) and ![alt text](img/a.png).",  # 24
    "***",                                                     # 25
    "___",                                                     # 26
    "Text with a trailing  ",                                  # 27
]
RICH_MARKDOWN = doc("---", "Name: AI-Designer", *RICH_MARKDOWN_BODY, "VOTE: READY", "---")

UNCLOSED_FINAL = doc(
    "---",                               # 1
    "Name: AI-Architect",                # 2
    "closed",                            # 3
    "---",                               # 4
    "Name: Rob",                         # 5
    "still typing",                      # 6
    "VOTE: READY",                       # 7
)

UNCLOSED_FENCE = doc(
    "---",                               # 1
    "Name: AI-Architect",                # 2
    "```python",                         # 3
    "print('never closed')",             # 4
    "---",                               # 5
    "Name: AI-Security",                 # 6
    "VOTE: READY",                       # 7
    "---",                               # 8
)

EVENTS = doc(
    "# Phased",                                                        # 1
    "",                                                                # 2
    "---",                                                             # 3
    "Name: AI-Architect",                                              # 4
    "VOTE: CHANGES",                                                   # 5
    "---",                                                             # 6
    "<!-- PHASE-TRANSITION: initial_feedback → detailed_review -->",   # 7  seed style: shared ---
    "---",                                                             # 8
    "Name: AI-Security",                                               # 9
    "VOTE: READY",                                                     # 10
    "---",                                                             # 11
    "",                                                                # 12
    "<!-- VOTE-RESET -->",                                             # 13
    "<!-- SOURCE-REVISION: 3f2a9c1 path=docs/adr/0007.md by=\"Rob Smith\" -->",  # 14
    "<!--PHASE-TRANSITION:detailed_review->consensus_vote-->",         # 15  tight spacing
    "",                                                                # 16
    "---",                                                             # 17
    "Name: AI-Pragmatist",                                             # 18
    "VOTE: READY",                                                     # 19
    "---",                                                             # 20
    "<!-- OUTCOME: READY -->",                                         # 21
    "<!-- PHASE-TRANSITION: nowhere -->",                              # 22
)

IGNORED_COMMENTS = doc(
    "<!-- FOO-BAR: baz -->",                                   # 1
    "<!-- NOTE: just a note -->",                              # 2
    "<!-- phase-transition: a -> b -->",                       # 3  lower case: not an event
    "<!-- TODO -->",                                           # 4
    "  <!-- OUTCOME: READY -->",                               # 5  not at column 0
    "<!-- OUTCOME: READY --> trailing text",                   # 6  not a whole line
    "---",                                                     # 7
    "Name: AI-Architect",                                      # 8
    "VOTE: READY",                                             # 9
    "---",                                                     # 10
)

EVENT_IN_BLOCK = doc(
    "---",                                                     # 1
    "Name: AI-Architect",                                      # 2
    "Quoting the format:",                                     # 3
    "<!-- PHASE-TRANSITION: a → b -->",                        # 4
    "<!-- VOTE-RESET -->",                                     # 5
    "<!-- OUTCOME: READY -->",                                 # 6
    "VOTE: CHANGES",                                           # 7
    "---",                                                     # 8
    "Name: AI-Security",                                       # 9
    "VOTE: READY",                                             # 10
    "---",                                                     # 11
)

TITLE_FROM_HEADING = doc(
    "Some intro text.",                  # 1
    "## Not the title",                  # 2
    "#Not a heading either",             # 3
    "#   Spaced Title  ##",              # 4
    "# Second heading",                  # 5
    "",                                  # 6
    "---",                               # 7
    "Name: AI-Architect",                # 8
    "# Heading inside a comment",        # 9
    "---",                               # 10
)

MARKERS = doc(
    "# Preamble",                                    # 1
    "Q: not counted, before the first block",        # 2
    "TODO: not counted either",                      # 3
    "DECISION: nor this",                            # 4
    "",                                              # 5
    "---",                                           # 6
    "Name: Rob",                                     # 7
    "Q: plain question?",                            # 8
    "- Q: bullet question?",                         # 9
    "* CONCERN: star bullet concern",                # 10
    "+ DONE: plus bullet done",                      # 11
    "1. TODO: numbered todo",                        # 12
    "2) TODO: paren-numbered todo",                  # 13
    "**DECISION:** bold decision",                   # 14
    "- **DECISION:** bullet bold decision",          # 15
    "ASSIGNED: @rob will write the spec",            # 16
    "DONE: spec written",                            # 17
    "CONCERN: secrets in logs",                      # 18
    "   TODO: indented three",                       # 19
    "    TODO: indented four (code)",                # 20
    "q: lower-case question",                        # 21
    "todo: lower-case todo",                         # 22
    "Q:no space after colon",                        # 23
    "Q: ",                                           # 24
    "> Q: quoted",                                   # 25
    "A Q: mid-line",                                 # 26
    "```",                                           # 27
    "TODO: in a fence",                              # 28
    "```",                                           # 29
    "---",                                           # 30
)

MENTIONS = doc(
    "@architect in the preamble does not count",     # 1
    "",                                              # 2
    "---",                                           # 3
    "Name: Rob",                                     # 4
    "@Security please look; @architect too, then @ARCHITECT again.",   # 5
    "Mail rob@example.com or a/@path or x.@dot, not mentions.",        # 6
    "Code `@pragmatist` and ``@designer VOTE: READY`` are not.",       # 7
    "@all (@moderator) [@perfectionist](https://x) @ai-security-team.",  # 8
    "@-nope @9nope @@double",                        # 9
    "```",                                           # 10
    "@researcher in a fence",                        # 11
    "```",                                           # 12
    "~~~",                                           # 13
    "@visualizer in a tilde fence",                  # 14
    "~~~",                                           # 15
    "---",                                           # 16
    "Name: AI-Security",                             # 17
    "Thanks @rob.",                                  # 18
    "---",                                           # 19
)


def row(id_, text, default_phase="", **expect):
    return pytest.param(text, default_phase, expect, id=id_)


CASES = [
    row("seed-example-verbatim", SEED_EXAMPLE,
        comments=[("AI-Architect", "CHANGES", 12), ("AI-Pragmatist", "READY", 23)],
        spans=[(12, 20), (23, 27)],
        bodies=["Looking at this from a systems perspective, I have concerns about...\n\n"
                "The proposed approach could lead to tight coupling between...\n\n"
                "Q: Have we considered using the adapter pattern here?",
                "I think we're overcomplicating this. The simplest approach would be..."],
        markers=[("Q", "Have we considered using the adapter pattern here?", "AI-Architect", 17)],
        mentions=[[], []], order="CC", header=NO_HEADER,
        title_line="Feature X Implementation", line_count=28, newline="\n",
        ends_with_newline=True),
    row("seed-example-shared-delimiters-no-blank-lines", SEED_TIGHT,
        comments=[("AI-Architect", "CHANGES", 8), ("AI-Pragmatist", "READY", 14)],
        spans=[(8, 12), (14, 16)],
        markers=[("Q", "Have we considered using the adapter pattern here?", "AI-Architect", 11)],
        order="CC", header=NO_HEADER, title_line="Feature X Implementation", line_count=17),
    row("seed-comment-block-section", SEED_COMMENT_BLOCK,
        comments=[("AI-Architect", "CHANGES", 2)],
        markers=[("Q", "questions", "AI-Architect", 8), ("TODO", "action items", "AI-Architect", 9),
                 ("DECISION", "decisions", "AI-Architect", 10)],
        title_line=None),
    row("seed-appendix-b-runner-output", SEED_APPENDIX_B,
        comments=[("AI-Architect", "READY", 2)],
        bodies=["Markdown formatted comment...\n\nQ: Question here?\n\nCONCERN: Security issue here"],
        markers=[("Q", "Question here?", "AI-Architect", 5),
                 ("CONCERN", "Security issue here", "AI-Architect", 7)]),
    row("own-written-form", OWN_FORM,
        comments=[("AI-Architect", "CHANGES", 8), ("Rob Smith", "READY", 19)],
        spans=[(8, 13), (19, 23)],
        bodies=["Looks sound.", "Fixed it."],
        provenance=[{"model": "gpt-4o", "turn": "1", "note": "two words"}, {}],
        events=[("VOTE-RESET", "", 16, "review")], order="CEC", phases=["review", "review"],
        header={"title": "Event store", "phase": "review", "line": 1, "end_line": 3},
        title_line="ADR: Event store"),
    row("extra-blank-lines-everywhere", EXTRA_BLANKS,
        comments=[("AI-Architect", "READY", 9), ("AI-Security", "REJECT", 27)],
        spans=[(9, 19), (27, 30)], bodies=["first\n\n\nsecond", ""],
        title_line="Title", line_count=33),
    row("no-final-newline", SEED_EXAMPLE.rstrip("\n"),
        comments=[("AI-Architect", "CHANGES", 12), ("AI-Pragmatist", "READY", 23)],
        spans=[(12, 20), (23, 27)], line_count=28, ends_with_newline=False),
    row("no-final-newline-open-block", doc("---", "Name: Rob", "VOTE: READY", final_newline=False),
        comments=[("Rob", "READY", 2)], spans=[(2, 3)], open_block=True, line_count=3,
        ends_with_newline=False),
    row("header-one-comment-per-field", HEADER_PER_FIELD,
        header={"title": "ADR: Event store -- v2 → Störe",
                "source": "docs/adr/0007-event-store.md", "template": "adr",
                "protocol": "phased", "phase": "initial_feedback", "status": "OPEN",
                "participants": ["architect", "security", "pragmatist"],
                "consensus": {"threshold_ready": "0.67", "threshold_reject": "0.01",
                              "human_required": "true"},
                "created": "2025-01-02T03:04:05Z", "extra": {"owner": "Rob"},
                "line": 1, "end_line": 11},
        comments=[("AI-Architect", "READY", 16)], phases=["initial_feedback"],
        title_line="ADR: Event store"),
    row("header-one-multiline-comment", HEADER_MULTILINE,
        header={"title": "Multi-line header", "protocol": "review", "phase": "review",
                "participants": ["architect", "security"],
                "consensus": {"threshold_ready": "0.5"}, "line": 1, "end_line": 7},
        comments=[("AI-Security", "CHANGES", 10)], phases=["review"]),
    row("header-after-blank-lines", HEADER_AFTER_BLANKS,
        header={"title": "Late header", "line": 3, "end_line": 4}, title_line="Heading"),
    row("header-not-first-is-no-header", HEADER_NOT_FIRST,
        header=NO_HEADER, title_line="Real title", order=""),
    row("dashes-inside-comment-end-it", THEMATIC_BREAK,
        comments=[("AI-Architect", None, 2), ("AI-Security", "CHANGES", 12)],
        spans=[(2, 3), (12, 13)], bodies=["Part one.", ""],
        warnings=[(5, "belongs to no comment")]),
    row("thematic-breaks-that-stay-inside-comment", THEMATIC_BREAK_KEPT,
        comments=[("AI-Architect", "READY", 2), ("AI-Security", "CHANGES", 10)],
        spans=[(2, 8), (10, 11)],
        bodies=["Part one.\n***\nPart two.\n ---\n- - -", ""]),
    row("structural-lines-inside-fences", FENCES,
        comments=[("AI-Architect", "CHANGES", 9), ("AI-Security", "READY", 31)],
        spans=[(9, 29), (31, 32)], bodies=[FENCES_BODY_0, ""], markers=[], mentions=[[], []],
        title_line="Fences"),
    row("markdown-of-every-kind-inside-comment", RICH_MARKDOWN,
        comments=[("AI-Designer", "READY", 2)], spans=[(2, 28)],
        bodies=["\n".join(RICH_MARKDOWN_BODY)], markers=[], mentions=[[]], title_line=None),
    row("unclosed-final-block", UNCLOSED_FINAL,
        comments=[("AI-Architect", None, 2), ("Rob", "READY", 5)], spans=[(2, 3), (5, 7)],
        bodies=["closed", "still typing"], open_block=True),
    row("unclosed-code-fence-warns", UNCLOSED_FENCE,
        comments=[("AI-Architect", None, 2)], spans=[(2, 8)],
        bodies=["```python\nprint('never closed')\n---\nName: AI-Security\nVOTE: READY\n---"],
        open_block=True, warnings=[(3, "unclosed code fence")]),  # where it opened
    row("vote-lower-case-value", doc("---", "Name: A", "VOTE: ready", "---"),
        comments=[("A", "READY", 2)], bodies=[""]),
    row("vote-lower-case-label", doc("---", "Name: A", "vote: READY", "---"),
        comments=[("A", "READY", 2)], bodies=[""]),
    row("vote-mixed-case-with-reason", doc("---", "Name: A", "Vote: changes (two nits)", "---"),
        comments=[("A", "CHANGES", 2)], bodies=[""]),
    row("vote-bold-value", doc("---", "Name: A", "VOTE: **READY**", "---"),
        comments=[("A", "READY", 2)], bodies=[""]),
    row("vote-maybe-warns-and-does-not-vote", doc("---", "Name: A", "text", "VOTE: MAYBE", "---"),
        comments=[("A", None, 2)], warnings=[(4, "MAYBE")]),
    row("vote-empty-warns", doc("---", "Name: A", "VOTE:", "---"),
        comments=[("A", None, 2)], warnings=[(3, "unrecognised vote")]),
    row("vote-indented-is-text", doc("---", "Name: A", " VOTE: READY", "**VOTE:** READY", "---"),
        comments=[("A", None, 2)], bodies=[" VOTE: READY\n**VOTE:** READY"]),
    row("multiple-votes-last-wins",
        doc("---", "Name: A", "VOTE: READY", "changed my mind", "VOTE: CHANGES", "again",
            "VOTE: REJECT", "---"),
        comments=[("A", "REJECT", 2)], bodies=["changed my mind\nagain"]),
    row("multiple-votes-unrecognised-last-keeps-earlier",
        doc("---", "Name: A", "VOTE: READY", "VOTE: MAYBE", "---"),
        comments=[("A", "READY", 2)], warnings=[(4, "MAYBE")]),
    row("events-arrows-reset-revision-outcome", EVENTS, "initial_feedback",
        comments=[("AI-Architect", "CHANGES", 4), ("AI-Security", "READY", 9),
                  ("AI-Pragmatist", "READY", 18)],
        phases=["initial_feedback", "detailed_review", "consensus_vote"],
        events=[("PHASE-TRANSITION", "initial_feedback → detailed_review", 7, "initial_feedback"),
                ("VOTE-RESET", "", 13, "detailed_review"),
                ("SOURCE-REVISION", '3f2a9c1 path=docs/adr/0007.md by="Rob Smith"', 14,
                 "detailed_review"),
                ("PHASE-TRANSITION", "detailed_review->consensus_vote", 15, "detailed_review"),
                ("OUTCOME", "READY", 21, "consensus_vote"),
                ("PHASE-TRANSITION", "nowhere", 22, "consensus_vote")],
        fields=[{"from": "initial_feedback", "to": "detailed_review"}, {},
                {"path": "docs/adr/0007.md", "by": "Rob Smith"},
                {"from": "detailed_review", "to": "consensus_vote"}, {}, {}],
        order="CECEEECEE", warnings=[(22, "no target phase")]),
    row("unknown-html-comments-ignored", IGNORED_COMMENTS,
        comments=[("AI-Architect", "READY", 8)], events=[], order="C"),
    row("event-looking-lines-inside-a-block", EVENT_IN_BLOCK, "a",
        comments=[("AI-Architect", "CHANGES", 2), ("AI-Security", "READY", 9)],
        phases=["a", "a"], events=[], order="CC",
        bodies=["Quoting the format:\n<!-- PHASE-TRANSITION: a → b -->\n<!-- VOTE-RESET -->\n"
                "<!-- OUTCOME: READY -->", ""]),
    row("title-from-first-heading", TITLE_FROM_HEADING,
        header=NO_HEADER, title_line="Spaced Title", comments=[("AI-Architect", None, 8)]),
    row("empty-file", "",
        comments=[], order="", header=NO_HEADER, title_line=None, line_count=0,
        newline="\n", ends_with_newline=True),
    row("whitespace-only-file", "  \n\n\t \n",
        comments=[], order="", header=NO_HEADER, title_line=None, line_count=3),
    row("whitespace-only-no-newline", "   ",
        comments=[], order="", header=NO_HEADER, line_count=1, ends_with_newline=False),
    row("name-without-delimiter-is-context", doc("Name: just text", "VOTE: READY", "", "# T"),
        comments=[], order="", title_line="T"),
    row("dashes-in-context-not-followed-by-name",
        doc("# T", "", "---", "", "*Discussion begins below.*", "", "---", "Name: A", "---"),
        comments=[("A", None, 8)], spans=[(8, 8)], title_line="T"),
    row("consecutive-delimiters", doc("---", "---", "", "---", "Name: A", "hi", "---", "---"),
        comments=[("A", None, 5)], bodies=["hi"]),
    row("name-line-spacing", doc("---", "Name:AI-Architect", "---", "Name:   Rob Smith   ", "---"),
        comments=[("AI-Architect", None, 2), ("Rob Smith", None, 4)]),
    row("every-marker-form", MARKERS,
        comments=[("Rob", None, 7)],
        markers=[("Q", "plain question?", "Rob", 8),
                 ("Q", "bullet question?", "Rob", 9),
                 ("CONCERN", "star bullet concern", "Rob", 10),
                 ("DONE", "plus bullet done", "Rob", 11),
                 ("TODO", "numbered todo", "Rob", 12),
                 ("TODO", "paren-numbered todo", "Rob", 13),
                 ("DECISION", "bold decision", "Rob", 14),
                 ("DECISION", "bullet bold decision", "Rob", 15),
                 ("ASSIGNED", "@rob will write the spec", "Rob", 16),
                 ("DONE", "spec written", "Rob", 17),
                 ("CONCERN", "secrets in logs", "Rob", 18),
                 ("TODO", "indented three", "Rob", 19)],
        mentions=[["rob"]], title_line="Preamble"),
    row("mentions", MENTIONS,
        comments=[("Rob", None, 4), ("AI-Security", None, 17)],
        mentions=[["security", "architect", "all", "moderator", "perfectionist",
                   "ai-security-team"], ["rob"]]),
]

DEFAULTS = {"warnings": [], "events": [], "open_block": False}


def check(summary: dict, expect: dict) -> None:
    expect = {**DEFAULTS, **expect}
    for key, want in expect.items():
        got = summary[key]
        if key == "warnings":
            assert len(got) == len(want), f"warnings: {got}"
            for (line, msg), (want_line, fragment) in zip(got, want):
                assert line == want_line and fragment in msg, f"warnings: {got}"
        elif key == "header":
            assert {k: got[k] for k in want} == want
        else:
            assert got == want, key


@pytest.mark.parametrize("text, default_phase, expect", CASES)
def test_parse_table(text: str, default_phase: str, expect: dict) -> None:
    check(summarise(parse(text, default_phase)), expect)


@pytest.mark.parametrize("text, default_phase, expect", CASES)
def test_parse_table_crlf(text: str, default_phase: str, expect: dict) -> None:
    """CRLF line endings: the same entries and line numbers; newline reported as CRLF."""
    crlf = text.replace("\n", "\r\n")
    got = summarise(parse(crlf, default_phase))
    want = summarise(parse(text, default_phase))
    if "\n" in text:
        assert got["newline"] == "\r\n"
    else:
        assert got["newline"] == "\n"
    got.pop("newline"), want.pop("newline")
    assert got == want
    check({**got, "newline": None}, {k: v for k, v in expect.items() if k != "newline"})


def test_crlf_bodies_contain_no_carriage_returns() -> None:
    ledger = parse(OWN_FORM.replace("\n", "\r\n"))
    assert ledger.newline == "\r\n"
    assert all("\r" not in c.body and "\r" not in c.author for c in ledger.comments)
    assert [c.line for c in ledger.comments] == [8, 19]


def test_newline_style_follows_first_line() -> None:
    assert parse("a\r\nb\n").newline == "\r\n"
    assert parse("a\nb\r\n").newline == "\n"
    assert parse("no newline at all").newline == "\n"


def test_parse_never_raises_on_junk() -> None:
    junk = ["---", "Name:", "---\nName:", "---\nName: x", "<!--", "<!-- DISCUSSION",
            "<!-- DISCUSSION -->\n<!-- Title", "```", "~~~\n---\nName: a", "\r", "\r\r\n",
            "---\r\nName: a\r", "\x00\x01", "<!-- PHASE-TRANSITION: -> -->", "VOTE: READY",
            "\ufeff---\nName: a\n---\n", "- " * 5000, "---\n" * 500]
    for text in junk:
        ledger = parse(text)
        assert ledger.line_count == len(text.split("\n")) - (1 if text.endswith("\n") else 0)


def test_bom_is_handled_by_load(tmp_path) -> None:
    path = tmp_path / "x.discussion.md"
    path.write_bytes(b"\xef\xbb\xbf" + HEADER_PER_FIELD.replace("\n", "\r\n").encode("utf-8"))
    d = Discussion.load(path, root=tmp_path)
    assert d.header.line == 1
    assert d.header.title == "ADR: Event store -- v2 → Störe"
    assert d.title == "ADR: Event store -- v2 → Störe"
    assert [(c.author, c.vote, c.line) for c in d.comments] == [("AI-Architect", "READY", 16)]
    assert d.ledger.newline == "\r\n"


def test_multiline_header_closing_on_field_line() -> None:
    ledger = parse(doc("<!-- DISCUSSION", "Title: X", "Phase: review -->", "",
                       "---", "Name: A", "---"))
    assert ledger.header.title == "X"
    assert ledger.header.phase == "review"
    assert [c.author for c in ledger.comments] == ["A"]


def test_inline_code_at_line_start_is_not_a_fence() -> None:
    ledger = parse(doc("---", "Name: Rob", "```inline``` code at line start", "---",
                       "Name: AI-Architect", "VOTE: READY", "---"))
    assert [(c.author, c.vote) for c in ledger.comments] == [("Rob", None),
                                                              ("AI-Architect", "READY")]
    assert ledger.warnings == []


ANSWER_MARKERS = doc(
    "---",                                  # 1
    "Name: Rob",                            # 2
    "A: plain answer",                      # 3
    "- A(Q2): numbered answer",             # 4
    "**A(q12):** bold, lower-case q",       # 5
    "A( Q3 ): spaced reference",            # 6
    "DONE(T4): numbered done",              # 7
    "DONE: plain done",                     # 8
    "A(T1): wrong letter: not a marker",    # 9
    "DONE(Q1): wrong letter: not a marker", # 10
    "Q(Q1): no reference on Q",             # 11
    "a: lower-case answer",                 # 12
    "A:no space",                           # 13
    "Option A: not at the start",           # 14
    "A (Q2): space before the parenthesis", # 15
    "> A: quoted",                          # 16
    "```",                                  # 17
    "A: in a fence",                        # 18
    "```",                                  # 19
    "---",                                  # 20
)


def test_answer_and_done_markers_carry_their_reference() -> None:
    [c] = parse(ANSWER_MARKERS).comments
    assert [(m.kind, m.ref, m.text, m.line) for m in c.markers] == [
        ("A", None, "plain answer", 3),
        ("A", "Q2", "numbered answer", 4),
        ("A", "Q12", "bold, lower-case q", 5),
        ("A", "Q3", "spaced reference", 6),
        ("DONE", "T4", "numbered done", 7),
        ("DONE", None, "plain done", 8),
    ]


def test_answer_markers_skipped_without_details() -> None:
    assert parse(ANSWER_MARKERS, details=False).comments[0].markers == []


# ---- Reader: the same parse, a piece at a time ------------------------------------------------

PIECES = ["", " ", "\t", "---", "----", "--- ", " ---", "- - -", "***", "Name: AI-Architect",
          "Name: Rob", "Name:", "Name:   ", "VOTE: READY", "vote: changes", "VOTE: maybe",
          "```", "```python", "````", "~~~", "   ```", "    ```", "```x```", "`code`",
          "<!-- PHASE-TRANSITION: review → detailed_review -->", "<!-- PHASE-TRANSITION: -->",
          "<!-- PHASE-TRANSITION: a -> b n=1a2b sig=" + "0" * 64 + " -->",
          "<!-- VOTE-RESET: the document changed -->", "<!-- OUTCOME: READY -->",
          "<!-- cascade:ai model=x -->", "<!-- a comment -->", "<!-- DISCUSSION -->",
          "<!-- DISCUSSION", "<!-- Title: T -->", "<!-- Source: docs/a.md -->", "Title: Multi",
          "Participants: security", "-->", "text -->", "prose", "Q: why?", "# Title", "> quote",
          "\u00a0nbsp", "\r", "x\r"]


def _entries(entries) -> list:
    return [msgspec.structs.asdict(e) for e in entries]


def _structure(ledger) -> tuple:
    return (ledger.header, ledger.line_count, ledger.newline, ledger.ends_with_newline,
            ledger.open_block, ledger.open_fence, ledger.open_fence_line, ledger.header_open)


@settings(max_examples=600, deadline=None, derandomize=True)
@given(lines=st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=6)), max_size=30),
       end=st.sampled_from(["", "\n", "\r\n", "\r"]), crlf=st.booleans(),
       cuts=st.lists(st.tuples(st.floats(0, 1), st.booleans()), max_size=5),
       details=st.booleans())
def test_a_reader_fed_in_pieces_reads_what_parse_reads(lines, end, crlf, cuts, details):
    """Fed (or skipped) a piece at a time, read at any point, the Reader reads what ``parse``
    reads of the text so far: everything, until a piece is skipped; after one, the structure
    and every entry after the skipped text."""
    text = "\n".join(ln.replace("\n", " ") for ln in lines) + end
    if crlf:
        text = text.replace("\n", "\r\n")
    reader = Reader(details=details)
    pos, skipped = 0, False
    for at, skip in sorted(cuts) + [(1.0, False)]:
        cut = int(at * len(text))
        whole = text.rfind("\n", 0, cut) + 1
        if whole > pos:
            (reader.skip if skip else reader.feed)(text[pos:whole])
            skipped = skipped or skip
            pos = whole
        want = parse(text[:cut], details=details)
        got = reader.ledger(text[pos:cut])
        assert _structure(got) == _structure(want)
        assert _entries(got.entries) == _entries(want.entries[reader.base:])
        if not skipped:
            assert summarise(got) == summarise(want)
        later = reader.ledger(text[pos:cut], start=len(reader.entries))
        assert _entries(later.entries) == _entries(want.entries[reader.base + len(reader.entries):])


def test_a_reader_takes_whole_lines_only():
    with pytest.raises(ValueError):
        Reader().feed("no newline")
    with pytest.raises(ValueError):
        Reader().skip("---\nName: A")
