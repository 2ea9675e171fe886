from __future__ import annotations

import sys

from cascade.errors import display_path
from cascade.ledger.discussion import Discussion
from cascade.turns.display import closing_table, failure_lines, progress_for, redaction_lines
from cascade.turns.pending import pending_turns, requested_turns
from cascade.turns.runner import Job, run
from cascade.turns.settings import Settings


def turn(path: str, aliases: list[str]) -> int:
    d = Discussion.load(path)
    d.current_phase  # a ledger naming an unknown phase is a configuration error
    pending = requested_turns(d, aliases) if aliases else pending_turns(d)
    if not pending:
        print(f"{display_path(d.path)}: nobody is pending (no new input since the panel last "
              f"spoke); name personas to ask anyway: cascade turn {path} @alias")
        return 0
    settings = Settings.from_env()
    names = ", ".join(p.persona.name for p in pending)
    print(f"{display_path(d.path)}: asking {names}", flush=True)
    job = Job(d, pending)
    run([job], settings, progress_for())
    for line in redaction_lines(job.outcomes):
        print(line)
    print()
    print(closing_table(job.outcomes))
    if job.advanced_to:
        print(f"\nAdvanced to phase: {job.advanced_to}")
    result = d.consensus_result
    print(f"\nConsensus: {'reached, ' + str(result.outcome) if result.reached else 'not reached'}"
          f" ({result.reason})")
    failures = failure_lines(job.outcomes)
    for line in failures:
        print(line, file=sys.stderr)
    return 1 if failures else 0
