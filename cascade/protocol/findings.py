"""Findings: what a verdict says is wrong, where and why. Pure: no model, no git, no files.

A finding is ``{severity, where, what, why, suggestion}``: ``where`` is a short quote of the
document or one of its section headings, located (at write time, in the revision the persona
reviewed) as a line range, or recorded as not found -- never guessed. A reply's findings are
weighed against the vote they come with by one rule (``counted``), under a rule's ``policy:``
(docs/configuration.md).
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from msgspec import Struct, field
from msgspec.structs import replace

from cascade.config.rules import SEVERITIES  # the most severe first

MISSING_SEVERITY = "major"  # what a finding without a (known) severity is taken as
VERDICTS = ("READY", "CHANGES", "REJECT")  # the least severe first
DEFAULT_POLICY = (("critical", "REJECT"), ("major", "CHANGES"))
BLOCKING = ("CHANGES", "REJECT")
FIELD = "findings"  # the stamp key of a reply's findings (the field's name)
RESOLVED = "resolved"  # the stamp key of the open findings a review says are resolved
UNEXPLAINED = "unexplained"  # stamped "yes" on a blocking vote that gave no finding
_SEP, _PART = " | ", " -- "
_MOST = 12  # findings kept of one reply
_FID = re.compile(r"\bF(\d{1,5})\b", re.IGNORECASE)
# A finding's life (cascade.protocol.finding_life): only an open one can hold a verdict.
STATUSES = ("open", "resolved", "answered", "waived", "overridden")
HOLD_DEFAULT = "critical"  # a rule's ``hold:``: open findings at or above it hold the gate


class Finding(Struct, frozen=True):
    severity: str
    where: str
    what: str
    why: str = ""
    suggestion: str = ""
    lines: tuple[int, int] | None = None  # located in the reviewed revision; None: not found
    id: str = ""  # F1, F2... in ledger order (given by ``numbered``)
    author: str = ""
    line: int = 0  # the ledger line of the block that gave it
    revision: str | None = None
    status: str = "open"  # one of STATUSES
    closed_by: dict = field(default_factory=dict)  # who resolved or waived it, and why
    answers: list = field(default_factory=list)  # A(Fn): answers, in ledger order

    @property
    def located(self) -> bool:
        return self.lines is not None

    @property
    def at(self) -> str:
        """Its lines as shown: ``12``, ``12-14``, or ``not found``."""
        if self.lines is None:
            return "not found"
        a, b = self.lines
        return str(a) if a == b else f"{a}-{b}"

    @property
    def place(self) -> str:
        """Its lines in words: ``line 12``, ``lines 12-14``; "" when not found."""
        if self.lines is None:
            return ""
        return f"line {self.at}" if self.lines[0] == self.lines[1] else f"lines {self.at}"

    def as_dict(self) -> dict[str, object]:
        return {"id": self.id, "severity": self.severity, "where": self.where,
                "what": self.what, "why": self.why, "suggestion": self.suggestion,
                "lines": list(self.lines) if self.lines else None, "author": self.author,
                "line": self.line, "revision": self.revision, "status": self.status,
                "closed_by": self.closed_by or None, "answers": list(self.answers)}


def policy_of(given: Iterable[tuple[str, str]] | None,
              require_location: bool = False, hold: str | None = None) -> Policy:
    """A rule's policy: what it names over the default (a severity it does not name keeps
    the default's least verdict: ``major: READY`` loosens one, explicitly)."""
    return Policy(tuple({**dict(DEFAULT_POLICY), **dict(given or ())}.items()),
                  require_location, hold or HOLD_DEFAULT)


class Policy(Struct, frozen=True):
    """A rule's policy of findings."""

    least: tuple[tuple[str, str], ...] = DEFAULT_POLICY  # each severity's least verdict
    require_location: bool = False  # a blocking verdict must locate a finding to count
    hold: str = HOLD_DEFAULT  # an open finding this severe or worse holds the gate ("none": never)

    def holds(self, f: Finding) -> bool:
        """Whether ``f``, open, holds the gate (under ``require_location``, if located)."""
        return f.status == "open" and self.hold in SEVERITIES and \
            SEVERITIES.index(f.severity) <= SEVERITIES.index(self.hold) and \
            (f.located or not self.require_location)


# ---- reading a reply ------------------------------------------------------------------------

def _text(value: object, width: int = 300) -> str:
    if not isinstance(value, (str, int, float)) or isinstance(value, bool):
        return ""
    return " ".join(str(value).split())[:width]


def read(value: object) -> tuple[list[Finding], list[str]]:
    """A reply's findings, read tolerantly: a string is a finding's ``what``; a missing or
    unknown severity is taken as major (a note says so); unknown keys are ignored; an item
    without a ``what`` is dropped (a note says so)."""
    items = value if isinstance(value, list) else ([value] if value else [])
    out: list[Finding] = []
    notes: list[str] = []
    guessed = dropped = 0
    for item in items[:_MOST]:
        if isinstance(item, str):
            item = {"what": item}
        if not isinstance(item, dict):
            dropped += 1
            continue
        given = {str(k).lower(): v for k, v in item.items()}
        what = _text(given.get("what") or given.get("issue") or given.get("finding"))
        if not what:
            dropped += 1
            continue
        severity = _text(given.get("severity")).lower()
        if severity not in SEVERITIES:
            guessed += 1
            severity = MISSING_SEVERITY
        where = given.get("where") or given.get("quote") or given.get("section") or ""
        out.append(Finding(severity, _text(where, 200), what, _text(given.get("why")),
                           _text(given.get("suggestion") or given.get("fix"))))
    if guessed:
        notes.append(f"findings: {guessed} without a known severity; taken as "
                     f"{MISSING_SEVERITY}")
    if dropped:
        notes.append(f"findings: {dropped} without a 'what' dropped")
    return out, notes


def resolved_ids(value: object) -> list[str]:
    """The finding ids a reply says are resolved (``["F1", "F3"]``, ``"F1, F3"``)."""
    items = value if isinstance(value, list) else [value] if value else []
    found = [f"F{int(m.group(1))}" for item in items if isinstance(item, (str, int))
             for m in _FID.finditer(str(item) if not isinstance(item, int) else f"F{item}")]
    return list(dict.fromkeys(found))


# ---- locating ---------------------------------------------------------------------------------

_HEADING = re.compile(r"[ \t]{0,3}#{1,6}[ \t]+(.*?)[ \t#]*\Z")
_QUOTES = "\"'`“”‘’«»"


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def locate(where: str, document: str | None) -> tuple[int, int] | None:
    """The lines (1-based, inclusive) of ``where`` in ``document``: the quote found with
    whitespace normalised and case ignored, else a markdown heading of that text; None when
    neither is found (or there is no document)."""
    quote = _norm(where.strip().strip(_QUOTES).strip())
    if not quote or not document:
        return None
    lines = document.splitlines()
    starts, flat, size = [], [], 0
    for number, line in enumerate(lines, 1):
        heading = _HEADING.match(line)
        words = _norm(heading.group(1) if heading else line)
        if not words:
            continue
        starts.append((size, number))
        flat.append(words)
        size += len(words) + 1
    text = " ".join(flat)
    at = text.find(quote) if len(quote) >= 4 else -1  # shorter: a heading's title only
    if at >= 0:
        first = last = starts[0][1]
        for offset, number in starts:
            if offset <= at:
                first = number
            if offset < at + len(quote):
                last = number
        return first, last
    title = quote.lstrip("#").strip()
    for number, line in enumerate(lines, 1):
        m = _HEADING.match(line)
        if m and _norm(m.group(1)) == title:
            return number, number
    return None


def located(findings: Iterable[Finding], document: str | None) -> list[Finding]:
    return [replace(f, lines=locate(f.where, document)) for f in findings]


# ---- the stamp ----------------------------------------------------------------------------------

def _cell(text: str) -> str:
    text = " ".join(text.replace("|", "/").split()).replace(_PART.strip(), "-")
    return text or "-"


def encode(findings: Iterable[Finding]) -> str:
    """Findings as the stamp holds them: ``severity -- lines -- where -- what -- why --
    suggestion`` (lines ``12-14``, or ``?`` when not found; ``-``: empty), `` | `` between."""
    return _SEP.join(_PART.join([f.severity, f.at if f.located else "?", _cell(f.where),
                                 _cell(f.what), _cell(f.why), _cell(f.suggestion)])
                     for f in findings)


def decode(stamped: str) -> list[Finding]:
    out = []
    for item in stamped.split(_SEP.strip()):
        cells = [c.strip() for c in item.split(_PART.strip())]
        if len(cells) < 4 or cells[0] not in SEVERITIES:
            continue
        cells = [("" if c == "-" else c) for c in cells] + [""] * 2
        severity, at, where, what, why, suggestion = cells[:6]
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", at)
        lines = (int(m.group(1)), int(m.group(2) or m.group(1))) if m else None
        out.append(Finding(severity, where, what, why, suggestion, lines))
    return out


def at_write(stamped: Mapping[str, str], document: str | None,
             vote: str | None) -> dict[str, str]:
    """What a turn stamps of its findings when it is written: each located in ``document``
    (the revision it reviewed; None: not shown, nothing is located), and ``unexplained``
    when ``vote`` blocks (CHANGES, REJECT) with no finding."""
    found = located(decode(stamped.get(FIELD, "")), document)
    out = {FIELD: encode(found)}
    if vote in BLOCKING and not found:
        out[UNEXPLAINED] = "yes"
    return out


def section(stamped: Mapping[str, str], first: int = 0) -> str | None:
    """The block's short list of its findings, with their lines (``first``: the number the
    first of them takes, F<first>; 0: unnumbered), and that a blocking vote gave none."""
    findings = decode(stamped.get(FIELD, ""))
    if not findings:  # none (a blocking vote without any: the stamp says unexplained)
        return None
    rows = []
    for index, f in enumerate(findings):
        name = f"F{first + index} " if first else ""
        rows.append(f"- {name}**{f.severity}** ({f.place or 'not found in the document'}): "
                    f"{f.what}" + (f" -- {f.suggestion}" if f.suggestion else ""))
    return "**Findings**:\n\n" + "\n".join(rows)


# ---- the policy -------------------------------------------------------------------------------

class Counted(Struct, frozen=True):
    """What a vote counts as."""

    vote: str
    why: str | None = None  # why it is not the one given (None: it is)
    advisory: bool = False  # its blocking findings are all unlocated (``require_location``)


def least_verdict(findings: Iterable[Finding], policy: Policy) -> tuple[str, Finding | None]:
    """The least verdict ``findings`` allow under ``policy``, and the finding that sets it."""
    least = dict(policy.least)
    worst, by = "READY", None
    for f in findings:
        floor = least.get(f.severity, "READY")
        if VERDICTS.index(floor) > VERDICTS.index(worst):
            worst, by = floor, f
    return worst, by


def counted(vote: str, stamp: Mapping[str, str], policy: Policy | None) -> Counted:
    """What a persona's ``vote`` counts as, from its block's stamp under a rule's ``policy``
    (the one rule, for every protocol): a vote is never below the least verdict its own
    findings allow (a READY with a critical finding counts as REJECT); with
    ``require_location``, a blocking vote whose blocking findings are all unlocated is
    advisory. A step that asks no findings (no ``findings`` in the stamp): the vote as
    given. ACCEPT is READY's word in a confirmation, and weighed as it."""
    policy = policy or Policy()
    if FIELD not in stamp or vote not in (*VERDICTS, "ACCEPT"):
        return Counted(vote)
    findings = decode(stamp[FIELD])
    as_ready = "READY" if vote == "ACCEPT" else vote
    least, by = least_verdict(findings, policy)
    if VERDICTS.index(least) > VERDICTS.index(as_ready) and by is not None:
        word = least if vote != "ACCEPT" else "REJECT"
        return Counted(word, f"{vote} counted as {word}: its {by.severity} finding "
                       f"({_short(by.what)}) asks at least {least}")
    if policy.require_location and as_ready in BLOCKING and findings:
        blocking = [f for f in findings if f.severity in dict(policy.least)] or findings
        if not any(f.located for f in blocking):
            return Counted(vote, f"{vote} is advisory: none of its blocking findings is "
                           "located in the document (require_location)", True)
    return Counted(vote)


def _short(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[:width - 3].rstrip() + "..."
