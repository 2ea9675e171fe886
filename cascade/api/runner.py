"""``from cascade import Runner``: seed 002's Python API for running persona turns
(docs/api.md). The same runs as ``cascade turn`` and ``cascade run``, with the ledger's lock
held as they hold it. A model's failure is a reply with ``status`` "failed" and its
``error``; bad input (an unknown persona, a step protocol asked by name) raises CascadeError.
"""
from __future__ import annotations

import contextlib
import os
from pathlib import Path

from msgspec import Struct

from cascade.base.errors import CascadeError
from cascade.check.governance import recorded_revision, resolve, writing
from cascade.ledger.lock import ledger_lock
from cascade.protocol.discussion import Discussion
from cascade.protocol.pending import Pending, requested_turns
from cascade.protocol.requests import next_wave
from cascade.run.protocol_run import run
from cascade.turns.settings import Settings


class TurnReply(Struct):
    """One persona's reply to a turn."""

    name: str  # the persona's display name (AI-Architect)
    alias: str
    status: str  # ok | cached | no-response | failed | skipped
    vote: str | None
    comment: str  # the block's text as the ledger holds it ("" when nothing was written)
    model: str
    error: str = ""

    @property
    def ok(self) -> bool:
        return self.status in ("ok", "cached", "no-response")


class Runner:
    """Runs persona turns on a discussion (a Discussion, or a ledger's or document's path).
    ``settings``: cascade.turns.settings.Settings; None reads the environment (CASCADE_*)
    and the providers declared in the discussion's repository, for each discussion run."""

    def __init__(self, settings=None) -> None:
        self.given = settings

    def settings_for(self, d) -> Settings:
        """The settings a run on ``d`` uses."""
        return self.given if self.given is not None else Settings.from_env(d.root)

    def run_turn(self, discussion, participants: list[str] | None = None,
                 callout: str | None = None, progress=None) -> list[TurnReply]:
        """Ask the pending personas (``participants`` None) or the named ones (aliases, "@"
        optional, "all" for every participant), each told ``callout`` as a person's request;
        the replies are appended to the ledger and returned. A step protocol's turns come
        from its steps: ``run`` runs them (naming personas is an error)."""
        with _writing(discussion) as d:
            d.current_phase  # an unknown phase is a configuration error, before any call
            if not d.protocol.steps.shape.by_name:
                how = "asks by its steps, not by name" if participants else "runs by its steps"
                raise CascadeError(f"protocol {d.protocol.name!r} {how}: use "
                                   "Runner().run(discussion)", d.path)
            pending = requested_turns(d, list(participants)) if participants else [
                Pending(d.personas.get(r.alias), r.why) for r in next_wave(d)]
            if callout:
                pending = [Pending(p.persona, p.reason, callout) for p in pending]
            if not pending:
                return []
            done = run(d, self.settings_for(d), progress, _rule(d), pending=pending,
                       source_data=recorded_revision(d))
            return [_reply(d, o) for o in done.outcomes]

    def run(self, discussion, auto: bool = True, progress=None):
        """What is due: a step protocol's next steps until it concludes or needs a person
        (``auto``: the recommended choice, recorded as such) -- its Result; for a protocol of
        phases, the pending turns -- their replies (``run_turn``)."""
        with _writing(discussion) as d:
            d.current_phase
            if d.protocol.steps.shape.one_wave:  # its one wave: the replies
                return self.run_turn(d, progress=progress)
            rule = _rule(d)
            return run(d, self.settings_for(d), progress, rule, source_data=recorded_revision(d),
                       auto=auto or bool(rule and rule.auto), ask=None)


HOLDER = "cascade.Runner (Python API)"


@contextlib.contextmanager
def _writing(discussion):
    """The Discussion to run, with its ledger's lock held (cascade.ledger.lock): a path is read
    once the lock is taken; a Discussion given is brought up to date with its file then, so
    whoever another writer answered meanwhile is not asked again."""
    if isinstance(discussion, Discussion):
        with ledger_lock(discussion.path, holder=HOLDER):
            discussion.refresh()
            yield discussion
    elif isinstance(discussion, (str, os.PathLike)):
        with writing(str(Path(discussion)), HOLDER) as d:
            yield d
    else:
        raise CascadeError(f"a Discussion or a path, not {type(discussion).__name__}")


def _rule(d):
    try:
        return resolve(str(d.path))[2]
    except CascadeError:
        return None


def _reply(d, outcome) -> TurnReply:
    name = outcome.persona.name
    comment = ""
    if outcome.ok:  # the block its reply became, as the ledger holds it
        mine = [c for c in d.comments if c.author == name and c.origin == "ai"]
        comment = mine[-1].body if mine else ""
    return TurnReply(name, outcome.persona.alias, outcome.status, outcome.vote, comment,
                     outcome.model, outcome.error)
