"""Scripted replies for a roundtable (seed 003) over the fake endpoint: the facilitator's
question and synthesis, the participants' answers and closing votes, each overridable per
persona, step and round. Shared by tests/test_roundtable*.py and bench/roundtable.py."""
from __future__ import annotations

import json

from scripted import Scripted


class Table(Scripted):
    """``actions[round]``: the synthesis's next_action (default conclude: the rules decide);
    ``conflicts[round]``: its open conflicts ("id: what"); ``confidence[(name, round)]``
    (default 0.7); ``concerns[(name, round)]``; ``consent[(name, round)]`` (default SUPPORT);
    ``votes[name]`` (default READY); ``replies[(name, step, round)]`` overrides any reply.
    Records every request as (name, step, round, text)."""

    def __init__(self, fake) -> None:
        self.actions: dict[int, str] = {}
        self.conflicts: dict[int, list[str]] = {}
        self.confidence: dict[tuple[str, int], float] = {}
        self.concerns: dict[tuple[str, int], list[str]] = {}
        self.consent: dict[tuple[str, int], str] = {}
        self.votes: dict[str, str] = {}
        super().__init__(fake)

    def reply(self, name: str, step: str, round_: int, text: str) -> str:
        if step == "Question":
            return json.dumps({"comment": f"Question {round_}: what matters most now?",
                               "focus": f"focus {round_}"})
        if step == "Answers":
            reply = {"comment": f"{name} reasons about round {round_}.",
                     "position": f"{name} holds position {round_}",
                     "confidence": self.confidence.get((name, round_), 0.7),
                     "concerns": self.concerns.get((name, round_), ["cost"]),
                     "tradeoffs": ["speed vs safety"], "challenge": ""}
            if '"consent":' in text:
                reply["consent"] = self.consent.get((name, round_), "SUPPORT")
                reply["minimumChange"] = ""
            return json.dumps(reply)
        if step == "Synthesis":
            return json.dumps({"comment": f"Synthesis of round {round_}: they converge.",
                               "consensus": [f"point {round_}"],
                               "conflicts": self.conflicts.get(round_, []), "resolved": [],
                               "next_action": self.actions.get(round_, "conclude"),
                               "next_focus": "the rest",
                               "recommendation": "Adopt the converged proposal.",
                               "escalation_reason": ""})
        if step == "Closing vote":
            vote = self.votes.get(name, "READY")
            return json.dumps({"comment": f"{vote} after the roundtable.", "vote": vote})
        return super().reply(name, step, round_, text)
