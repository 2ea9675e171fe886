"""Who gave a direction, as the models are told it: the protocol's own schedule and rules,
``--auto`` taking a recommended choice, or a person -- never "a person" for what cascade
decided itself. Standalone runs over HTTP to the fake endpoint."""
from __future__ import annotations

from pathlib import Path

import pytest
from council_script import Council
from roundtable_script import Table
from test_roundtable import NAMES, create, step_run
from test_roundtable import answer as answer_as_alice
from test_roundtable import discuss as roundtable

pytestmark = pytest.mark.usefixtures("hook_stages_nothing")

PERSON = "A person gave this direction"
HEADER = "The direction for this step, each part with who gave it"


@pytest.fixture
def env(repo, fake_llm, monkeypatch):
    monkeypatch.setenv("CASCADE_MODEL", "openai/fake")
    monkeypatch.setenv("CASCADE_API_BASE", fake_llm.url)
    monkeypatch.setenv("CASCADE_BACKOFF", "0.05")
    return fake_llm


def test_a_flow_s_phase_is_the_protocol_s_schedule(repo, cli, env):
    """Seed 004: "ROUND 2..N-1: Respawn all 3 in parallel (rebuttal prompt)" -- the
    council's schedule picks the rebuttal, no person: the prompt says so."""
    council = Council(env)
    assert cli("discuss", "Should we rewrite the billing service?", "--protocol", "council",
               "--rounds", "3", "--auto")[0] == 0
    for name, step, round_, text in council.seen:
        if step == "Advice":
            assert PERSON not in text and HEADER in text
            assert ("From the protocol's schedule (no person decided): Parallel flow, phase "
                    f"{round_} of 3:") in text


def test_a_probing_round_is_the_protocol_s_rule(repo, cli, env):
    """Seed 003: a consensus that came too easily gets a probing round -- the protocol's
    rule gave that direction, not a person."""
    table = Table(env)
    text = (Path(__file__).resolve().parent.parent / "protocols/roundtable.yml").read_text()
    folder = repo / ".cascade/protocols"
    folder.mkdir(parents=True)
    (folder / "roundtable.yml").write_text(text.replace("rounds: {min: 3,", "rounds: {min: 1,"))
    for name in NAMES:
        table.confidence[(name, 1)] = 0.9
        table.confidence[(name, 2)] = 0.9
    assert roundtable(cli, "standard", "--auto")[0] == 0
    probe = next(t for n, s, r, t in table.seen if (s, r) == ("Question", 2))
    assert PERSON not in probe
    assert "From cascade, by the protocol's rule (no person decided): a probing round" in probe


def test_auto_says_it_took_the_recommended_choice(repo, cli, env):
    """Seed 003, Escalation Logic: "3. Ask user to: accept recommendation, provide own
    decision, or continue discussion / 4. Record user decision in session file" -- with
    --auto no user was asked: the closing vote (on a document) is told cascade --auto took
    the choice."""
    table = Table(env)
    table.actions = {1: "escalate"}
    (repo / "docs").mkdir()
    (repo / "docs/versioning.md").write_text("# API versioning\n\nVersion in the URL path.\n")
    code, out, err = roundtable(cli, "standard", "--auto", "--source", "docs/versioning.md")
    assert code == 0, out + err
    votes = [t for n, s, r, t in table.seen if s == "Closing vote"]
    assert votes
    for text in votes:
        assert PERSON not in text and HEADER in text
        assert "cascade --auto accepted the facilitator's recommendation" in text


def test_a_person_s_direction_names_the_person(repo, cli, env):
    """Seed 003: "Record user decision in session file" -- a person's decision reaches the
    closing vote (on a document) under the person's name."""
    table = Table(env)
    table.actions = {1: "escalate"}
    create(repo, source="docs/versioning.md")
    assert step_run(repo).waiting
    answer_as_alice(repo, "NEXT: decide we version in the URL path")
    assert step_run(repo).outcome == "READY"
    votes = [t for n, s, r, t in table.seen if s == "Closing vote"]
    assert votes and all("Alice decided: we version in the URL path" in t for t in votes)
    assert all(PERSON not in t for t in votes)
