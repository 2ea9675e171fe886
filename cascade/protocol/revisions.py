"""Recording a document's revision in its ledger: the one place that decides whether a new
text asks the panel again. A revision event names the document's blob and path and the *core*
of its text (cascade.base.docstatus: without its status and spacing). When the core is one the
ledger already recorded, that review holds (``same-as=``): a status-line edit, a whitespace
fix, a rename, or the text going back to what was reviewed before, asks nobody. Anything else
is a new revision, and (under ``revote_on_change``) a vote reset.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable

from cascade.base.docstatus import core as text_core
from cascade.ledger.records import SOURCE_REVISION, VOTE_RESET
from cascade.protocol.discussion import Discussion
from cascade.base.revision import blob_id

NEW, SAME, MOVED, BACK = "new", "same", "moved", "back"
KINDS = {
    SAME: "it differs from the reviewed text only in its status or spacing",
    MOVED: "it was renamed",
    BACK: "it is back to a text the panel reviewed before",
}


def record_revision(d: Discussion, doc: str, data: bytes, *, revote: bool = True,
                    keep: Iterable[str] | Callable[[], Iterable[str]] = ()) -> str:
    """Append the ``SOURCE-REVISION`` for ``doc`` at ``data`` (not saved). Returns what was
    recorded: "" (nothing: the ledger already records this text at this path), ``new`` (the
    panel is asked), or ``same`` / ``moved`` / ``back`` (the earlier review holds).
    ``keep``: people's votes cast for this text, kept by the vote reset (or a function that
    finds them, called only when there is one)."""
    blob = blob_id(data)
    core = text_core(data)
    state = d.state
    current = state.source_revision
    was = d.source
    if current == blob and was == doc and not (state.carried_now and state.core != core):
        return ""
    same = None
    if state.carried_now and current == blob and state.core != core:
        pass  # the ledger claims a review holds that does not: this text is reviewed anew
    elif current is not None and (current == blob or state.core == core):
        same = current
    elif any(e.kind == SOURCE_REVISION and e.value.split()[:1] == [blob]
             and e.fields.get("core") == core for e in d.events):
        same = blob  # the text of an earlier revision, recorded with its core
    if same is not None:
        d.add_event(SOURCE_REVISION, blob, path=doc, core=core, **{"same-as": same})
        if same == blob and current != blob:
            return BACK
        return MOVED if was != doc else SAME
    d.add_event(SOURCE_REVISION, blob, path=doc, core=core)
    if current is not None and revote:
        kept = keep() if callable(keep) else keep
        d.add_event(VOTE_RESET, "the document changed", keep=",".join(kept) or None)
    return NEW
