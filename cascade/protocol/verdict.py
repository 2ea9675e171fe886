"""The gate's verdict on one governed document, from its ledger's derived state: the hook,
``cascade check`` and ``cascade status`` all judge with ``gate()``, so they cannot disagree."""
from __future__ import annotations

from msgspec import Struct

from cascade.docstatus import core as text_core
from cascade.protocol.derived import State


class Verdict(Struct):
    """The gate's decision on one governed document, as the hook, ``check`` and ``status``
    give it."""

    ok: bool
    reason: str  # one line
    kind: str  # ok | stale-revision | no-revision | no-consensus | rejected

    @property
    def blocked_by_votes(self) -> bool:
        return self.kind in ("no-consensus", "rejected")


def core_problem(state: State, doc: str | None, data: bytes) -> str | None:
    """When the ledger says the document's current text holds an earlier revision's review
    (same core: status, spacing or path changed only), whether ``data`` -- the text being
    committed -- really has that core. Hook and ``check`` both verify it."""
    if not state.carried_now:
        return None
    return None if text_core(data) == state.core else changed_core(doc)


def changed_core(doc: str | None) -> str:
    return (f"the ledger says {doc} differs from the reviewed text only in its status, "
            "spacing or path, but its core differs: the review does not hold (commit it through "
            "the hook: it records a new revision and asks the panel)")


def gate(state: State, revision: str | None, doc: str | None,
         data: bytes | None = None) -> Verdict:
    """The verdict for a ledger whose document is at ``revision`` (its blob id; None: the
    ledger has no document; ``data``: its text, to verify a review carried over). The ledger
    must have recorded that revision, and be at consensus READY (or a person in force decided
    READY) for it."""
    problem = core_problem(state, doc, data) if data is not None else None
    if problem:
        return Verdict(False, problem, "changed-core")
    if revision is not None and state.source_revision != revision:
        if state.source_revision:
            return Verdict(False, f"the ledger reviewed another revision of {doc} "
                                  f"({state.source_revision[:7]}; this one is {revision[:7]})",
                           "stale-revision")
        return Verdict(False, f"the ledger records no revision of {doc} (this one is "
                              f"{revision[:7]})", "no-revision")
    result = state.result
    ignored = [d for d in state.decisions if not d.in_force and d.note
               and d.note != "superseded by a later decision"
               and d.note != "for another revision of the document"]
    tail = "".join(f"; {d.by}'s decision (line {d.line}) does not count: {d.note}"
                   for d in ignored)
    if result.reached and result.outcome == "READY":
        return Verdict(True, f"consensus READY ({result.reason})" if state.decision is None
                       else f"{result.reason}: {_gist(state.decision.reason)}", "ok")
    if result.reached:
        what = "the panel rejects" if state.decision is None else "decided against"
        return Verdict(False, f"consensus {result.outcome}: {what} {doc or 'this'} "
                              f"({result.reason}){tail}", "rejected")
    reason = result.reason
    if state.decision is not None:
        reason = f"{result.reason}: {_gist(state.decision.reason)}"
    elif result.missing:
        reason += f"; waiting for {', '.join(result.missing)}"
    return Verdict(False, reason + tail, "no-consensus")


def _gist(text: str, width: int = 60) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1].rstrip() + "…"
