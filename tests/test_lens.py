"""Auto-invite's pick by topic words (seed 000), in real repositories through `cascade
discuss`, the model calls over HTTP to the fake endpoint: the personas whose lens fits the
topic, never a protocol's role, each with why."""
from __future__ import annotations

import json
import re

import pytest
from test_pcs import Panel

from cascade import Discussion

MIGRATION = "Migrate the orders database from MySQL to PostgreSQL"


@pytest.fixture
def endpoint(repo, fake_llm, monkeypatch):
    monkeypatch.setenv("CASCADE_MODEL", "openai/fake")
    monkeypatch.setenv("CASCADE_API_BASE", fake_llm.url)
    monkeypatch.setenv("CASCADE_BACKOFF", "0.05")
    fake_llm.default(json.dumps({"comment": "A first look.", "vote": "READY"}))
    return fake_llm


def participants_line(out: str) -> str:
    [line] = [ln for ln in out.splitlines() if ln.startswith("Participants: ")]
    return line


def ledger_of(repo, topic: str) -> Discussion:
    slug = re.sub(r"[^a-z0-9]+", "-", topic.lower()).strip("-")
    return Discussion.load(repo / f"discussions/{slug}.discussion.md")


def test_a_database_migration_invites_the_lenses_that_fit_it(repo, cli, endpoint):
    """Seed 000: "If user said "auto-invite" or "auto" -> Infer relevant agents from topic,
    proceed without asking." The synthesizer's pick cannot be used, so the topic's words
    pick: a database migration goes to the personas whose lens names data, not to the UX
    designer and the quality champion, and the output says why each one was picked."""
    panel = Panel(endpoint)
    panel.invite = "no JSON at all"
    code, out, err = cli("discuss", MIGRATION, "--auto-invite")
    assert code == 0, out + err
    assert ledger_of(repo, MIGRATION).participants == ["architect", "security"]
    assert participants_line(out) == (
        "Participants: picked by topic words: architect (database ~ 'Data modeling'), "
        "security (database ~ 'Data protection')")
    assert "picked by topic words: architect (database ~ 'Data modeling')" in \
        ledger_of(repo, MIGRATION).text


def test_a_bare_topic_never_invites_a_protocol_s_role(repo, cli, endpoint):
    """Seed 000: "Infer relevant agents from topic". A topic no persona's lens fits gets the
    default panel, saying so for each one; the swarm's moderator (a voting persona of the
    registry, and a fixed role of a protocol) is never a participant picked by topic."""
    code, out, err = cli("discuss", "Lunch", "--protocol", "phased", "--auto-invite")
    assert code == 0, out + err
    d = ledger_of(repo, "Lunch")
    assert d.participants == ["architect", "security", "pragmatist"]
    assert "moderator" not in d.participants
    fill = "the default panel: no other persona's lens fits the topic"
    assert participants_line(out) == (f"Participants: picked by topic words: architect ({fill}), "
                                      f"security ({fill}), pragmatist ({fill})")


def test_a_repository_persona_whose_lens_fits_comes_first(repo, cli, endpoint):
    """Seed 000: "Infer relevant agents from topic": the repository's own database
    administrator fits a database migration best (two of its words), then the lenses that
    fit one."""
    (repo / ".cascade/personas").mkdir(parents=True)
    (repo / ".cascade/personas/dba.yml").write_text(
        "name: AI-Dba\nalias: dba\nrole: Database Administrator\npersonality: You run the "
        "databases.\nexpertise:\n  - Schema migrations\n  - Replication\ntype: voting\n")
    code, out, err = cli("discuss", MIGRATION, "--protocol", "phased", "--auto-invite")
    assert code == 0, out + err
    assert ledger_of(repo, MIGRATION).participants == ["dba", "architect", "security"]
    assert participants_line(out).startswith(
        "Participants: picked by topic words: dba (migrate ~ 'Schema migrations'; database ~ "
        "'Database Administrator'), architect (database ~ 'Data modeling'), ")
