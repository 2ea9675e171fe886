"""The hook's drift review (``drift_review:``, docs/configuration.md): a staged change to
paths an accepted decision governs (cascade.check.decision_drift, read from HEAD) is shown,
with the decision, to the persona its rule names, asked whether the change contradicts it.
Its answer is a turn like any other (cascade.run.step_turn): a stamped block, with no vote,
appended to the decision's ledger and staged where that is safe (cascade.loop.staging).
Advisory: it never blocks the commit; a persona that cannot be asked is said in one line.
"""
from __future__ import annotations

import asyncio
import shlex
from pathlib import Path
from typing import TextIO

from cascade.check.decision_drift import Decision, decisions
from cascade.check.gittree import Blobs, Tree
from cascade.base.errors import CascadeError
from cascade.base.gitio import git, staged_changes, version_at
from cascade.ledger.records import DRIFT_REVIEW, Comment
from cascade.ledger.lock import ledger_lock
from cascade.config.ruleset import RuleSet
from cascade.loop.staging import Stager
from cascade.protocol.discussion import Discussion
from cascade.protocol.engine import last_message
from cascade.protocol.fields import Field
from cascade.protocol.runstate import Request
from cascade.protocol.setting import setting_of
from cascade.protocol.spec import Step
from cascade.run.step_turn import Wave, import_models, turns
from cascade.base.resources import LEDGER_SUFFIX
from cascade.base.revision import blob_id
from cascade.base.text import printable
from cascade.turns.cache import ReplyCache, cache_dir
from cascade.turns.display import LineProgress
from cascade.turns.asking import Shared
from cascade.turns.sessions import session
from cascade.turns.settings import Settings
from cascade.turns.sources import read_source

ANSWERS = ("CONTRADICTS", "CONSISTENT", "UNCLEAR")
DIFF_CHARS = 24_000  # of the staged diff shown to the persona; the rest is cut, and said
STEP = Step(
    id=DRIFT_REVIEW, title="Drift review", role="drift", visibility="blind",
    instructions=("A change to code that this accepted decision governs is staged for "
                  "commit; it is shown above as the person's request. Say whether the "
                  "change contradicts the decision: \"drift\" is CONTRADICTS when it goes "
                  "against what the decision says, CONSISTENT when it keeps to it, UNCLEAR "
                  "when you cannot tell from what you see. In \"comment\", name the part of "
                  "the decision and the lines of the change your answer rests on."),
    words=120, fields=(Field("drift", ANSWERS, "UNCLEAR"),), target=None, table=None,
    confirm=False)


def _changed(root: Path, staged: list[str]) -> list[str]:
    """Of ``staged``, the paths whose staged content differs from HEAD's (none before the
    first commit: nothing is accepted yet)."""
    return staged_changes(root, staged) or []


def _diff(root: Path, paths: list[str]) -> str:
    text = git(root, "--literal-pathspecs", "diff", "--cached", "--no-color", "--", *paths
               ).decode("utf-8", "replace")
    if len(text) > DIFF_CHARS:
        text = text[:DIFF_CHARS] + f"\n[... {len(text) - DIFF_CHARS:,} more characters cut]\n"
    return text


def _asked_already(root: Path, d: Discussion, rel: str) -> bool:
    """Whether the ledger holds a drift review HEAD's does not: a commit tried again (the
    gate blocked it) is not asked, nor recorded, twice."""
    committed = version_at(root, rel) or b""
    lines = committed.count(b"\n")
    return any(isinstance(e, Comment) and e.line > lines and e.provenance.get("step") == STEP.id
               for e in d.ledger.entries)


def review_drift(root: Path, staged: list[str], out: TextIO) -> None:
    """Ask each decision's ``drift_review`` persona about the staged change to what it
    governs; append, stage and show each answer."""
    changed = [p for p in _changed(root, staged) if not p.endswith(LEDGER_SUFFIX)]
    if not changed:
        return
    head = Tree(root, "HEAD", Blobs(root))
    found = decisions(head, RuleSet(root, reader=head), wanted=lambda r: r.drift_review)
    asks = [(d, paths) for d in found
            if (paths := [p for p in changed if d.governs(p) and p != d.doc])]
    if not asks:
        return
    stager = Stager(root)
    for d, paths in asks:
        _ask(root, d, paths, stager, out)


def _ask(root: Path, decision: Decision, paths: list[str], stager: Stager, out: TextIO) -> None:
    rule = decision.rule
    ledger = root / decision.ledger
    if not ledger.is_file():
        print(f"cascade: {decision.doc}: drift review skipped: its ledger {decision.ledger} "
              "is not here", file=out)
        return
    with ledger_lock(ledger, holder="cascade hook"):
        stager.remember(decision.ledger)
        d = Discussion.load(ledger, setting_of(root))
        if _asked_already(root, d, decision.ledger):
            print(f"cascade: {decision.doc}: its drift review for this commit is in "
                  f"{decision.ledger} already", file=out)
            return
        persona = d.personas.get(rule.drift_review)
        if persona is None:
            raise CascadeError(f"rule {rule.name!r} drift_review: unknown persona "
                               f"{rule.drift_review!r}", rule.file, rule.line_of("drift_review"))
        callout = (f"The staged change to {', '.join(paths)} (governed by this decision: "
                   f"{', '.join(decision.globs)}), as git diff --cached shows it:\n\n"
                   + _diff(root, paths))
        request = Request(persona.alias, STEP.role, STEP, 1, "fast", [], None, "",
                          why="the commit changes code this decision governs", callout=callout)
        print(f"cascade: {decision.doc}: asking {persona.name} whether the change to "
              f"{', '.join(paths)} contradicts it", file=out, flush=True)
        outcome = asyncio.run(_turn(d, request, rule, version_at(root, decision.doc), out))
    if not outcome.ok:
        print(printable(f"cascade: {decision.doc}: drift review by {persona.name} failed "
                        f"({outcome.error}); advisory, the commit goes on"), file=out)
        return
    block = next((e for e in reversed(Discussion.load(ledger, setting_of(root)).ledger.entries)
                  if isinstance(e, Comment)), None)
    answer = block.provenance.get("drift", "UNCLEAR") if block is not None else "UNCLEAR"
    first = next((line.strip() for line in (block.body if block else "").splitlines()
                  if line.strip()), "")
    print(printable(f"cascade: {decision.doc}: {persona.name}: {answer} (advisory): "
                    f"{first[:200]}"), file=out)
    staged = stager.stageable([decision.ledger])
    if staged and stager.stage(sorted(staged)):
        print(f"cascade: recorded in {decision.ledger} (staged)", file=out)
    else:
        print(f"cascade: recorded in {decision.ledger}: git add "
              f"{shlex.quote(decision.ledger)}", file=out)


async def _turn(d: Discussion, request: Request, rule, accepted: bytes | None, out: TextIO):
    """The one turn, on the decision as committed (``accepted``: its bytes at HEAD)."""
    if not d.source:
        raise CascadeError("the ledger names no Source: document", d.path)
    settings = Settings.from_env(d.root)
    source = read_source(d.root, d.source, accepted, where=d.path, line=d.source_line)
    revision = blob_id(source.data) if source.data is not None else None
    async with session():
        shared = Shared(settings, LineProgress(out, causes=False))
        wave = Wave(d, settings, shared, asyncio.Lock(), ReplyCache(cache_dir(d.root)),
                    revision, rule.model, rule.models, source,
                    [last_message(d.ledger, d.personas)], False)
        try:
            await import_models([request], d.personas, rule.model, rule.models, settings)
            (outcome,) = await turns(wave, [request], d.personas)
        finally:
            shared.progress.close()
    return outcome
