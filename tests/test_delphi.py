"""A Delphi protocol added as data alone: one YAML in the repository's .cascade/protocols/ --
anonymous estimates over rounds, each round summarized without names -- whose convergence
is the registered exit rule ``converged`` with its parameters. Nothing of the engine knows
it. In the gate (the real hook, every model call over HTTP to the fake endpoint) it plans,
runs, reaches READY when the estimates converge and IMPASSE when they do not by its round
cap; status, the record and ``cascade check`` explain both by the rule's own words."""
from __future__ import annotations

import json

import inproc
import pytest
from conftest import git
from inproc import commit
from scripted import Scripted
from test_hook import DOC, LEDGER, RULES, install_plain, loop_repo  # noqa: F401

from cascade import Discussion

# These tests follow the hook's hints step by step (git add by git add): staging off.
pytestmark = pytest.mark.usefixtures("hook_stages_nothing")

RECORD = LEDGER.replace(".discussion.md", ".record.md")
DELPHI = """\
name: delphi
title: Delphi estimate
description: Anonymous estimates over rounds until they converge.
participants: {min: 2, max: 5, default: 3}
roles:
  - {id: panelist, title: Panelist, from: participants, tier: fast}
  - {id: facilitator, title: Facilitator, persona: synthesizer, tier: strong}
rounds:
  max: 3
  exit: {converged: {field: estimate, within: 2}}
  on_impasse: recommend
steps:
  - id: estimate
    title: Estimate
    role: panelist
    visibility: synthesis
    sees: [summarize]       # the last round's anonymous summary, nothing else
    words: 80
    fields: {estimate: {number: [0, 365], fallback: 0}}
    instructions: Estimate the days the work takes in "estimate"; your reasons in "comment".
  - id: summarize
    title: Summary
    role: facilitator
    visibility: all
    words: 150
    instructions: Summarize the round's estimates without naming anyone (range, median, reasons).
  - id: recommend
    title: Recommendation
    role: facilitator
    visibility: all
    words: 150
    instructions: The estimates did not converge. Recommend how a person should decide.
"""
DELPHI_RULES = RULES.replace("participants: [architect, security, pragmatist]",
                             "participants: [architect, security]\n    protocol: delphi")
PANEL = ("AI-Architect", "AI-Security")


class Estimates(Scripted):
    """Each panelist's estimate per round (``days[(name, round)]``); an anonymous summary."""

    def __init__(self, fake, days: dict[tuple[str, int], int]) -> None:
        super().__init__(fake)
        self.days = days

    def reply(self, name: str, step: str, round_: int, text: str) -> str:
        if step == "Estimate":
            days = self.days[(name, round_)]
            return json.dumps({"comment": f"About {days} days: the schema work dominates.",
                               "estimate": days})
        if step == "Summary":
            values = sorted(self.days[(n, round_)] for n in PANEL)
            return json.dumps({"comment": f"Round {round_}: estimates from {values[0]} to "
                                          f"{values[-1]} days; the schema work dominates."})
        if step == "Recommendation":
            return json.dumps({"comment": "Take the higher estimate and review it after a "
                                          "spike on the schema."})
        return super().reply(name, step, round_, text)


def cascade(repo, *args: str):
    """``cascade ARGS`` in ``repo``, in this process (tests/inproc.py)."""
    return inproc.cascade(repo, *args)


@pytest.fixture
def delphi_repo(loop_repo, fake_llm):
    repo = loop_repo
    (repo / ".cascade/protocols").mkdir(parents=True)
    (repo / ".cascade/protocols/delphi.yml").write_text(DELPHI)
    (repo / ".ai-rules.yml").write_text(DELPHI_RULES)
    git(repo, "add", ".ai-rules.yml", ".cascade/protocols/delphi.yml")
    git(repo, "commit", "-qm", "estimates are discussed with delphi")
    install_plain(repo)
    git(repo, "add", DOC)
    return repo


def status_of(repo) -> tuple[str, dict]:
    text = cascade(repo, "status", LEDGER)
    data = cascade(repo, "status", LEDGER, "--json")
    assert text.returncode == data.returncode == 0, text.stderr + data.stderr
    return text.stdout, json.loads(data.stdout)["discussions"][0]


def check_verdict(repo) -> tuple[int, str]:
    proc = cascade(repo, "check", "--format", "json")
    verdicts = json.loads(proc.stdout)["verdicts"]
    return proc.returncode, next(v["verdict"] for v in verdicts if v["ledger"] == LEDGER)


def test_plan_names_the_rule_and_its_parameters(delphi_repo, fake_llm):
    code = cascade(delphi_repo, "plan", "--protocol", "delphi", "--participants",
                   "architect,security")
    assert code.returncode == 0, code.stderr
    assert "by rule 'converged' (field: estimate, within: 2)" in code.stdout
    assert "outcome: by rule 'exit'; not READY: step 'recommend' first" in code.stdout
    assert fake_llm.calls() == 0


def test_estimates_that_converge_are_ready(delphi_repo, fake_llm):
    repo = delphi_repo
    panel = Estimates(fake_llm, {("AI-Architect", 1): 20, ("AI-Security", 1): 40,
                                 ("AI-Architect", 2): 28, ("AI-Security", 2): 30})
    blocked = commit(repo)  # the hook runs the rounds: the ledger and record to add
    assert blocked.returncode == 1, blocked.out
    assert [(s, r) for _, s, r in panel.asked()] == [
        ("Estimate", 1), ("Estimate", 1), ("Summary", 1),
        ("Estimate", 2), ("Estimate", 2), ("Summary", 2)]  # no recommendation: READY
    for name, step, round_, text in panel.seen:  # anonymous: no panelist sees another's
        if step == "Estimate":
            other = next(n for n in PANEL if n != name)
            assert other not in text and "About" not in text
            assert ("Round 1: estimates from 20 to 40 days" in text) == (round_ == 2)
    why = "the 2 estimate values converged in round 2: spread 2 within 2 (28 to 30, median 29)"
    d = Discussion.load(repo / LEDGER, root=repo)
    assert d.state.result.reached and d.state.result.reason == why
    text, view = status_of(repo)
    assert (view["outcome"], view["round"]) == ("READY", 2)
    assert f"Consensus: reached, READY ({why})" in text
    assert "accepted the synthesis" not in text and "closing vote" not in text
    record = (repo / RECORD).read_text()
    assert f"**Outcome**: READY: {why}" in record
    assert "| Consensus |" in record
    git(repo, "add", LEDGER, RECORD)
    landed = commit(repo)
    assert landed.returncode == 0, landed.out
    code, verdict = check_verdict(repo)
    assert code == 0 and verdict == f"consensus READY ({why})"


def test_estimates_that_never_converge_reach_impasse(delphi_repo, fake_llm):
    repo = delphi_repo
    days = {(n, r): d for r in (1, 2, 3) for n, d in zip(PANEL, (10, 60 - 10 * r))}
    panel = Estimates(fake_llm, days)
    blocked = commit(repo)
    assert blocked.returncode == 1
    assert [(s, r) for _, s, r in panel.asked()][-3:] == [
        ("Estimate", 3), ("Summary", 3), ("Recommendation", 3)]  # on_impasse ran, once
    why = ("impasse after 3 rounds (the 2 estimate values did not converge in round 3: "
           "spread 20, more than 2 (10 to 30, median 20))")
    text, view = status_of(repo)
    assert (view["outcome"], view["round"]) == ("IMPASSE", 3)
    assert f"Consensus: not reached ({why})" in text
    assert "cascade decide" in view["waiting_for"]
    record = (repo / RECORD).read_text()
    assert f"**Outcome**: IMPASSE: {why}" in record
    assert "| Impasse |" in record and "spike on the schema" in record  # the recommendation
    git(repo, "add", LEDGER, RECORD)
    again = commit(repo)  # concluded: nobody is asked again, and the hook says why
    assert again.returncode == 1 and fake_llm.calls() == 10
    assert why in again.out
    git(repo, "commit", "-qm", "the impasse, recorded", "--no-verify")
    code, verdict = check_verdict(repo)  # CI reads the same explanation, with no model
    # ... and the one way out of a concluded discussion: a person decides
    assert code == 1 and verdict == (f"no consensus on {DOC}: {why}; ways out: cascade decide "
                                     f"{DOC} READY --reason '...'")
    assert cascade(repo, "decide", DOC, "READY", "--reason", "we take 30 days").returncode == 0
    git(repo, "add", LEDGER)
    assert commit(repo).returncode == 0
    assert cascade(repo, "check").returncode == 0
