"""Records parsed out of a ledger. Plain data, no behaviour."""
from __future__ import annotations

from msgspec import Struct, field

VOTES = ("READY", "CHANGES", "REJECT")
MARKERS = ("Q", "A", "TODO", "DECISION", "ASSIGNED", "DONE", "CONCERN", "WAIVE")

# State events: one HTML-comment line each, appended between comment blocks.
PHASE_TRANSITION = "PHASE-TRANSITION"
VOTE_RESET = "VOTE-RESET"
SOURCE_REVISION = "SOURCE-REVISION"
OUTCOME = "OUTCOME"
SETTINGS = "SETTINGS"  # the governing rule's settings, recorded when they differ from the header
ROUND = "ROUND"  # a step protocol's round begins (cascade.protocol)
NEXT = "NEXT"  # a decision point answered with its recommended choice (--auto, rule auto:)
# A panel generated for the discussion (cascade.protocol.panel), after the turn proposing it:
PERSONA = "PERSONA"  # an expert: id, name, expertise, style, bias, tendency, stakes, blind
TENSION = "TENSION"  # a designed tension between two experts: axis, description
PROBLEM = "PROBLEM"  # the problem definition: statement, scope, success
# A participant asked for the current revision that did not answer (failed, timed out, an
# unreadable reply, not asked within the budget): it blocks until it answers or a person decides.
FAILURE = "FAILURE"
DRIFT_REVIEW = "drift"  # the step a drift review's block records (cascade.loop.driftreview)
EVENT_KINDS = (PHASE_TRANSITION, VOTE_RESET, SOURCE_REVISION, OUTCOME, SETTINGS, ROUND, NEXT,
               PERSONA, TENSION, PROBLEM, FAILURE)


class Marker(Struct):
    kind: str  # one of MARKERS
    text: str
    author: str
    line: int
    ref: str | None = None  # "Q2" for ``A(Q2):``, "T3" for ``DONE(T3):``; None: unnumbered


class Comment(Struct):
    author: str
    body: str  # the markdown between the Name: line and the closing delimiter, VOTE lines removed
    vote: str | None
    line: int  # line of the Name: header (1-based)
    end_line: int
    phase: str
    markers: list[Marker] = field(default_factory=list)
    mentions: list[str] = field(default_factory=list)  # aliases, in order, deduplicated
    provenance: dict[str, str] = field(default_factory=dict)  # the stamp's fields
    origin: str | None = None  # "ai", "decision" or "tool" (a table): <!-- cascade:ai ... -->
    stamps: int = 0  # how many stamp lines the block has (the tool writes one)


class Event(Struct):
    kind: str  # one of EVENT_KINDS
    value: str  # the text after "KIND:", e.g. "initial_feedback → detailed_review"
    fields: dict[str, str]  # key=value pairs in value; "from"/"to" for a phase transition
    line: int
    phase: str  # the phase in force when the event was read (before it, for a transition)
    # the tool's stamp, after the value: "ledger=<id> n=<nonce> sig=<digest>" ("": none;
    # no ledger= in a stamp from before stamps named their ledger)
    stamp: str = ""


class Header(Struct):
    title: str = ""
    source: str | None = None
    template: str | None = None
    protocol: str | None = None
    phase: str | None = None  # the phase the discussion started in
    status: str | None = None
    participants: list[str] = field(default_factory=list)
    consensus: dict[str, str] = field(default_factory=dict)
    created: str | None = None
    extra: dict[str, str] = field(default_factory=dict)
    line: int = 0  # 0: the ledger has no header
    end_line: int = 0


class Ledger(Struct):
    """Everything parsed out of one ledger file, in file order."""

    header: Header
    title_line: str | None  # the first markdown "# " heading, used when the header has no title
    entries: list[Comment | Event]
    line_count: int
    newline: str  # "\n" or "\r\n": the style appends must follow
    ends_with_newline: bool
    open_block: bool  # the last comment block has no closing delimiter
    warnings: list[tuple[int, str]] = field(default_factory=list)
    open_fence: str | None = None  # the code fence left open at the end (its opening marker)
    open_fence_line: int = 0  # where it opened
    header_open: bool = False  # the header's comment is not closed at the end

    @property
    def comments(self) -> list[Comment]:
        return [e for e in self.entries if isinstance(e, Comment)]

    @property
    def events(self) -> list[Event]:
        return [e for e in self.entries if isinstance(e, Event)]
