"""What the terminal UI does to a discussion, through the same functions as the commands:
comment, decide and advance run ``cascade comment``/``decide``/``advance`` (their output is
the UI's message); ``run_next`` runs what is due as ``cascade run`` does, stopping at a
decision point (the person answers with a comment). Each takes the ledger's lock and stages
what it writes as the commands do (the UI calls them from a worker thread)."""
from __future__ import annotations

import contextlib
import io
import threading
from pathlib import Path

from cascade.api import Runner
from cascade.commands.advance import advance as advance_command
from cascade.commands.comment import comment as comment_command
from cascade.commands.decide import decide as decide_command
from cascade.base.errors import CascadeError
from cascade.loop.staging import writing_staged
from cascade.run.run_result import nothing_to_run, outcome_text

_QUIET = threading.Lock()  # one redirect of stdout at a time: they must not interleave


def quietly(command, *args) -> tuple[int, str]:
    """Run a command function; (its exit code, what it printed). A CascadeError is the
    message the CLI would print, with exit 2 (or its own code)."""
    out = io.StringIO()
    try:
        with _QUIET, contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            code = command(*args)
    except CascadeError as exc:
        return exc.exit_code, (out.getvalue() + str(exc)).strip()
    return code, out.getvalue().strip()


def comment(path: Path, text: str, vote: str | None) -> tuple[int, str]:
    return quietly(comment_command, str(path), text, vote, None)


def decide(path: Path, vote: str, reason: str) -> tuple[int, str]:
    return quietly(decide_command, str(path), vote, reason)


def advance(path: Path) -> tuple[int, str]:
    return quietly(advance_command, str(path), None)


def run_next(path: Path, progress) -> str:
    """Run what is due on the discussion at ``path`` (cascade.api.Runner, stopping where a
    person decides); one line that says what happened. The ledger's lock is held from
    before it is read (another writer's replies count) until the run's last block."""
    with writing_staged(str(path), "cascade ui") as (d, written):
        said = _run_next(d, progress, Runner())
    staging = written.line()
    return f"{said}; {staging[0].lower()}{staging[1:]}" if staging else said


def _run_next(d, progress, runner) -> str:
    if d.protocol.steps.shape.one_wave:
        replies = runner.run_turn(d, progress=progress)
        if not replies:
            return "nobody is pending: no new input since the panel last spoke"
        failed = [f"{r.name}: {r.error}" for r in replies if not r.ok]
        result = d.consensus_result
        said = (f"consensus reached, {result.outcome}" if result.reached else
                f"consensus not reached ({result.reason})")
        return "; ".join([f"{len(replies)} replied", said, *failed])
    done = nothing_to_run(d.state)
    if done is not None:
        return f"{done}: nothing to run"
    result = runner.run(d, auto=False, progress=progress)
    failed = [f"{o.persona.name}: {o.error}" for o in result.failures]
    return "; ".join([f"{d.protocol.title}: {outcome_text(result, topic=not d.source)}", *failed])
