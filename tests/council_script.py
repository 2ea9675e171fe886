"""Scripted replies for a council (seed 004) over the fake endpoint: each advisor's advice per
round and the referee's verdict, overridable per persona, step and round. Shared by
tests/test_council*.py and bench/council.py."""
from __future__ import annotations

import json

from scripted import Scripted


class Council(Scripted):
    """``verdict`` (default READY) is the referee's (or the meta-arbiter's); in D/P mode each
    group's texts carry its letter (``D-idea-1-1``, ``P-top-1``: a packet's top idea,
    ``D-private-1``: what must not cross); ``replies[(name, step, round)]``
    overrides any reply. Records every request as (name, step, round, text)."""

    def __init__(self, fake) -> None:
        self.verdict = "READY"
        super().__init__(fake)

    def reply(self, name: str, step: str, round_: int, text: str) -> str:
        if step == "Advice":
            return json.dumps({"comment": f"{name} argues in round {round_}.",
                               "position": f"{name} advises plan {round_}",
                               "shift": "none" if round_ == 1 else "minor"})
        if step == "Ideation":
            group = name.split("-")[1]  # D or P
            return json.dumps({"comment": f"{name} ideas in round {round_}.",
                               "ideas": [f"{group}-idea-{round_}-{i}" for i in (1, 2, 3)]})
        if step == "Assessment":
            group = name.split("-")[1]
            return json.dumps({
                "comment": f"{name} assessment in round {round_}: {group}-private-{round_}.",
                "shortlist": [{"idea": f"{group}-idea-{round_}-{i}",
                               "scores": {"novelty": 3, "feasibility": 4, "leverage": i + 2,
                                          "clarity": 4, "evidence": 3},
                               "decision": "advance" if i == 1 else "hold"} for i in (1, 2)],
                "bridge": {"top_ideas": [f"{group}-top-{round_}"],
                           "fragile_assumptions": [f"{group}-assumes-{round_}"],
                           "key_questions": [f"{group}-asks-{round_}"],
                           "themes": [f"{group}-theme-{round_}"],
                           "do_not_do": [f"{group}-avoid-{round_}"]}})
        if step in ("Verdict", "Merge"):
            return json.dumps({"comment": "## Positions\nTwo.\n\n## Verdict\nGo.\n\n"
                               "## Minority view\nThe skeptic's.", "verdict": self.verdict,
                               "minority": "Wait for the load test."})
        return super().reply(name, step, round_, text)
