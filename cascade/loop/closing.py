"""The lifecycle closes: at consensus in the last phase, the ledger records the outcome once,
and -- where the rule says so (``status:``) -- the document's own status moves (adr-tools'
``## Status`` Proposed -> Accepted, MADR's front matter ``status: accepted``).

Only the status line is rewritten, only while it still says the document is open (Proposed,
Draft, ...), only when the working-tree file is exactly the text being committed (nothing
the user has not staged is touched), and the new text is recorded in the ledger as keeping
its review (cascade.protocol.revisions): committing it asks no one. Used by the hook, and by
``cascade decide`` and ``cascade comment --vote`` when their vote brings consensus (so the
commit that follows needs no extra round).
"""
from __future__ import annotations

from pathlib import Path

from msgspec import Struct

from cascade.base import docstatus
from cascade.base.atomic import atomic_write
from cascade.base.errors import display_path
from cascade.base.gitio import git, index_blobs, read_blobs, repo_root
from cascade.check.governance import resolve
from cascade.config.adr_conventions import OPEN_STATUSES
from cascade.protocol.discussion import Discussion
from cascade.protocol.revisions import record_revision
from cascade.protocol.verdict import gate
from cascade.base.revision import blob_id
from cascade.base.safepath import first_link


class Closed(Struct, frozen=True):
    outcome: str
    status: str | None  # the status word written into the document, if any
    note: str  # why the status was left as it is, if it was

    def describe(self, doc: str | None) -> str:
        text = f"consensus {self.outcome}: the outcome is recorded"
        if self.status:
            text += f" and {doc}'s status is now {self.status!r}"
        elif self.note:
            text += f" ({self.note})"
        return text


def close(root: Path, d: Discussion, rule, doc: str | None, data: bytes | None) -> Closed | None:
    """Record the outcome in ``d`` (not saved) when its current revision -- ``data``, the
    text being committed -- is at consensus in the last phase, the gate passes it (READY) and
    no outcome is recorded since; move the document's status where ``rule.status`` says so.
    None: nothing to do."""
    state = d.state
    result = state.result
    if not result.reached or result.outcome not in ("READY", "REJECT"):
        return None
    if d.protocol.next_phase(d.current_phase) is not None:
        return None  # consensus in an earlier phase moves the discussion on, not closes it
    if data is not None and state.source_revision != blob_id(data):
        return None  # consensus on another revision than the one being committed
    if result.outcome == "READY" and not gate(state, state.source_revision, doc).ok:
        return None  # the gate holds it (a participant awaited, a finding the rule holds on)
    words = getattr(rule, "status", None) or {}
    # A step protocol's run records its own outcome; the document's status still moves.
    recorded = state.status == "OPEN"
    if recorded:
        d.record_outcome(result.outcome)
    status, note = None, ""
    if doc and data is not None and result.outcome in words:
        status, note = _move_status(root, d, doc, data, words[result.outcome])
    if not recorded and status is None:
        return None
    return Closed(result.outcome, status, note)


def _move_status(root: Path, d: Discussion, doc: str, data: bytes,
                 word: str) -> tuple[str | None, str]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None, "its status is not readable UTF-8: set it yourself"
    found = docstatus.find(text)
    if found is None:
        return None, "it states no status to move"
    current = " ".join(found.value.split()).lower()
    if current.startswith(word.lower()):
        return None, ""
    if not current.startswith(OPEN_STATUSES) and current:
        return None, f"its status says {found.value!r}: left as it is"
    path = root / doc
    try:
        if first_link(root, doc) is not None or path.read_bytes() != data:
            return None, f"set its status to {word} yourself: the file has unstaged edits"
        mode = path.stat().st_mode
    except OSError:
        return None, f"set its status to {word} yourself"
    value = docstatus.matching_case(word, found.value)
    new = docstatus.set_status(text, value).encode("utf-8")
    atomic_write(path, new, mode)
    record_revision(d, doc, new)
    return value, ""


def close_now(d: Discussion, path: str,
              working: bool = False) -> tuple[Closed | None, str | None]:
    """For a command that just changed the votes of the discussion at ``path`` (a ledger or
    its document): close it if the staged revision of its document (``working``: the one in
    the working tree, still to be staged) is now at consensus. Saves the ledger. Returns what
    was closed, and the document's path to stage too (its status moved), as shown from
    here."""
    doc = d.source
    if not doc:
        return None, None
    top = repo_root(d.path.parent)
    if working:
        data = (top / doc).read_bytes()
        revision = git(top, "hash-object", "--", doc).decode().strip()  # as git add stages it
    else:
        revision = index_blobs(top, [doc]).get(doc)
        data = read_blobs(top, [revision]).get(revision) if revision else None
    if revision is None or d.source_revision != revision:
        return None, None
    rule = resolve(path)[2]
    closed = close(top, d, rule, doc, data)
    if closed is None:
        return None, None
    d.save()
    return closed, display_path(top / doc) if closed.status else None
