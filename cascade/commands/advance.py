from __future__ import annotations

from cascade.errors import CascadeError, display_path
from cascade.loop.governance import open_discussion


def advance(path: str, to: str | None) -> int:
    d = open_discussion(path)
    phase = d.current_phase
    if to is None and phase.next is None:
        # The last phase: closing records the outcome, once there is consensus.
        result = d.consensus_result
        if not result.reached:
            raise CascadeError(f"phase {phase.id!r} is the last phase and there is no consensus "
                               f"yet ({result.reason})", d.path, exit_code=1)
        d.record_outcome(result.outcome or "READY")
        d.save()
        print(f"Closed {display_path(d.path)} with outcome {result.outcome}.")
        return 0
    new_phase = d.advance(to)
    d.save()
    print(f"Advanced to phase: {new_phase}")
    return 0
