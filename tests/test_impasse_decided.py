"""An impasse, then a person's decision (`cascade decide`): the decision in force is the
outcome, and every surface says so from the one answer the state derives
(cascade.protocol.state.Conclusion) -- the record's outcome line, `cascade status` (text
and --json) and `cascade run` (which starts no more rounds) -- while the impasse stays in
the history: "impasse at round 3, then decided READY by ... (line L)". Real repositories,
the real commands and hook, every model call over HTTP to the fake endpoint.

pcs standalone (a topic), pcs reviewing a document in the gate, and a protocol added as data
(Delphi, whose outcome is its exit rule's) in the gate. (The bundled `review` protocol counts
votes by thresholds: it ends in CHANGES, never in an impasse.)"""
from __future__ import annotations

import json
from pathlib import Path

import inproc
import pytest
from conftest import git
from inproc import commit
from test_delphi import PANEL as DELPHI_PANEL
from test_delphi import RECORD as DELPHI_RECORD
from test_delphi import Estimates, delphi_repo  # noqa: F401
from test_hook import DOC, LEDGER, loop_repo, run  # noqa: F401
from test_pcs import LEDGER as TOPIC_LEDGER
from test_pcs import RECORD as TOPIC_RECORD
from test_pcs import Panel, discuss, panel  # noqa: F401
from test_pcs_gate import pcs_repo  # noqa: F401

from cascade import Discussion

BY = "Test Person <test@example.com>"
GATE_RECORD = LEDGER.replace(".discussion.md", ".record.md")


def cascade(repo, *args: str):
    """``cascade ARGS`` in ``repo``, in this process (tests/inproc.py)."""
    return inproc.cascade(repo, *args)


def decided_line(repo, ledger: str) -> int:
    decision = Discussion.load(repo / ledger, root=repo).state.decision
    assert decision is not None and decision.in_force
    return decision.line


def agree(record: str, text: str, view: dict, ran: str, outcome: str, history: str,
          status: str) -> None:
    """The record, status (text and --json) and run say the same outcome and history."""
    assert f"**Outcome**: {outcome}: {history}" in record
    assert "## Divergent positions" in record  # the impasse stays in the history
    assert f"## Decision\n\n**{outcome}** by {BY}" in record
    assert f"Status: {status}" in text
    assert f"Consensus: reached, {outcome} ({history})" in text
    assert f": concluded, {outcome}: {history}" in text
    assert "concluded, IMPASSE" not in text and "Waiting for a person" not in text
    assert (view["outcome"], view["status"], view["waiting_for"]) == (outcome, status, None)
    said = view["conclusion"]
    assert (said["outcome"], said["reached"], said["round"], said["history"]) == (
        outcome, "IMPASSE", 3, history)
    assert said["decision"]["by"] == BY and said["decision"]["in_force"] is True
    assert f"{outcome}: {history}: nothing to run" in ran


def test_a_topic_at_impasse_then_decided(repo, cli, panel, fake_llm):
    for r in (1, 2, 3):
        panel.verdicts[("AI-Security", r)] = "REJECT"
    assert discuss(cli)[0] == 1
    why = "impasse after 3 rounds (AI-Security rejected the last synthesis)"
    assert f"**Outcome**: IMPASSE: {why}" in (repo / TOPIC_RECORD).read_text()
    code, out, err = cli("decide", TOPIC_LEDGER, "READY", "--reason", "we take SQLite")
    assert code == 0, out + err
    history = (f"impasse at round 3, then decided READY by {BY} "
               f"(line {decided_line(repo, TOPIC_LEDGER)})")
    record = (repo / TOPIC_RECORD).read_text()
    assert "| 3 (max reached) | Decided READY |" in record
    assert f"**The rounds**: IMPASSE: {why}" in record
    assert "Recommend SQLite with a migration trigger." in record  # what was recommended
    assert "we take SQLite" in record  # the decision's reason
    text = cli("status", TOPIC_LEDGER)[1]
    view = json.loads(cli("status", TOPIC_LEDGER, "--json")[1])["discussions"][0]
    calls, before = fake_llm.calls(), (repo / TOPIC_LEDGER).read_bytes()
    code, ran, err = cli("run", TOPIC_LEDGER)
    assert code == 0, ran + err
    assert fake_llm.calls() == calls and (repo / TOPIC_LEDGER).read_bytes() == before
    agree(record, text, view, ran, "READY", history, "ACCEPTED")
    d = Discussion.load(repo / TOPIC_LEDGER)
    assert [e.value.split()[0] for e in d.events if e.kind == "OUTCOME"] == ["IMPASSE"]
    planned = cli("plan", TOPIC_LEDGER)[1]  # where it stands, as plan says it: no next wave
    assert f"round 3: concluded, READY: {history}" in planned and "next wave" not in planned


def decided_after_impasse(repo: Path, fake, record: str, vote: str, reason: str):
    """The hook ends the rounds in an impasse (the commit is blocked), the impasse is
    committed, then a person decides: (decide's output, the model calls made before it)."""
    assert commit(repo).returncode == 1
    git(repo, "add", LEDGER, record)
    git(repo, "commit", "-qm", "the impasse, recorded", "--no-verify")
    calls = fake.calls()
    decided = cascade(repo, "decide", DOC, vote, "--reason", reason)
    assert decided.returncode == 0, decided.stderr
    return decided, calls


def test_a_document_at_impasse_in_the_gate_then_decided(pcs_repo, fake_llm):
    repo = pcs_repo
    panel = Panel(fake_llm)
    for r in (1, 2, 3):
        panel.verdicts[("AI-Architect", r)] = "REJECT"
    decided, calls = decided_after_impasse(repo, fake_llm, GATE_RECORD, "READY",
                                           "we take SQLite")
    assert f"Staged {LEDGER} {GATE_RECORD}" in decided.stdout  # the record changed too
    history = f"impasse at round 3, then decided READY by {BY} (line {decided_line(repo, LEDGER)})"
    text = cascade(repo, "status", LEDGER).stdout
    view = json.loads(cascade(repo, "status", LEDGER, "--json").stdout)["discussions"][0]
    ran = cascade(repo, "run", DOC)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert fake_llm.calls() == calls
    agree((repo / GATE_RECORD).read_text(), text, view, ran.stdout, "READY", history,
          "ACCEPTED")
    assert (view["gate"]["ok"], view["gate"]["reason"]) == (True, f"{history}: we take SQLite")
    git(repo, "add", LEDGER, GATE_RECORD)
    landed = commit(repo)
    assert landed.returncode == 0, landed.out
    assert fake_llm.calls() == calls
    assert cascade(repo, "check").returncode == 0


def test_an_other_protocol_at_impasse_then_rejected(delphi_repo, fake_llm):
    repo = delphi_repo
    Estimates(fake_llm, {(n, r): d for r in (1, 2, 3)
                         for n, d in zip(DELPHI_PANEL, (10, 60 - 10 * r))})
    decided, calls = decided_after_impasse(repo, fake_llm, DELPHI_RECORD, "REJECT",
                                           "too uncertain to commit to")
    history = (f"impasse at round 3, then decided REJECT by {BY} "
               f"(line {decided_line(repo, LEDGER)})")
    text = cascade(repo, "status", LEDGER).stdout
    view = json.loads(cascade(repo, "status", LEDGER, "--json").stdout)["discussions"][0]
    ran = cascade(repo, "run", DOC)
    assert ran.returncode == 1  # decided, and not READY
    assert fake_llm.calls() == calls
    agree((repo / DELPHI_RECORD).read_text(), text, view, ran.stdout, "REJECT", history,
          "REJECTED")
    git(repo, "add", LEDGER, DELPHI_RECORD)
    blocked = commit(repo)  # the hook and check say the same, and nobody is asked again
    against = f"consensus REJECT: decided against {DOC} ({history})"
    assert blocked.returncode == 1 and against in blocked.out
    assert fake_llm.calls() == calls
    git(repo, "commit", "-qm", "decided against", "--no-verify")
    checked = cascade(repo, "check", "--format", "json")
    assert checked.returncode == 1
    assert [v["verdict"] for v in json.loads(checked.stdout)["verdicts"]
            if v["ledger"] == LEDGER] == [against]


@pytest.mark.parametrize("vote", ["READY", "REJECT"])
def test_a_decision_before_the_rounds_end_stops_them(repo, cli, panel, fake_llm,
                                                     monkeypatch, vote):
    """A run stopped by its budget, then decided: `cascade run` starts no more rounds."""
    monkeypatch.setenv("CASCADE_MAX_CALLS", "3")
    assert discuss(cli)[0] == 1
    monkeypatch.delenv("CASCADE_MAX_CALLS")
    assert cli("decide", TOPIC_LEDGER, vote, "--reason", "enough said")[0] == 0
    history = f"decided {vote} by {BY} (line {decided_line(repo, TOPIC_LEDGER)})"
    calls = fake_llm.calls()
    code, ran, err = cli("run", TOPIC_LEDGER)
    assert code == (0 if vote == "READY" else 1), ran + err
    assert fake_llm.calls() == calls
    assert f"{vote}: {history}: nothing to run" in ran
    view = json.loads(cli("status", TOPIC_LEDGER, "--json")[1])["discussions"][0]
    assert view["outcome"] == vote and view["conclusion"]["reached"] is None
    assert view["conclusion"]["history"] == history
