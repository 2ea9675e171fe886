"""A protocol's steps as a discussion with the given options runs them, for the engine's
tests: ``strategy`` names a strategy or a flow, whichever word the protocol's go by."""
from __future__ import annotations

from cascade.protocol.options import Options, specialize
from cascade.protocol.spec import Steps


def steps_for(steps: Steps, mode: str | None = None, cap: int | None = None,
              strategy: str | None = None) -> Steps:
    kind = steps.strategies[0].kind if steps.strategies else "strategy"
    return specialize(steps, Options.of(cap, mode=mode, **{kind: strategy}))
