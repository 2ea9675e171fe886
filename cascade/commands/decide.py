"""``cascade decide PATH VOTE --reason TEXT``: a person decides, overriding the panel for the
revision of the document a commit would hold, as far as the rule's ``deciders:`` allow; a step
protocol's record is written again, its outcome this decision (docs/cli.md)."""
from __future__ import annotations

import shlex
import sys
from pathlib import Path

from cascade.base.errors import CascadeError, display_path
from cascade.base.gitio import Author, git, index_blobs, next_author, repo_root
from cascade.ledger.identity import same_person
from cascade.ledger.records import VOTES
from cascade.loop.closing import close_now
from cascade.loop.staging import writing_staged
from cascade.run.reply_blocks import record_time, write_record
from cascade.protocol.finding_life import pending
from cascade.base.text import printable


def _under_review(d, doc: str) -> tuple[str, bool]:
    """The revision of ``doc`` a decision is for: the staged one, when the ledger recorded it
    (or recorded none yet); the one the ledger recorded, when the working tree holds it and the
    index does not (a blocked ``git commit -a`` reviewed it from git's temporary index, which
    the blocked commit threw away). Otherwise nobody reviewed what a commit would hold:
    refused. Also: whether that revision is still to be staged."""
    top = repo_root(d.path.parent)
    shown = shlex.quote(display_path(top / doc))
    staged = index_blobs(top, [doc]).get(doc)
    recorded = d.source_revision
    if recorded is None or staged == recorded:
        if staged is None:
            raise CascadeError(f"{doc} is not in the index: stage it (git add {shown}) first, "
                               "so the decision names the revision a commit will hold", d.path)
        return staged, False
    if (top / doc).is_file() and git(top, "hash-object", "--", doc).decode().strip() == recorded:
        return recorded, True  # the reviewed edit is in the working tree: the hint stages it
    raise CascadeError(f"the ledger reviewed another revision of {doc} than the one staged: "
                       "commit it first (git commit), so the revision you decide on is "
                       "recorded, then decide", d.path)


def _counts_only_from(person: Author, where: Path) -> None:
    """``--author`` named someone other than the author of the next commit here: say that the
    decision counts only in a commit that person makes."""
    try:
        committer = next_author(where)
    except CascadeError:
        committer = None
    if committer is None or not same_person(person.ident, committer.ident):
        print(printable(f"cascade: it counts only when {person.ident} commits it, from their "
                        "own identity (git's author here is "
                        f"{committer.ident if committer else 'unknown'})"), file=sys.stderr)


def decide(path: str, vote: str, reason: str, author: str | None = None) -> int:
    """Record the decision of the person who authors the next commit (``author``: as
    ``git commit --author`` takes it; cascade.base.gitio.next_author): it counts only when added in
    a commit by that person."""
    vote = vote.strip().upper()
    if vote not in VOTES:
        raise CascadeError(f"the decision must be READY, CHANGES or REJECT, not {vote!r}")
    if not " ".join(reason.split()):
        raise CascadeError("a decision needs a reason: --reason TEXT")
    with writing_staged(path, "cascade decide") as (d, written):
        person = next_author(d.path.parent, author)
        if d.personas.is_persona_name(person.name):
            raise CascadeError(f"{person.name!r} is a persona's name; people decide under "
                               "their own name", d.path)
        doc = d.source
        revision, unstaged = _under_review(d, doc) if doc else (None, False)
        by = person.ident
        where = f" of {doc} (revision {revision[:7]})" if revision else ""
        over = pending(d.findings)  # what the decision overrides, said in its block
        findings = (" and its open findings " + ", ".join(
            f"{f.id} ({f.severity}, {f.author}: {f.what})" for f in over)) if over else ""
        body = (f"**Decision: {vote}** -- {by} decides{where}, overriding the panel"
                f"{findings}.\n\n{reason}")
        d.add_comment(person.name, body, None,
                      provenance={"vote": vote, "revision": revision, "by": by},
                      origin="decision")
        d.save()
        decision = d.state.decision
        shown = display_path(d.path)
        in_force = decision is not None and decision.by == by and decision.vote == vote
        if not in_force:
            note = next((x.note for x in reversed(d.state.decisions) if x.by == by), "")
            if revision and d.source_revision != revision and note.startswith("for another"):
                print(printable(f"cascade: the ledger has not recorded this revision of {doc} "
                                "yet: the decision takes effect when the hook records it "
                                "(commit the document)"), file=sys.stderr)
            else:
                print(printable("cascade: recorded, but it does not override the panel: "
                                f"{note}"), file=sys.stderr)
        print(printable(f"Recorded the decision of {by}: {vote}{where}, in {shown}."))
        if author is not None:
            _counts_only_from(person, d.path.parent)
        if in_force and not d.protocol.steps.shape.standing_ballot:  # the record says the outcome
            record = write_record(d, d.state.run, record_time())
            print(printable(f"Wrote {record}: its outcome is this decision ({vote})"))
        if in_force and doc and revision:
            closed, _moved = close_now(d, path, working=unstaged)
            if closed is not None:
                print(printable(f"cascade: {doc}: {closed.describe(doc)}."))
        if unstaged and doc:
            written.also(doc)  # the revision decided on is in the working tree only
    print(printable(written.line() or "Stage it and commit: git add " + shlex.quote(shown)))
    return 0
