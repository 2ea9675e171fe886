"""Decision points of a step protocol: a repository's own protocol (data only) with a step a
person answers. In the gate it blocks with the question in one line until a person answers
in the ledger (`NEXT: <choice>`); a rule's `auto: true` (and `discuss --auto`, or no
terminal) takes the recommended choice and records that it did; the choice steers the round
(`goto`), and `check` re-derives all of it."""
from __future__ import annotations

import json

import inproc
import pytest
from conftest import git
from inproc import commit
from test_hook import DOC, LEDGER, RULES, install_plain, loop_repo  # noqa: F401
from test_pcs import Panel

from cascade import Discussion

# These tests follow the hook's hints step by step (git add by git add): staging off.
pytestmark = pytest.mark.usefixtures("hook_stages_nothing")

TRIAGE = """\
name: triage
title: Triage
participants: {min: 2, max: 2, default: 2}
roles:
  - {id: participant, from: participants}
  - {id: synthesizer, persona: synthesizer, tier: strong}
rounds: {max: 1, exit: all_accept}
steps:
  - {id: propose, title: Propose, role: participant, visibility: blind, words: 40,
     instructions: State your position.}
  - id: next
    title: Next
    role: person
    question: Challenge the positions first, or go straight to the synthesis?
    choices: [challenge, synthesize]
    recommended: challenge
    goto: {synthesize: synthesize}
  - {id: challenge, title: Challenge, role: participant, visibility: all,
     target: most_opposing, instructions: Answer the most opposing view.}
  - {id: synthesize, title: Synthesize, role: synthesizer, visibility: all,
     instructions: Synthesize.}
  - {id: confirm, title: Confirm, role: participant, visibility: synthesis, confirm: true,
     fields: {vote: [ACCEPT, REJECT]}, instructions: ACCEPT or REJECT.}
"""
TRIAGE_RULES = RULES.replace("participants: [architect, security, pragmatist]",
                             "participants: [architect, security]\n    protocol: triage")


def cascade(repo, *args: str):
    """``cascade ARGS`` in ``repo``, in this process (tests/inproc.py)."""
    return inproc.cascade(repo, *args)


def add_protocol(repo) -> None:
    (repo / ".cascade/protocols").mkdir(parents=True, exist_ok=True)
    (repo / ".cascade/protocols/triage.yml").write_text(TRIAGE)


@pytest.fixture
def triage_repo(loop_repo, fake_llm):
    repo = loop_repo
    add_protocol(repo)
    (repo / ".ai-rules.yml").write_text(TRIAGE_RULES)
    git(repo, "add", ".cascade", ".ai-rules.yml")
    git(repo, "commit", "-qm", "triage ADRs")
    install_plain(repo)
    git(repo, "add", DOC)
    return repo


def next_events(repo):
    return [(e.value.split()[0], e.fields.get("auto")) for e in
            Discussion.load(repo / LEDGER, root=repo).events if e.kind == "NEXT"]


def test_the_gate_waits_for_a_person_and_the_answer_steers_the_round(triage_repo, fake_llm):
    repo = triage_repo
    panel = Panel(fake_llm)
    blocked = commit(repo)
    assert blocked.returncode == 1
    assert fake_llm.calls() == 2  # the proposals; then the decision point
    assert ("waiting for a person: Challenge the positions first, or go straight to the "
            "synthesis? (round 1; answer in the ledger with a line NEXT: challenge|synthesize; "
            "recommended: challenge)") in blocked.out
    status = json.loads(cascade(repo, "status", LEDGER, "--json").stdout)["discussions"][0]
    assert status["outcome"] == "WAITING" and status["waiting_for"].startswith("Challenge the")
    git(repo, "add", LEDGER)
    assert commit(repo).returncode == 1 and fake_llm.calls() == 2  # still waiting: no call
    assert cascade(repo, "comment", LEDGER, "NEXT: synthesize (we know the trade-off)"
                   ).returncode == 0
    git(repo, "add", LEDGER)
    blocked = commit(repo)
    assert blocked.returncode == 1
    assert fake_llm.calls() == 5  # no challenge: the synthesis and the two confirmations
    assert [s for _, s, _ in panel.asked()] == ["Propose", "Propose", "Synthesize",
                                                 "Confirm", "Confirm"]
    git(repo, "add", LEDGER)
    landed = commit(repo)
    assert landed.returncode == 0, landed.out
    assert cascade(repo, "check").returncode == 0


def test_rule_auto_takes_the_recommended_choice_and_records_it(triage_repo, fake_llm):
    repo = triage_repo
    (repo / ".ai-rules.yml").write_text(TRIAGE_RULES + "    auto: true\n")
    git(repo, "commit", "-qm", "auto", "--", ".ai-rules.yml")
    Panel(fake_llm)
    blocked = commit(repo)
    assert blocked.returncode == 1
    assert fake_llm.calls() == 7  # propose, challenge (the recommended choice), synthesize...
    assert next_events(repo) == [("challenge", "true")]
    assert "took the recommended choice challenge" in blocked.out
    git(repo, "add", LEDGER)
    assert commit(repo).returncode == 0


def test_discuss_without_a_terminal_takes_the_recommendation(repo, cli, fake_llm, monkeypatch):
    monkeypatch.setenv("CASCADE_MODEL", "openai/fake")
    monkeypatch.setenv("CASCADE_API_BASE", fake_llm.url)
    add_protocol(repo)
    Panel(fake_llm)
    code, out, err = cli("discuss", "Which database?", "--protocol", "triage",
                         "--participants", "architect,security")
    assert code == 0, out + err
    assert "note: Next: took the recommended choice challenge" in out
    d = Discussion.load(repo / "discussions/which-database.discussion.md")
    assert [e.fields.get("auto") for e in d.events if e.kind == "NEXT"] == ["true"]


def test_a_decision_point_is_checked_as_data(repo, cli):
    add_protocol(repo)
    bad = TRIAGE.replace("recommended: challenge", "recommended: wander")
    (repo / ".cascade/protocols/triage.yml").write_text(bad)
    code, _, err = cli("plan", "--protocol", "triage")
    assert code == 2
    assert "triage.yml:16: step 'next': recommended must be one of its choices" in err


SEQUENTIAL = """\
name: relay
title: Relay
participants: {min: 2, max: 3, default: 3}
roles:
  - {id: participant, from: participants}
  - {id: synthesizer, persona: synthesizer, tier: strong}
rounds: {max: 1, exit: all_accept}
steps:
  - {id: propose, title: Propose, role: participant, visibility: sequential,
     instructions: Build on the earlier speakers.}
  - {id: synthesize, title: Synthesize, role: synthesizer, visibility: all,
     instructions: Synthesize.}
  - {id: confirm, title: Confirm, role: participant, visibility: synthesis, confirm: true,
     fields: {vote: [ACCEPT, REJECT]}, instructions: ACCEPT or REJECT.}
"""


def test_a_sequential_step_asks_one_at_a_time_each_seeing_the_earlier(repo, cli, fake_llm,
                                                                      monkeypatch):
    monkeypatch.setenv("CASCADE_MODEL", "openai/fake")
    monkeypatch.setenv("CASCADE_API_BASE", fake_llm.url)
    (repo / ".cascade/protocols").mkdir(parents=True)
    (repo / ".cascade/protocols/relay.yml").write_text(SEQUENTIAL)
    panel = Panel(fake_llm)
    code, out, err = cli("discuss", "Which database?", "--protocol", "relay",
                         "--participants", "architect,security,pragmatist")
    assert code == 0, out + err
    proposals = [(n, t) for n, s, _, t in panel.seen if s == "Propose"]
    assert [n for n, _ in proposals] == ["AI-Architect", "AI-Security", "AI-Pragmatist"]
    from test_pcs import POSITIONS
    for i, (name, text) in enumerate(proposals):
        earlier = [n for n, _ in proposals[:i]]
        for other in ("AI-Architect", "AI-Security", "AI-Pragmatist"):
            shown = POSITIONS[other] in text
            assert shown == (other in earlier), (name, other)
    starts = [r.timestamp for r in fake_llm.requests if r.is_chat][:3]
    assert starts == sorted(starts)  # one after the other


ARGUE = SEQUENTIAL.replace("participants: {min: 2, max: 3, default: 3}",
                           "participants: {min: 2, max: 2, default: 2}").replace(
    "visibility: sequential", "visibility: blind").replace(
    "  - {id: synthesize,", "  - {id: argue, title: Argue, role: participant, visibility: all,\n"
    "     fields: {supports: refs}, instructions: Cite what you build on.}\n"
    "  - {id: synthesize,").replace("name: relay", "name: argue") + "artifacts: [argument-graph]\n"


def test_a_citation_of_a_message_never_shown_is_not_an_edge(repo, cli, fake_llm, monkeypatch):
    monkeypatch.setenv("CASCADE_MODEL", "openai/fake")
    monkeypatch.setenv("CASCADE_API_BASE", fake_llm.url)
    (repo / ".cascade/protocols").mkdir(parents=True)
    (repo / ".cascade/protocols/argue.yml").write_text(ARGUE)
    panel = Panel(fake_llm)
    for name in ("AI-Architect", "AI-Security"):
        panel.replies[(name, "Argue", 1)] = json.dumps(
            {"comment": "Building on both.", "supports": ["r1-msg-001", "r1-msg-002",
                                                          "r9-msg-999"]})
    code, out, err = cli("discuss", "Which database?", "--protocol", "argue",
                         "--participants", "architect,security")
    assert code == 0, out + err
    assert "supports 'r9-msg-999' dropped: not a message it was shown" in out
    d = Discussion.load(repo / "discussions/which-database.discussion.md")
    argue = [c for c in d.comments if c.provenance.get("step") == "argue"]
    assert [c.provenance["refs"] for c in argue] == [
        "supports:r1-msg-001,supports:r1-msg-002"] * 2
    graph = json.loads((repo / "discussions/which-database.argument-graph.json").read_text())
    assert sorted((e["type"], e["to"]) for e in graph["edges"]
                  if e["type"] == "supports") == [("supports", "r1-msg-001")] * 2 + [
        ("supports", "r1-msg-002")] * 2
    asked = [t for _, s, _, t in panel.seen if s == "Argue"]
    assert all('"supports": ["<message id shown above>", ...]' in t for t in asked)
