"""`cascade advance` is idempotent: a second close records no second OUTCOME, advancing to the
phase the discussion is in appends nothing; `Discussion.record_outcome` records an outcome
once (until the document changes); `Discussion.advance` to the current phase is a no-op."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import cascade_subprocess

from cascade import Discussion
from cascade.base.errors import CascadeError

LEDGER = "discussions/x.discussion.md"
TURN = {"provenance": {"model": "test"}}  # as a persona's turn writes it


def panel_ready(path: str, vote: str = "READY") -> None:
    d = Discussion.load(path)
    for who in ("AI-Architect", "AI-Security", "AI-Pragmatist"):
        d.add_comment(who, "ok", vote, **TURN)
    d.save()


def outcomes(path: str) -> list[str]:
    """The OUTCOME events, without the stamp each carries (ledger=... n=... sig=...)."""
    return [re.sub(r" ledger=[0-9a-f]+ n=[0-9a-f]+ sig=[0-9a-f]+", "", line)
            for line in Path(path).read_text().splitlines() if line.startswith("<!-- OUTCOME")]


def test_advance_twice_records_one_outcome(repo, cli):
    cli("new", "X")
    assert cli("advance", LEDGER, "--to", "consensus_vote")[0] == 0
    panel_ready(LEDGER)
    code, out, _ = cli("advance", LEDGER)
    assert (code, out.strip()) == (0, f"Closed {LEDGER} with outcome READY.")
    before = Path(LEDGER).read_bytes()
    code, out, err = cli("advance", LEDGER)
    assert (code, err) == (0, "")
    line = next(i for i, text in enumerate(before.decode().splitlines(), 1)
                if text.startswith("<!-- OUTCOME"))
    assert out.strip() == (f"Already closed with outcome READY (line {line}): nothing appended "
                           f"to {LEDGER}.")
    assert Path(LEDGER).read_bytes() == before
    assert outcomes(LEDGER) == ["<!-- OUTCOME: READY -->"]


def test_advance_twice_as_a_user_would(repo):
    """Two processes, as two invocations from a shell."""
    assert cascade_subprocess("new", "X", "--protocol", "review", cwd=repo).returncode == 0
    panel_ready(str(repo / LEDGER))
    first = cascade_subprocess("advance", LEDGER, cwd=repo)
    second = cascade_subprocess("advance", LEDGER, cwd=repo)
    assert (first.returncode, second.returncode) == (0, 0)
    assert "Already closed with outcome READY" in second.stdout
    assert outcomes(str(repo / LEDGER)) == ["<!-- OUTCOME: READY -->"]


def test_advance_to_the_current_phase_is_a_no_op(repo, cli):
    cli("new", "X")
    before = Path(LEDGER).read_bytes()
    code, out, err = cli("advance", LEDGER, "--to", "initial_feedback")
    assert (code, err) == (0, "")
    assert out.strip() == f"Already in phase initial_feedback: nothing appended to {LEDGER}."
    assert Path(LEDGER).read_bytes() == before
    cli("advance", LEDGER, "--to", "consensus_vote")
    after = Path(LEDGER).read_bytes()
    assert cli("advance", LEDGER, "--to", "consensus_vote")[0] == 0
    assert Path(LEDGER).read_bytes() == after
    assert Path(LEDGER).read_text().count("PHASE-TRANSITION") == 1


def test_closed_without_consensus_now_is_a_no_op(repo, cli):
    """Closed READY, then a person voted CHANGES: advance does not re-close, nor fail."""
    cli("new", "X", "--protocol", "review")
    panel_ready(LEDGER)
    cli("advance", LEDGER)
    cli("comment", LEDGER, "Wait.", "--vote", "CHANGES", "--author", "Rob")
    cli("comment", LEDGER, "No.", "--vote", "CHANGES", "--author", "Ann")
    before = Path(LEDGER).read_bytes()
    code, out, _ = cli("advance", LEDGER)
    assert code == 0 and "Already closed with outcome READY" in out
    assert Path(LEDGER).read_bytes() == before


def test_a_different_outcome_is_recorded(repo, cli):
    cli("new", "X", "--protocol", "review")
    panel_ready(LEDGER)
    cli("advance", LEDGER)
    panel_ready(LEDGER, "REJECT")  # the panel changed its mind on the same revision
    code, out, _ = cli("advance", LEDGER)
    assert (code, out.strip()) == (0, f"Closed {LEDGER} with outcome REJECT.")
    assert outcomes(LEDGER) == ["<!-- OUTCOME: READY -->", "<!-- OUTCOME: REJECT -->"]
    assert cli("advance", LEDGER)[0] == 0
    assert len(outcomes(LEDGER)) == 2


def test_record_outcome_once_in_the_python_api(tmp_path):
    d = Discussion.create("T", path=tmp_path / "t.discussion.md", root=tmp_path,
                          protocol="review")
    with pytest.raises(CascadeError, match="refusing to write a OUTCOME event that does not "
                                           "hold: the discussion does not reach READY there"):
        d.record_outcome("READY")  # nobody voted: an outcome only where the votes reach it
    for who in ("AI-Architect", "AI-Security", "AI-Pragmatist"):
        d.add_comment(who, "ok", "READY", **TURN)
    assert d.record_outcome("READY") is True
    assert d.record_outcome("READY") is False  # pending, not saved yet: still once
    assert d.record_outcome("ready") is False
    d.save()
    d = Discussion.load(tmp_path / "t.discussion.md", root=tmp_path)
    assert d.record_outcome("READY") is False
    assert d.text.count("<!-- OUTCOME") == 1
    d.add_event("SOURCE-REVISION", "abc123", path="docs/x.md")  # a new revision reopens it
    assert d.status == "OPEN"
    for who in ("AI-Architect", "AI-Security", "AI-Pragmatist"):
        d.add_comment(who, "still ok", "READY",
                      provenance={"model": "test", "revision": "abc123", "seen": "all"})
    assert d.record_outcome("READY") is True
    assert d.status == "ACCEPTED"
    assert d.text.count("<!-- OUTCOME") == 2


def test_discussion_advance_to_the_current_phase_appends_nothing(tmp_path):
    d = Discussion.create("T", path=tmp_path / "d.discussion.md", root=tmp_path)
    text = d.text
    assert d.advance("initial_feedback") == "initial_feedback"
    assert d.text == text
    assert d.advance() == "detailed_review"
    assert d.text.count("PHASE-TRANSITION") == 1
