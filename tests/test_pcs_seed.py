"""Propose / Challenge / Synthesize as seed 000 describes it, and how its rounds read: the
confirmation written as it was asked, the confirm step shown the key points of the earlier
phases, the propose table marking agreement and divergence, the seed's default pair, and
round summaries that carry the declared positions -- standalone, every model call over HTTP
to the fake endpoint."""
from __future__ import annotations

import json

import pytest
from test_pcs import LEDGER, POSITIONS, TOPIC, Panel, discuss
from visibility import visible

from cascade import Discussion


@pytest.fixture
def panel(repo, fake_llm, monkeypatch):
    monkeypatch.setenv("CASCADE_MODEL", "openai/fake")
    monkeypatch.setenv("CASCADE_API_BASE", fake_llm.url)
    monkeypatch.setenv("CASCADE_BACKOFF", "0.05")
    return Panel(fake_llm)


def confirmations(repo) -> list:
    d = Discussion.load(repo / LEDGER)
    return [c for c in d.comments if c.provenance.get("step") == "confirm"]


def test_a_confirmation_is_written_as_it_was_asked(repo, cli, panel):
    """Seed 000, SYNTHESIZE: "task: "Do you ACCEPT or REJECT this synthesis: [synthesis]" ...
    success_criteria: "Reply with ACCEPT or REJECT with brief reason"": the block says ACCEPT
    or REJECT, never a READY vote on the document it was not asked for."""
    panel.verdicts[("AI-Security", 1)] = "REJECT"
    code, out, err = discuss(cli, "--rounds", "2")
    assert code == 0, out + err
    text = (repo / LEDGER).read_text()
    assert "VOTE: READY" not in text and "VOTE: REJECT" not in text
    blocks = confirmations(repo)
    # the confirmations of a round are asked at once: their order in the ledger is the order
    # they arrived in
    assert sorted((c.provenance["round"], c.author, c.provenance["verdict"], c.vote)
                  for c in blocks) == [
        ("1", "AI-Architect", "ACCEPT", None), ("1", "AI-Security", "REJECT", None),
        ("2", "AI-Architect", "ACCEPT", None), ("2", "AI-Security", "ACCEPT", None)]
    for c in blocks:
        assert c.body.endswith(f"**Confirm:** {c.provenance['verdict']}")
    assert Discussion.load(repo / LEDGER).state.run.outcome == "READY"


def test_the_confirmation_sees_the_key_points_of_the_earlier_phases(repo, cli, panel):
    """Seed 000, SYNTHESIZE: "Present to all participants: task: "Do you ACCEPT or REJECT
    this synthesis: [synthesis]" context: "[Key points from prior phases]"": each participant
    confirms with the round's positions and challenges in view, the synthesis last (the turn
    it answers)."""
    assert discuss(cli)[0] == 0
    d = Discussion.load(repo / LEDGER)
    msg = {(t.step, t.alias): t.msg for t in d.state.run.turns}
    earlier = {m for (s, _), m in msg.items() if s in ("propose", "challenge")}
    synthesis = msg[("synthesize", "synthesizer")]
    for name, step, round_, text in panel.seen:
        if step == "Confirm":
            seen = visible(text)
            assert set(seen.shown) == earlier | {synthesis}, name
            assert seen.shown[-1] == synthesis
            assert all(p in text for n, p in POSITIONS.items()
                       if n in ("AI-Architect", "AI-Security"))
    refs = {c.provenance["refs"] for c in confirmations(repo)}
    assert refs == {f"responds_to:{synthesis}"}  # it answers the synthesis


def test_the_propose_table_marks_agreed_points_and_divergences(repo, cli, panel):
    """Seed 000, PROPOSE: "Collect all positions. Identify agreements and divergences. Report
    summary of positions to user with table. - Highlight each agent's position. - Highlight
    agreed points. - Highlight divergent views for next phase."""
    panel.replies[("AI-Architect", "Propose", 1)] = json.dumps(
        {"comment": "Durable ordered storage matters most: use Postgres for replication."})
    panel.replies[("AI-Security", "Propose", 1)] = json.dumps(
        {"comment": "Durable ordered storage in one file: SQLite is simpler to audit."})
    code, out, err = discuss(cli)
    assert code == 0, out + err
    d = Discussion.load(repo / LEDGER)
    [table] = [c.body for c in d.comments if c.origin == "tool"
               and c.provenance.get("step") == "propose"]
    assert "| AI-Architect | Durable ordered storage matters most" in table
    assert "**Agreed** (named in every position): durable, ordered, storage" in table
    [divergent] = [line for line in table.splitlines() if line.startswith("**Divergent**")]
    assert divergent.startswith("**Divergent** (answered in Challenge): ")
    assert sorted(divergent.split(": ", 1)[1].split("; ")) == [
        "AI-Architect answers AI-Security", "AI-Security answers AI-Architect"]
    assert "**Agreed** (named in every position): durable, ordered, storage" in out
    challenge = [c for c in d.comments if c.origin == "tool"
                 and c.provenance.get("step") == "challenge"]
    assert "Agreed" not in challenge[0].body  # the positions' table only


def test_a_topic_that_names_no_participants_gets_the_seed_s_default_pair(repo, cli, panel,
                                                                       fake_llm):
    """Seed 000, Initialize Discussion: "Identify participants (default: HyperArch, HyperSan
    if not specified)" -- here the architect and the perfectionist (quality and validation)
    -- unless auto-invite is asked for: "If user said "auto-invite" or "auto" -> Infer
    relevant agents from topic"."""
    code, out, err = cli("discuss", TOPIC)
    assert code == 0, out + err
    assert fake_llm.calls() == 7  # one round; nobody was asked to pick
    assert not [s for _, s, _ in panel.asked() if s == "Invite"]
    d = Discussion.load(repo / LEDGER)
    assert d.participants == ["architect", "perfectionist"]
    assert "Participants @architect, @perfectionist: the protocol's own panel" in (
        repo / LEDGER).read_text()
    code, out, _ = cli("plan", "--protocol", "pcs")
    assert code == 0 and ("participant (fast): architect -> openai/fake, perfectionist -> "
                          "openai/fake") in out


def test_auto_invite_still_asks_the_synthesizer(repo, cli, panel, fake_llm):
    """Seed 000: "If user said "auto-invite" or "auto" -> Infer relevant agents from topic,
    proceed without asking": the default pair gives way to the synthesizer's pick."""
    code, out, err = cli("discuss", TOPIC, "--auto-invite")
    assert code == 0, out + err
    assert Discussion.load(repo / LEDGER).participants == ["security", "pragmatist"]
