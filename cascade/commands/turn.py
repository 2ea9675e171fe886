from __future__ import annotations

import shlex
import sys

from cascade.errors import display_path
from cascade.loop.governance import recorded_revision, writing
from cascade.protocol.pending import requested_turns
from cascade.protocol.run import run
from cascade.text import printable
from cascade.turns.display import closing_table, failure_lines, progress_for, redaction_lines
from cascade.turns.settings import Settings


def turn(path: str, aliases: list[str]) -> int:
    with writing(path, "cascade turn") as d:
        return _turn(d, path, aliases)


def _turn(d, path: str, aliases: list[str]) -> int:
    from cascade.errors import CascadeError
    from cascade.protocol.engine import next_wave

    d.current_phase  # a ledger naming an unknown phase is a configuration error
    if d.protocol.stepped is not None:  # its steps say who speaks: the protocol runs
        if aliases:
            raise CascadeError(f"protocol {d.protocol.name!r} asks by its steps, not by name: "
                               f"cascade run {shlex.quote(path)}", d.path)
        from cascade.commands.discuss import run_

        return run_(path, False)
    pending = requested_turns(d, aliases) if aliases else next_wave(d)
    if not pending:
        print(f"{display_path(d.path)}: nobody is pending (no new input since the panel last "
              f"spoke); name personas to ask anyway: cascade turn {shlex.quote(path)} @alias")
        return 0
    settings = Settings.from_env()
    names = ", ".join(p.persona.name for p in pending)
    print(printable(f"{display_path(d.path)}: asking {names}"), flush=True)
    done = run(d, settings, progress_for(causes=False), pending=pending,  # causes: once, below
               source_data=recorded_revision(d))
    for line in redaction_lines(done.outcomes):
        print(line)
    print()
    print(closing_table(done.outcomes))
    if done.advanced:
        print(f"\nAdvanced to phase: {done.advanced}")
    result = d.consensus_result
    reached = f"reached, {result.outcome}" if result.reached else "not reached"
    print(printable(f"\nConsensus: {reached} ({result.reason})"))
    failures = failure_lines(done.outcomes)
    for line in failures:
        print(line, file=sys.stderr)
    return 1 if failures else 0
