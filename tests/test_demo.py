"""``cascade demo`` against the fake endpoint: the loop lands whatever the panel votes, because
the demo's rule makes the panel advisory and the author's vote decides."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import REPO

LEDGER = "docs/adr/discussions/0001-record-events-in-sqlite.discussion.md"
PANEL = ("AI-Architect", "AI-Security", "AI-Pragmatist")


def run_demo(fake_llm, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "CASCADE_MODEL": "openai/fake",
           "CASCADE_API_BASE": fake_llm.url, "CASCADE_BACKOFF": "0.05"}
    return subprocess.run([sys.executable, "-m", "cascade", "demo", *args], capture_output=True,
                          text=True, timeout=300, env=env)


@pytest.mark.parametrize("vote", ["REJECT", "CHANGES", "READY"])
def test_demo_lands_whatever_the_panel_votes(fake_llm, vote):
    for name in PANEL:  # a blocking vote gives its findings, as the step asks
        found = [] if vote == "READY" else [{"severity": "major", "where": "Decision",
                                             "what": f"{name} doubts it"}]
        fake_llm.script(f"Reply as {name} ", json.dumps(
            {"comment": f"{name} says {vote}.", "vote": vote, "findings": found}))
    proc = run_demo(fake_llm)
    out = proc.stdout
    assert proc.returncode == 0, out[-3000:] + proc.stderr[-2000:]
    assert "Traceback" not in out + proc.stderr
    # Blocked first, with the panel's three reviews; then the author answers and it lands.
    assert out.index("blocked") < out.index("Answer as the author (round 1)")
    assert f"AI-Security: {vote} (advisory)" in out
    assert "The commit landed with its ledger." in out
    assert f"Cascade-Consensus: {LEDGER} READY" in out
    # The CI step re-derives the verdict from the commit without a model.
    assert out.index("What CI runs") > out.index("The commit landed")
    # Three first reviews, then security's answer to the author's "@security ...", no more.
    assert fake_llm.calls() == 4
    assert "The demo repository is removed." in out


def test_demo_keep_leaves_a_repository_that_passes_the_check(fake_llm, tmp_path):
    for name in PANEL:
        fake_llm.script(f"Reply as {name} ", json.dumps(
            {"comment": "No.", "vote": "REJECT",
             "findings": [{"severity": "critical", "where": "Decision", "what": "no"}]}))
    proc = run_demo(fake_llm, "--keep")
    assert proc.returncode == 0, proc.stdout[-3000:]
    kept = proc.stdout.rsplit("The demo repository is kept at ", 1)[1].strip().rstrip(".")
    try:
        check = subprocess.run([sys.executable, "-m", "cascade", "check", "--format", "json"],
                               cwd=kept, capture_output=True, text=True,
                               env={**os.environ, "PYTHONPATH": str(REPO)})
        assert check.returncode == 0, check.stdout + check.stderr
        assert subprocess.run(["git", "status", "--porcelain"], cwd=kept, capture_output=True,
                              text=True).stdout == ""
    finally:
        import shutil
        shutil.rmtree(kept, ignore_errors=True)
