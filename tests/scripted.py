"""The common part of the scripted endpoints a protocol's tests use (tests/swarm_script.py,
roundtable_script.py, council_script.py): each request is read for the persona asked
("Reply as AI-X with") and the step and round ("STEP: <Title>, round N", or "before round
1": round 0), recorded, answered by ``replies[(name, step, round)]`` when a test scripted
one, else by the subclass's ``reply``."""
from __future__ import annotations

import re

ASK = re.compile(r"Reply as (AI-[\w-]+) with")
STEP = re.compile(r"STEP: ([^,\n]+), (?:round (\d+)|before round 1)")


class Scripted:
    def __init__(self, fake) -> None:
        self.replies: dict[tuple[str, str, int], str] = {}
        self.seen: list[tuple[str, str, int, str]] = []
        fake.default(self)

    def __call__(self, request) -> str:
        text = request.text
        name = ASK.search(text).group(1)
        m = STEP.search(text)
        step, round_ = m.group(1).strip(), int(m.group(2) or 0)
        self.seen.append((name, step, round_, text))
        if (name, step, round_) in self.replies:
            return self.replies[(name, step, round_)]
        return self.reply(name, step, round_, text)

    def reply(self, name: str, step: str, round_: int, text: str) -> str:
        raise AssertionError(f"unscripted step {step!r} for {name}")

    def asked(self, step: str | None = None) -> list[tuple[str, str, int]]:
        return [(n, s, r) for n, s, r, _ in self.seen if step is None or s == step]
