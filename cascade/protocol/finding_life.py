"""The life of a finding across a discussion: numbered F1, F2... in ledger order, each open
until its author's later review resolves it (naming it, or voting READY), a person answers it
(``A(Fn):``), a decider waives it (``WAIVE(Fn): reason``), or a person's decision in force
overrides it (``STATUSES``); and the lists every surface shows. Pure: no model, git, files."""
from __future__ import annotations

from collections.abc import Iterable, Mapping

from msgspec import Struct
from msgspec.structs import replace

from cascade.config.rules import SEVERITIES  # the most severe first
from cascade.ledger.identity import is_decider, same_person
from cascade.ledger.records import Comment
from cascade.ledger.provenance import verify
from cascade.protocol.findings import FIELD, RESOLVED, Finding, decode, resolved_ids


def _stamped(c: Comment, trusted) -> bool:
    """Whether ``c`` is a tool's block with findings: one of the ``trusted`` lines (verified by
    the state's walk as this ledger's), or -- None given -- one whose digest verifies."""
    if c.origin != "ai" or FIELD not in c.provenance:
        return False
    return c.line in trusted if trusted is not None else verify(c) is None


class Stray(Struct, frozen=True):
    """A hand-written ``A(Fn):`` or ``WAIVE(Fn):`` naming a finding that does not exist (at
    its place in the ledger): shown, never counted."""

    kind: str  # A or WAIVE
    ref: str
    author: str
    line: int

    @property
    def reason(self) -> str:
        return (f"{self.kind}({self.ref}) by {self.author} names no finding of this "
                "discussion: it does not count")


def numbered(comments: Iterable[Comment], deciders: Iterable[str] | None = None,
             is_person=lambda _name: True,
             authors: Mapping[int, str] | None = None,
             strays: list[Stray] | None = None, *, trusted=None) -> list[Finding]:
    """Every finding in ledger order, numbered F1, F2... (never renumbered: an append only
    adds): those of the tool's blocks and each ``CONCERN:`` marker (a major finding, not
    located), each open or closed as the module says (a waiver by someone the rule's
    ``deciders:`` do not allow is kept in ``closed_by`` as refused; overridden: see
    ``overridden``). ``authors``: who added each waiver's line (the git identity), when known:
    a waiver counts only when added by the person it names; None: names are taken as
    written. A marker naming no finding goes to ``strays``. ``trusted``: the lines of the
    blocks the state's walk verified as this ledger's (a copy from another ledger gives no
    finding here); None: any block whose digest verifies."""
    allowed = tuple(deciders or ())
    out: list[Finding] = []
    for c in comments:
        if _stamped(c, trusted):
            for ref in resolved_ids(c.provenance.get(RESOLVED, "").split(",")):
                _close(out, ref, "resolved", {"by": c.author, "line": c.line})
            if c.vote in ("READY", "ACCEPT"):  # its author finds it ready: its own are met
                for f in [f for f in out if f.author == c.author and f.status in OPEN]:
                    _close(out, f.id, "resolved", {"by": c.author, "line": c.line,
                                                   "how": f"voted {c.vote}"})
            for f in decode(c.provenance[FIELD]):
                out.append(replace(f, id=f"F{len(out) + 1}", author=c.author, line=c.line,
                                   revision=c.provenance.get("revision")))
        for m in c.markers:
            if m.kind == "CONCERN":
                out.append(Finding("major", "", m.text, author=m.author, line=m.line,
                                   id=f"F{len(out) + 1}"))
            elif m.kind in ("A", "WAIVE") and m.ref and m.ref[:1] in "Ff":
                target = _find(out, m.ref)
                if target is None:
                    if strays is not None:
                        strays.append(Stray(m.kind, m.ref.upper(), m.author, m.line))
                elif m.kind == "A":
                    target.answers.append({"text": m.text, "author": m.author, "line": m.line})
                    if is_person(m.author):  # a persona's answer is shown, closes nothing
                        _close(out, target.id, "answered", {"by": m.author, "line": m.line})
                else:
                    _waive(out, m, _refused(m, allowed, is_person, authors))
    return out


OPEN = ("open", "answered")  # what a later review, a waiver or a decision still closes


def overridden(found: list[Finding], decision) -> list[Finding]:
    """``found`` under a person's decision in force (``decision``: its ``by``, ``vote``,
    ``line``; None: none): the findings still open or answered before it are overridden."""
    if decision is None:
        return found
    by = {"by": decision.by, "line": decision.line, "how": f"decided {decision.vote}"}
    return [replace(f, status="overridden", closed_by=by)
            if f.status in OPEN and f.line < decision.line else f for f in found]


def _refused(m, allowed: tuple[str, ...], is_person, authors) -> str | None:
    """Why a ``WAIVE(Fn):`` does not count (None: it does)."""
    if not is_person(m.author):
        return "only a person may waive"
    if allowed and not is_decider(m.author, allowed):
        return f"{m.author} is not one of the rule's deciders"
    added = authors.get(m.line) if authors is not None else None
    if authors is not None and (added is None or not same_person(m.author, added)):
        return f"recorded as {m.author}'s, but added in a commit by {added or 'someone unknown'}"
    return None


def _waive(found: list[Finding], m, refused: str | None) -> None:
    waiver = {"by": m.author, "line": m.line, "reason": m.text}
    if refused is None:
        _close(found, m.ref, "waived", waiver)
        return
    target = _find(found, m.ref)  # refused: shown with the finding, which keeps its status
    if target is not None and target.status in OPEN:
        found[found.index(target)] = replace(target, closed_by={**waiver, "refused": refused})


def _find(found: list[Finding], ref: str) -> Finding | None:
    number = int(ref[1:]) if ref[1:].isdigit() else 0
    return found[number - 1] if 1 <= number <= len(found) else None


def _close(found: list[Finding], ref: str, status: str, by: dict) -> None:
    target = _find(found, ref)
    if target is not None and target.status in OPEN:
        found[found.index(target)] = replace(target, status=status, closed_by=by)


def open_findings(found: Iterable[Finding]) -> list[Finding]:
    """The open ones, the most severe first (ledger order within a severity)."""
    return sorted((f for f in found if f.status == "open"),
                  key=lambda f: SEVERITIES.index(f.severity))


def pending(found: Iterable[Finding]) -> list[Finding]:
    """The open and the answered ones (what the next review still looks at), most severe first."""
    return sorted((f for f in found if f.status in OPEN),
                  key=lambda f: SEVERITIES.index(f.severity))


def listing(found: Iterable[Finding], name=lambda author: author) -> list[str]:
    """The open and answered findings, one line each, by severity: ``F3 critical (lines
    12-14): what (AI-Security)`` (``name``: how an author is shown)."""
    rows = []
    for f in pending(found):
        at = f" ({f.place})" if f.located else " (not located)" if f.where else ""
        refused = f" [waiver refused: {f.closed_by['refused']}]" if f.closed_by.get(
            "refused") else ""
        answered = f" [answered by {name(f.answers[-1]['author'])}]" if f.answers else ""
        rows.append(f"{f.id} {f.severity}{at}: {f.what} ({name(f.author)}){answered}{refused}")
    return rows


def closed_listing(found: Iterable[Finding], name=lambda author: author) -> list[str]:
    """The closed findings, one line each, in ledger order, with how each was closed: ``F1
    major: what (AI-Security) -- waived by Carol (line 40): reason``."""
    rows = []
    for f in found:
        if f.status in OPEN:
            continue
        by = f.closed_by
        how = f.status
        if by.get("how"):
            how += f" ({by['how']})"
        reason = f": {by['reason']}" if by.get("reason") else ""
        rows.append(f"{f.id} {f.severity}: {f.what} ({name(f.author)}) -- {how} by "
                    f"{name(by.get('by', '?'))} (line {by.get('line', '?')}){reason}")
    return rows
