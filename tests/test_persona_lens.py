"""A persona file describes a lens (who it is, what it looks for); what a turn must answer --
a vote, ACCEPT or REJECT, fields -- comes from the step alone. Read back from the requests
the fake endpoint received: a step that asks ACCEPT/REJECT is never also told to vote READY,
CHANGES or REJECT, and a step that asks no vote names none."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cascade.config.personas import load_persona

REPO = Path(__file__).resolve().parent.parent
VOTE_WORDS = re.compile(r"\b(READY|CHANGES|REJECT|ACCEPT)\b|\bvot(e|es|ing)\b")
ASK = re.compile(r"Reply as (AI-[\w-]+) with")
STEP = re.compile(r"STEP: (\w+), round (\d+)")
TOPIC = "Which queue for the build jobs?"


@pytest.mark.parametrize("path", sorted((REPO / "personas").glob("*.yml")), ids=lambda p: p.stem)
def test_a_bundled_persona_names_no_vote(path):
    persona = load_persona(path)
    for text in (persona.personality, persona.role, *persona.expertise, *persona.concerns):
        found = VOTE_WORDS.search(text)
        assert found is None, f"{path.name}: {found.group(0)!r} in {text!r}"


def _reply(request) -> str:
    step = STEP.search(request.text).group(1)
    if step == "Confirm":
        return json.dumps({"comment": "Accepted.", "vote": "ACCEPT"})
    if step == "Synthesize":
        return json.dumps({"comment": "## Consensus statement\nUse the existing queue.",
                           "diverged": "no"})
    if step == "Challenge":
        return json.dumps({"comment": "The divergence is about load.", "shift": "none"})
    return json.dumps({"comment": "Use the queue we already run."})


def test_only_the_step_asks_for_a_vote(repo, cli, fake_llm, monkeypatch):
    """Propose / Challenge / Synthesize with four voting personas (whose files once promised
    "vote READY, CHANGES, or REJECT"): the confirm step asks ACCEPT or REJECT, in its task,
    and nothing else in the prompt names a vote; the steps before it name none at all."""
    monkeypatch.setenv("CASCADE_MODEL", "openai/fake")
    monkeypatch.setenv("CASCADE_API_BASE", fake_llm.url)
    fake_llm.default(_reply)
    code, out, err = cli("discuss", TOPIC, "--protocol", "pcs", "--participants",
                         "architect,security,pragmatist,perfectionist")
    assert code == 0, out + err
    asked = [(STEP.search(r.text).group(1), ASK.search(r.text).group(1), r)
             for r in fake_llm.chat_requests]
    assert {s for s, _, _ in asked} == {"Propose", "Challenge", "Synthesize", "Confirm"}
    assert {n for s, n, _ in asked if s == "Confirm"} == {
        "AI-Architect", "AI-Security", "AI-Pragmatist", "AI-Perfectionist"}
    for step, name, request in asked:
        system, user = (m["content"] for m in request.messages)
        before, _, task = user.partition("\nYOUR TASK")
        assert "YOUR ROLE: " + name in before
        role = before.split("YOUR ROLE: ", 1)[1]
        assert not VOTE_WORDS.search(role), f"{name}'s role text at {step} names a vote"
        for where, text in (("system prompt", system), ("request", before)):
            words = {m.group(1) for m in VOTE_WORDS.finditer(text) if m.group(1)}
            assert not words, f"{name} at {step}: {words} in the {where}"
        words = {m.group(1) for m in VOTE_WORDS.finditer(task) if m.group(1)}
        assert words == ({"ACCEPT", "REJECT"} if step == "Confirm" else set()), (step, words)


def test_a_repair_asks_for_the_steps_own_form(repo, cli, fake_llm, monkeypatch):
    """A reply that cannot be read is asked once more, restating the form: the step's own
    (a confirmation's ACCEPT or REJECT), never the phase turn's READY, CHANGES or REJECT."""
    monkeypatch.setenv("CASCADE_MODEL", "openai/fake")
    monkeypatch.setenv("CASCADE_API_BASE", fake_llm.url)
    broken: list[str] = []

    def reply(request) -> str:
        last = request.messages[-1]["content"]
        if "Reply again" not in last and STEP.search(request.text).group(1) in (
                "Confirm", "Propose") and ASK.search(request.text).group(1) == "AI-Security":
            broken.append(STEP.search(request.text).group(1))
            return "I accept, more or less."
        return _reply(request)

    fake_llm.default(reply)
    code, out, err = cli("discuss", TOPIC, "--protocol", "pcs", "--participants",
                         "architect,security")
    assert code == 0, out + err
    assert broken == ["Propose", "Confirm"]
    repairs = {STEP.search(r.text).group(1): r.messages[-1]["content"]
               for r in fake_llm.chat_requests if "Reply again" in r.messages[-1]["content"]}
    assert set(repairs) == {"Propose", "Confirm"}
    assert '"vote": "ACCEPT" | "REJECT"' in repairs["Confirm"]
    assert repairs["Propose"].endswith('{"comment": "<markdown>"}.')
    for text in repairs.values():
        assert "READY" not in text and "CHANGES" not in text


DOC = "docs/adr/0001-use-sqlite.md"
LEDGER = "docs/adr/discussions/0001.discussion.md"


@pytest.mark.parametrize("protocol, phase, counted", [("review", "review", True),
                                                      ("phased", "initial_feedback", False)])
def test_a_review_turn_is_asked_its_vote_by_its_task_alone(repo, cli, fake_llm, monkeypatch,
                                                          protocol, phase, counted):
    """A review or phased turn: the system prompt (every turn's) names no vote; the task
    asks it, READY, CHANGES or REJECT, said advisory in a phase whose votes do not count;
    a background persona is told it does not vote, and what it votes is not asked."""
    monkeypatch.setenv("CASCADE_MODEL", "openai/fake")
    monkeypatch.setenv("CASCADE_API_BASE", fake_llm.url)
    fake_llm.default(json.dumps({"comment": "Fine.", "vote": "READY"}))
    (repo / "docs/adr").mkdir(parents=True)
    (repo / DOC).write_text("# Use SQLite\n\nWe will store events in SQLite.\n")
    code, _, err = cli("new", "Use SQLite", "--template", "adr", "--protocol", protocol,
                       "--source", DOC, "-o", LEDGER, "--participants", "architect,researcher")
    assert code == 0, err
    code, out, err = cli("turn", LEDGER, "@architect", "@researcher")
    assert code == 0, out + err
    asked = {ASK.search(r.text).group(1): r.messages for r in fake_llm.chat_requests}
    assert set(asked) == {"AI-Architect", "AI-Researcher"}
    for name, (system, user) in asked.items():
        assert not {m.group(1) for m in VOTE_WORDS.finditer(system["content"]) if m.group(1)}
        text = user["content"]
        assert text.startswith("STEP: ")
        task = text.split("\nYOUR TASK", 1)[1]
        if name == "AI-Architect":
            assert '"READY" if the document can be accepted as it is' in task
            assert ("advisory" in task) is not counted
        else:
            assert "You do not vote" in text and '"vote": null' in task
            assert not {m.group(1) for m in VOTE_WORDS.finditer(task) if m.group(1)}
    assert phase in (repo / LEDGER).read_text()
