"""One wave of a protocol whose run is one wave (its planner asks whoever is due): ask whoever is
pending (or the personas named), print their replies' table and where consensus stands.
``cascade turn`` and ``cascade run``/``discuss`` on such a protocol both end here."""
from __future__ import annotations

import shlex
import sys

from cascade.base.errors import display_path
from cascade.check.governance import recorded_revision
from cascade.protocol.requests import next_wave
from cascade.run.protocol_run import run
from cascade.base.text import printable
from cascade.turns.display import closing_table, failure_lines, progress_for, redaction_lines
from cascade.turns.settings import Settings


def ask_wave(d, path: str, pending=None, rule=None) -> int:
    """Ask ``pending`` (None: whoever the ledger says is pending) on ``d``, with the models
    its ``rule`` gives, as the hook asks them; 1 on a failure."""
    aliases = [r.alias for r in next_wave(d)] if pending is None else \
        [p.persona.alias for p in pending]
    if not aliases:
        print(f"{display_path(d.path)}: nobody is pending (no new input since the panel last "
              f"spoke); name personas to ask anyway: cascade turn {shlex.quote(path)} @alias")
        return 0
    settings = Settings.from_env(d.root)
    names = ", ".join(d.personas.get(a).name for a in aliases)
    print(printable(f"{display_path(d.path)}: asking {names}"), flush=True)
    done = run(d, settings, progress_for(causes=False), pending=pending,  # causes: once, below
               source_data=recorded_revision(d), rule_model=rule.model if rule else None,
               rule_models=rule.models if rule else None)
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
