"""The gate's verdict on one governed document, from its ledger's derived state alone: the
hook, ``cascade check`` (every format), ``cascade status``, ``explain``, the record and the UI
all read ``gate()``, so they cannot disagree. It weighs every piece of evidence once (the
list: docs/trust.md, "One verdict"); ``Judgement.effect`` says what each finding does to it.
"""
from __future__ import annotations

import shlex

from msgspec import Struct

from cascade.base.docstatus import core as text_core
from cascade.protocol.state import State
from cascade.protocol.finding_life import open_findings
from cascade.protocol.findings import VERDICTS, Finding, Policy, least_verdict

BLOCKED_BY_VOTES = ("no-consensus", "rejected")


class Judgement(Struct, frozen=True):
    """The gate's decision on one governed document, with the evidence that makes it."""

    ok: bool
    reason: str  # one line
    # ok | stale-revision | no-revision | no-consensus | rejected | changed-core | awaited |
    # findings (an open finding at or above the rule's ``hold:``)
    kind: str
    awaited: tuple[str, ...] = ()  # participants not heard on this revision
    holding: tuple[str, ...] = ()  # ids of the open findings that hold it (``hold:``)
    blocking: tuple[str, ...] = ()  # voters whose votes keep it from READY
    findings: tuple[Finding, ...] = ()  # every finding of the discussion, with its status
    policy: Policy = Policy()
    decided: bool = False  # a person's decision in force gives it
    concluded: bool = False  # the protocol's rounds ended in an impasse: nobody is asked again

    @property
    def blocked_by_votes(self) -> bool:
        return self.kind in BLOCKED_BY_VOTES

    @property
    def open(self) -> list[Finding]:
        """The open findings, the most severe first (what the author still has to read)."""
        return open_findings(self.findings)

    def effect(self, f: Finding) -> str | None:
        """What ``f`` does to this verdict, as every surface shows it: ``error`` when it fails
        the gate (it holds it under ``hold:``, or it is what makes a blocking voter's vote
        block), ``warning`` (an open critical or major one otherwise), ``notice`` (an open
        minor or info one), None (closed: resolved, answered, waived, overridden)."""
        if f.status != "open":
            return None
        if not self.ok and (f.id in self.holding or (
                self.blocked_by_votes and f.author in self.blocking
                and VERDICTS.index(least_verdict([f], self.policy)[0]) > 0)):
            return "error"
        return "warning" if f.severity in ("critical", "major") else "notice"

    def ways_out(self, doc: str | None, decide: str | None = None) -> str:
        """What ends a block, as commands and markers that work; "" when it passes.
        ``decide``: the way out through a person's decision, as it can work for whoever
        commits (default: the command). A person's decision in force is the last word on the
        revision: a new revision of the document is the way on."""
        if self.ok or self.decided:
            return ""
        decide = decide or f"cascade decide {shlex.quote(doc or '')} READY --reason '...'"
        if self.kind == "findings":
            first = self.holding[0]
            return (f"answer it in the ledger ('A({first}): ...'), have a decider waive it "
                    f"(cascade comment {shlex.quote(doc or '')} --waive {first} 'reason'), "
                    f"or {decide}").replace("comment  --", "comment --")
        if self.concluded:  # nobody is asked again: a person decides
            return decide
        if self.kind in BLOCKED_BY_VOTES:
            behind = [f.id for f in self.findings if self.effect(f) == "error"]
            answer = (f"answer {', '.join(behind[:3])} in the ledger ('A({behind[0]}): ...')"
                      if behind else "answer in the ledger")
            return f"{answer}, ask one persona with @alias, or {decide}"
        return ""


def core_problem(state: State, doc: str | None, data: bytes) -> str | None:
    """When the ledger says the document's current text holds an earlier revision's review
    (same core: status, spacing or path changed only), whether ``data`` -- the text being
    committed -- really has that core. Hook and ``check`` both verify it."""
    return None if not state.carried_now or text_core(data) == state.core else changed_core(doc)


def changed_core(doc: str | None) -> str:
    return (f"the ledger says {doc} differs from the reviewed text only in its status, "
            "spacing or path, but its core differs: the review does not hold (commit it through "
            "the hook: it records a new revision and asks the panel)")


def gate(state: State, revision: str | None, doc: str | None,
         data: bytes | None = None) -> Judgement:
    """The verdict for a ledger whose document is at ``revision`` (its blob id; None: the
    ledger has no document; ``data``: its text, to verify a review carried over). The ledger
    must have recorded that revision, every participant must have answered it (or a person
    in force decided), the votes must reach READY (or the decision be READY), and no open
    finding may stand at or above the rule's ``hold:``."""
    policy = state.policy if isinstance(state.policy, Policy) else Policy()
    base = {"findings": tuple(state.findings), "policy": policy,
            "decided": state.decision is not None,
            "concluded": state.conclusion.outcome == "IMPASSE"}  # (a decision would be it)
    if data is not None and (problem := core_problem(state, doc, data)):
        return Judgement(False, problem, "changed-core", **base)
    if revision is not None and state.source_revision != revision:
        if state.source_revision:
            return Judgement(False, f"the ledger reviewed another revision of {doc} "
                                    f"({state.source_revision[:7]}; this one is {revision[:7]})",
                             "stale-revision", **base)
        return Judgement(False, f"the ledger records no revision of {doc} (this one is "
                                f"{revision[:7]})", "no-revision", **base)
    result = state.result
    ignored = [d for d in state.decisions if not d.in_force and d.note not in
               ("", "superseded by a later decision", "for another revision of the document")]
    tail = "".join(f"; {d.by}'s decision (line {d.line}) does not count: {d.note}"
                   for d in ignored)
    blocking = tuple(result.blocked_by)
    if result.reached and result.outcome == "READY":
        return _ready(state, base, policy)
    if result.reached:
        what = "the panel rejects" if state.decision is None else "decided against"
        return Judgement(False, f"consensus {result.outcome}: {what} {doc or 'this'} "
                                f"({result.reason}){tail}", "rejected", blocking=blocking,
                         **base)
    reason = result.reason
    if state.decision is not None:
        reason = f"{result.reason}: {_gist(state.decision.reason)}"
    elif result.missing:
        reason += f"; waiting for {', '.join(result.missing)}"
    return Judgement(False, reason + tail, "no-consensus", tuple(state.awaited),
                     blocking=blocking, **base)


def _ready(state: State, base: dict, policy: Policy) -> Judgement:
    """The votes (or a person's decision) reach READY: it passes unless a participant is
    still awaited or an open finding stands at or above the rule's ``hold:``."""
    result = state.result
    if state.decision is not None:
        return Judgement(True, f"{result.reason}: {_gist(state.decision.reason)}", "ok",
                         **base)
    if state.awaited:
        names = ", ".join(state.awaited)
        return Judgement(False, f"{result.reason}, but {names} "
                                f"{'has' if len(state.awaited) == 1 else 'have'} not "
                                "answered this revision: the review is not complete",
                         "awaited", tuple(state.awaited), **base)
    # an advisory voice's findings (an advisory panel, a non-participant) are shown and
    # never hold: people decide there
    holding = [f for f in state.findings if policy.holds(f) and f.author not in
               state.advisory]
    if holding:
        named = ", ".join(f"{f.id} ({f.severity}, {f.place or f'ledger line {f.line}'}, "
                          f"{f.author})" for f in holding[:3])
        more = f" and {len(holding) - 3} more" if len(holding) > 3 else ""
        word = "is" if len(holding) == 1 else "are"
        at_least = "" if policy.hold == "info" else " or worse"
        return Judgement(False, f"{result.reason}, but {named}{more} {word} open, and the "
                                f"rule holds the commit on a {policy.hold}{at_least} finding",
                         "findings", holding=tuple(f.id for f in holding), **base)
    return Judgement(True, f"consensus READY ({result.reason})", "ok", **base)


def _gist(text: str, width: int = 60) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1].rstrip() + "…"
