"""Scripted replies for a swarm discussion (seed 001) over the fake endpoint: a panel of
experts proposed by the moderator, then every step of a round, each reply citing message ids
it finds in its own prompt (so a citation is one the persona was really shown, unless a test
overrides it). Shared by tests/test_swarm*.py and bench/swarm.py."""
from __future__ import annotations

import json
import re

from scripted import Scripted

MODE = re.compile(r"(\w+) mode: (\d+)(?: to (\d+))? experts")
SHOWN = re.compile(r"<<<material \w+: (r\d+-msg-\d+) by ([\w-]+)")
EXPERTS = [
    {"id": "db-engineer", "name": "Database Engineer", "expertise": ["Postgres", "replication"],
     "thinkingStyle": "pragmatic", "bias": "prefers proven storage",
     "replyTendency": "shows concrete numbers", "stakes": "pages at 3 a.m. when writes stall",
     "blindSpots": ["application complexity"]},
    {"id": "api-designer", "name": "API Designer", "expertise": ["REST", "event schemas"],
     "thinkingStyle": "user-centred", "bias": "loose coupling first",
     "replyTendency": "sketches interfaces", "stakes": "owns every client integration",
     "blindSpots": ["operational cost"]},
    {"id": "sre", "name": "Site Reliability Engineer", "expertise": ["operations", "backups"],
     "thinkingStyle": "risk-averse", "bias": "fewer moving parts",
     "replyTendency": "asks about failure modes", "stakes": "on call for the event store",
     "blindSpots": ["developer experience"]},
    {"id": "data-scientist", "name": "Data Scientist", "expertise": ["analytics", "replay"],
     "thinkingStyle": "exploratory", "bias": "keep every event forever",
     "replyTendency": "asks for the query patterns", "stakes": "reports built on the events",
     "blindSpots": ["cost of storage"]},
]
TENSIONS = [
    {"between": ["db-engineer", "api-designer"], "axis": "Consistency vs. flexibility",
     "description": "strict schemas against loose coupling"},
    {"between": ["sre", "data-scientist"], "axis": "Simplicity vs. retention",
     "description": "fewer moving parts against keeping everything"},
]


SUMMARY = ("The panel weighed Postgres against a dedicated event store for the write path. "
           "All agreed to avoid two-phase commit and to keep Postgres as the system of record; "
           "they split on whether a write buffer belongs in front of it. The contrarian's "
           "peak-load scenario moved the database engineer towards a buffer, while the site "
           "reliability engineer held that one more moving part costs more on call than it "
           "saves. The recommendation is a benchmark at the expected peak before deciding, "
           "with the simplicity case kept as a minority view that still holds.")


class Swarm(Scripted):
    """``replies[(name, step, round)]`` overrides a reply (round 0: the setup);
    ``recommend[round]`` is the quality gate's recommendation (default: continue before the
    mode's last round, else synthesize); ``overall[round]`` its overall score (default 4);
    ``votes[name]`` the closing vote (default READY); ``experts``: how many the panel
    proposes (default: the mode's most). Records every request as (name, step, round, text)."""

    def __init__(self, fake) -> None:
        self.recommend: dict[int, str] = {}
        self.overall: dict[int, int] = {}
        self.votes: dict[str, str] = {}
        self.experts: int | None = None
        super().__init__(fake)

    def reply(self, name: str, step: str, round_: int, text: str) -> str:
        shown = SHOWN.findall(text)
        ids = [i for i, _ in shown]
        if step == "Panel":
            mode = MODE.search(text)
            high = int(mode.group(3) or mode.group(2)) if mode else 3
            n = self.experts or high
            experts = EXPERTS[:n]
            ids_ = {e["id"] for e in experts}
            tensions = [t for t in TENSIONS if set(t["between"]) <= ids_]
            return json.dumps({"comment": "A panel for the event store.", "panel": {
                "experts": experts, "tensionMap": tensions,
                "problemDefinition": {"statement": "Pick the event store's database.",
                                      "scope": "the write path", "successCriteria": "no loss"}}})
        if step == "Position declarations":
            return json.dumps({"comment": f"{name} thinks it through.",
                               "position": f"{name} prefers option {len(name) % 3} (round {round_})",
                               "confidence": 0.6, "conditions": "under 1,000 writes a second",
                               "wouldChangeIf": "a benchmark says otherwise", "keyRisk": "lock-in"})
        if step == "Moderator framing":
            return json.dumps({"comment": "The fault line is durability against simplicity. "
                               "@db-engineer: what breaks first?", "budget": 5})
        if step == "Arguments":
            return json.dumps({"comment": f"If I understand {ids[0]} right, it holds; but the "
                               "write load says otherwise.", "position": "keep my stance",
                               "references": [{"targetId": ids[0], "relation": "counters",
                                               "comment": "the load grows"}] + [
                                   {"targetId": i, "relation": "supports", "comment": "agreed"}
                                   for i in ids[1:2]],
                               "proposals": ["benchmark at 5,000 writes a second"],
                               "counterpoints": [f"{ids[0]} ignores the write load"],
                               "questions": ["What is the peak write rate?"]})
        if step == "Contrarian stress test":
            return json.dumps({"comment": "Everyone assumes the load stays small.",
                               "counters": ids[:2]})
        if step == "Responses":
            contrarian = [i for i, who in shown if who == "AI-Contrarian"]
            shift = "minor" if name == "AI-Db-Engineer" else "none"
            return json.dumps({"comment": f"{name} responds.", "positionShift": shift,
                               "previousPosition": "Postgres", "currentPosition":
                               "Postgres with a write buffer" if shift != "none" else "Postgres",
                               "trigger": contrarian[-1:], "shiftReason": "the load argument"})
        if step == "Cross-domain analogy":
            return json.dumps({"comment": "Like a city's water supply: reservoirs buffer "
                               "demand; the analogy breaks at replay.", "extends": ids[:1]})
        if step == "Quality gate":
            rec = self.recommend.get(round_, "continue")
            overall = self.overall.get(round_, 4)
            return json.dumps({"comment": f"Round {round_} was {'weak' if overall < 3 else 'sharp'}.",
                               "scores": {"genuineDisagreement": 4, "evidenceQuality": 3,
                                          "steelManning": 4, "novelInsights": 3,
                                          "positionEvolution": 3, "overall": overall},
                               "recommendation": rec, "agreements": [
                                   {"point": "avoid 2PC", "supporters": ["db-engineer", "sre"],
                                    "strength": "strong"}],
                               "summary": (f"Round {round_}: the panel agreed to avoid 2PC "
                                           "and split on whether a write buffer belongs in "
                                           "front of Postgres; the contrarian's load "
                                           "argument moved the database engineer a little, "
                                           "while the others held their positions."),
                               "insights": [{"insight": "the peak load decides the buffer",
                                             "novelty": "high", "source": ids[-1]}],
                               "disagreements": [{"point": "buffer or not", "positions": [
                                   {"stance": "a buffer", "advocates": ["db-engineer"]},
                                   {"stance": "no buffer", "advocates": ["sre"]}]}],
                               "openQuestions": [f"How many writes a second? (round {round_})"]})
        if step == "Synthesis":
            return json.dumps({
                "comment": "## Resolved by argument\n- Avoid 2PC.\n\n## Unresolved debates\n"
                           "- A write buffer or not.",
                "executiveSummary": SUMMARY, "supports": ids[:2],
                "insights": [{"title": "A write buffer helps",
                              "description": "It absorbs the peaks the contrarian named.",
                              "confidence": "medium", "confidenceReason": "one benchmark",
                              "evidence": [{"messageId": i, "summary": "cited"}
                                           for i in ids[:2]]}],
                "minorityReport": [{"position": "Keep one moving part", "advocate": "sre",
                                    "reason": "outnumbered", "stillValid": True,
                                    "note": "the simplicity case stands"}],
                "openQuestions": [{"question": "Peak write rate",
                                   "whyOpen": "no measurement yet"}],
                "recommendations": [{"action": "Benchmark Postgres with a buffer",
                                     "confidence": "high", "risk": "a week's work",
                                     "prerequisite": "a load profile"}],
                "metaObservations": "The panel converged early; the contrarian kept it honest."})
        if step == "Resume context":
            return json.dumps({"comment": f"## Theme\nThe event store's database.\n\n"
                               f"## Positions\n- {name} keeps the notes of round {round_}."})
        if step == "Reopening":
            return json.dumps({"comment": "The buffer question was the most productive "
                               "tension; the peak write rate matters most now.",
                               "focus": "the peak write rate and whether a buffer absorbs it"})
        if step == "Closing vote":
            vote = self.votes.get(name, "READY")
            return json.dumps({"comment": f"{vote}: the synthesis holds.", "vote": vote})
        return super().reply(name, step, round_, text)
