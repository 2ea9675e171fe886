"""Scripted replies for a council (seed 004) over the fake endpoint: each advisor's advice per
round and the referee's verdict, overridable per persona, step and round. Shared by
tests/test_council*.py and bench/council.py."""
from __future__ import annotations

import json
import re

ASK = re.compile(r"Reply as (AI-[\w-]+) with")
STEP = re.compile(r"STEP: ([^,\n]+), round (\d+)")


class Council:
    """``verdict`` (default READY) is the referee's; ``replies[(name, step, round)]``
    overrides any reply. Records every request as (name, step, round, text)."""

    def __init__(self, fake) -> None:
        self.verdict = "READY"
        self.replies: dict[tuple[str, str, int], str] = {}
        self.seen: list[tuple[str, str, int, str]] = []
        fake.default(self)

    def __call__(self, request) -> str:
        text = request.text
        name = ASK.search(text).group(1)
        m = STEP.search(text)
        step, round_ = m.group(1).strip(), int(m.group(2))
        self.seen.append((name, step, round_, text))
        if (name, step, round_) in self.replies:
            return self.replies[(name, step, round_)]
        if step == "Advice":
            return json.dumps({"comment": f"{name} argues in round {round_}.",
                               "position": f"{name} advises plan {round_}",
                               "shift": "none" if round_ == 1 else "minor"})
        if step == "Verdict":
            return json.dumps({"comment": "## Positions\nTwo.\n\n## Verdict\nGo.\n\n"
                               "## Minority view\nThe skeptic's.", "verdict": self.verdict,
                               "minority": "Wait for the load test."})
        raise AssertionError(f"unscripted step {step!r} for {name}")

    def asked(self, step: str | None = None) -> list[tuple[str, str, int]]:
        return [(n, s, r) for n, s, r, _ in self.seen if step is None or s == step]
