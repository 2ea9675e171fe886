"""Scripted replies for a council (seed 004) over the fake endpoint: each advisor's advice per
round and the referee's verdict, overridable per persona, step and round. Shared by
tests/test_council*.py and bench/council.py."""
from __future__ import annotations

import json

from scripted import Scripted


class Council(Scripted):
    """``verdict`` (default READY) is the referee's; ``replies[(name, step, round)]``
    overrides any reply. Records every request as (name, step, round, text)."""

    def __init__(self, fake) -> None:
        self.verdict = "READY"
        super().__init__(fake)

    def reply(self, name: str, step: str, round_: int, text: str) -> str:
        if step == "Advice":
            return json.dumps({"comment": f"{name} argues in round {round_}.",
                               "position": f"{name} advises plan {round_}",
                               "shift": "none" if round_ == 1 else "minor"})
        if step == "Verdict":
            return json.dumps({"comment": "## Positions\nTwo.\n\n## Verdict\nGo.\n\n"
                               "## Minority view\nThe skeptic's.", "verdict": self.verdict,
                               "minority": "Wait for the load test."})
        return super().reply(name, step, round_, text)
