from __future__ import annotations

from cascade.base.errors import CascadeError, display_path
from cascade.ledger.records import OUTCOME
from cascade.loop.staging import writing_staged


def advance(path: str, to: str | None) -> int:
    """Move a discussion to its next (or the named) phase; in the last phase, record the
    outcome. Idempotent: advancing to the phase it is in, or closing a discussion already
    closed with that outcome, appends nothing and says so (exit 0)."""
    with writing_staged(path, "cascade advance") as (d, written):
        code = _advance(d, to)
    written.say()
    return code


def _advance(d, to: str | None) -> int:
    phase = d.current_phase
    shown = display_path(d.path)
    if to is not None and to == phase:
        print(f"Already in phase {phase}: nothing appended to {shown}.")
        return 0
    if to is None and d.protocol.next_phase(phase) is None:
        # The last phase: closing records the outcome, once there is consensus.
        result = d.consensus_result
        recorded = _recorded_outcome(d)
        if recorded is not None and (not result.reached
                                     or (result.outcome or "READY") == recorded[0]):
            print(f"Already closed with outcome {recorded[0]} (line {recorded[1]}): "
                  f"nothing appended to {shown}.")
            return 0
        if not result.reached:
            raise CascadeError(f"phase {phase!r} is the last phase and there is no consensus "
                               f"yet ({result.reason})", d.path, exit_code=1)
        if d.record_outcome(result.outcome or "READY"):
            d.save()
            print(f"Closed {shown} with outcome {result.outcome}.")
        else:  # the status already says so (a header written closed): nothing to record
            print(f"Already {d.status}: nothing appended to {shown}.")
        return 0
    new_phase = d.advance(to)
    d.save()
    print(f"Advanced to phase: {new_phase}")
    return 0


def _recorded_outcome(d) -> tuple[str, int] | None:
    """The outcome in force (its word and line): the last OUTCOME since the document's last
    revision, while the derived status is closed."""
    if d.status == "OPEN":
        return None
    last = None
    for event in d.events:
        if event.kind == OUTCOME and event.value.split():
            last = (event.value.split()[0].upper(), event.line)
    return last
