"""swarm in the gate: a rule names `protocol: swarm` (with `mode:`); the hook generates the
panel and waits at its confirmation unless the rule says `auto: true`; with it, the hook runs
the rounds, the synthesis and the experts' closing vote on the document, whose thresholds
decide, and `cascade check` re-derives the same outcome without a model. Real repositories,
the real hook, the fake endpoint over HTTP."""
from __future__ import annotations

import sys

import pytest
from conftest import git
from swarm_script import Swarm
from test_hook import DOC, LEDGER, RULES, commit, install_plain, loop_repo, run  # noqa: F401

from cascade import Discussion

SWARM_RULES = RULES.replace("participants: [architect, security, pragmatist]",
                            "protocol: swarm\n    mode: lightweight")
BASE = "docs/adr/discussions/0001-use-sqlite"


def cascade(repo, *args: str):
    return run(repo, sys.executable, "-m", "cascade", *args)


def setup_repo(repo, rules: str) -> None:
    (repo / ".ai-rules.yml").write_text(rules)
    git(repo, "commit", "-qam", "ADRs are discussed by a swarm")
    install_plain(repo)
    git(repo, "add", DOC)


def test_the_gate_waits_at_the_panel_then_runs_on_a_person_s_answer(loop_repo, fake_llm):
    repo = loop_repo
    setup_repo(repo, SWARM_RULES)
    swarm = Swarm(fake_llm)
    blocked = commit(repo)
    assert blocked.returncode == 1
    assert fake_llm.calls() == 1  # the panel, proposed; nobody deliberates before it is confirmed
    assert "Start the discussion with this panel? (before round 1; answer in the ledger with " \
           "a line NEXT: start|modify|mode; recommended: start)" in blocked.out
    d = Discussion.load(repo / LEDGER, root=repo)
    assert d.header.extra["mode"] == "lightweight" and not d.header.participants
    again = commit(repo)  # still waiting: asks no one
    assert again.returncode == 1 and fake_llm.calls() == 1
    with open(repo / LEDGER, "a") as f:
        f.write("\n---\nName: Alice\n\nNEXT: start\n---\n")
    blocked = commit(repo)  # round 1, then the next action waits for a person
    assert blocked.returncode == 1
    assert "What next after this round? (round 1;" in blocked.out
    assert [s for _, s, _ in swarm.asked()].count("Position declarations") == 2
    assert fake_llm.calls() == 1 + 9


def test_the_gate_with_auto_runs_to_the_closing_vote_and_lands(loop_repo, fake_llm):
    repo = loop_repo
    setup_repo(repo, SWARM_RULES + "    auto: true\n")
    Swarm(fake_llm)
    landed = commit(repo)  # the ledger, its record and artifacts are staged: one commit
    assert landed.returncode == 0, landed.out
    calls = 1 + 2 * 9 + 1 + 2  # panel, two lightweight rounds, synthesis, two votes
    assert fake_llm.calls() == calls
    d = Discussion.load(repo / LEDGER, root=repo)
    assert d.state.result.reached and d.state.run.outcome == "READY"
    assert d.status == "ACCEPTED"
    committed = git(repo, "show", "--name-only", "--format=", "HEAD").split()
    for suffix in (".discussion.md", ".record.md", ".argument-graph.json", ".synthesis.md",
                   ".open-questions.md", ".position-evolution.md", ".progress.md"):
        assert BASE + suffix in committed, suffix
    assert git(repo, "status", "--porcelain").strip() == ""
    check = cascade(repo, "check")  # CI re-derives the outcome, no model
    assert check.returncode == 0, check.stdout
    status = cascade(repo, "status", LEDGER, "--json")
    assert '"outcome": "READY"' in status.stdout


def test_a_closing_vote_short_of_the_threshold_blocks_and_check_agrees(loop_repo, fake_llm):
    repo = loop_repo
    setup_repo(repo, SWARM_RULES + "    auto: true\n")
    swarm = Swarm(fake_llm)
    swarm.votes["AI-Api-Designer"] = "CHANGES"  # 1 of 2 READY: short of 0.67
    blocked = commit(repo)
    assert blocked.returncode == 1
    assert "round 2, Closing vote: AI-Api-Designer: CHANGES" in blocked.out
    d = Discussion.load(repo / LEDGER, root=repo)
    assert d.state.run.outcome == "CHANGES" and not d.state.result.reached
    git(repo, "add", "-A")
    again = commit(repo)
    assert again.returncode == 1 and "closing vote after round 2" in again.out
    git(repo, "commit", "-qm", "recorded", "--no-verify")
    check = cascade(repo, "check")
    assert check.returncode == 1 and "closing vote after round 2" in check.stdout


@pytest.mark.parametrize("line,message", [
    ("    mode: huge", "protocol 'swarm' has no mode 'huge' (modes: lightweight, standard, deep)"),
])
def test_a_rule_with_an_unknown_mode_is_refused_at_its_line(loop_repo, fake_llm, line, message):
    repo = loop_repo
    (repo / ".ai-rules.yml").write_text(SWARM_RULES.replace("    mode: lightweight", line))
    git(repo, "commit", "-qam", "a bad mode", "--no-verify")
    install_plain(repo)
    git(repo, "add", DOC)
    blocked = commit(repo)
    assert blocked.returncode != 0
    assert ".ai-rules.yml:7: rule 'adr': " in blocked.out and message in blocked.out
    assert fake_llm.calls() == 0
