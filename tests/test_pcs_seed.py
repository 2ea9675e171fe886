"""Propose / Challenge / Synthesize as seed 000 describes it, and how its rounds read: the
confirmation written as it was asked, the confirm step shown the key points of the earlier
phases, the propose table marking agreement and divergence, the seed's default pair, and
round summaries that carry the declared positions -- standalone, every model call over HTTP
to the fake endpoint."""
from __future__ import annotations

import pytest
from test_pcs import LEDGER, POSITIONS, TOPIC, Panel, discuss  # noqa: F401

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
    assert [(c.provenance["verdict"], c.vote) for c in blocks] == [
        ("ACCEPT", None), ("REJECT", None), ("ACCEPT", None), ("ACCEPT", None)]
    for c in blocks:
        assert c.body.endswith(f"**Confirm:** {c.provenance['verdict']}")
    assert Discussion.load(repo / LEDGER).state.run.outcome == "READY"
