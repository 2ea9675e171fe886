"""pcs in the gate: a rule names `protocol: pcs`; the hook runs its rounds to an outcome
within the commit attempt, lands on consensus, blocks on impasse until `cascade decide`, and
`cascade check` agrees with it on both, without a model. Real repositories, the plain hook run
in this process (tests/inproc.py; a new revision under the real `git commit -a`). Consensus
and impasse in the gate, and a broken panel, are in tests/test_protocol_gates.py, with every
other protocol's."""
from __future__ import annotations

import subprocess

import inproc
import pytest
from conftest import git
from inproc import commit
from test_hook import DOC, LEDGER, RULES, install_plain, loop_repo  # noqa: F401
from test_hook import commit as git_commit
from test_pcs import Panel

from cascade import Discussion

# These tests follow the hook's hints step by step (git add by git add): staging off.
pytestmark = pytest.mark.usefixtures("hook_stages_nothing")

PCS_RULES = RULES.replace("participants: [architect, security, pragmatist]",
                          "participants: [architect, security]\n    protocol: pcs")


def cascade(repo, *args: str):
    return inproc.cascade(repo, *args)


@pytest.fixture
def pcs_repo(loop_repo, fake_llm):
    repo = loop_repo
    (repo / ".ai-rules.yml").write_text(PCS_RULES)
    git(repo, "commit", "-qam", "ADRs are discussed with pcs")
    install_plain(repo)
    git(repo, "add", DOC)
    return repo


def test_impasse_blocks_until_a_person_decides_and_check_agrees(pcs_repo, fake_llm):
    repo = pcs_repo
    panel = Panel(fake_llm)
    for r in (1, 2, 3):
        panel.verdicts[("AI-Architect", r)] = "REJECT"
    blocked = commit(repo)
    assert blocked.returncode == 1
    assert fake_llm.calls() == 22
    git(repo, "add", LEDGER)
    again = commit(repo)  # concluded: nobody is asked again
    assert again.returncode == 1 and fake_llm.calls() == 22
    assert "impasse after 3 rounds" in again.out
    assert "cascade decide" in again.out
    git(repo, "commit", "-qm", "the impasse, recorded", "--no-verify")
    check = cascade(repo, "check")  # CI reads the same verdict, with no model
    assert check.returncode == 1 and "impasse after 3 rounds" in check.stdout
    assert cascade(repo, "decide", DOC, "READY", "--reason", "we take SQLite").returncode == 0
    git(repo, "add", LEDGER)
    landed = commit(repo)
    assert landed.returncode == 0, landed.out
    assert fake_llm.calls() == 22
    assert cascade(repo, "check").returncode == 0


def test_roles_get_their_tier_s_model(loop_repo, fake_llm):
    """`models: {fast, strong}` in the rule: the synthesizer (strong) and the participants
    (fast) are asked with their own model; `cascade plan` shows the same, with no call."""
    repo = loop_repo
    (repo / ".ai-rules.yml").write_text(PCS_RULES + "    models: {fast: openai/small, "
                                        "strong: openai/large}\n")
    git(repo, "commit", "-qam", "tiers")
    install_plain(repo)
    git(repo, "add", DOC)
    Panel(fake_llm)
    assert commit(repo).returncode == 1
    asked = {(r.body["model"], "Reply as AI-Synthesizer" in r.text)
             for r in fake_llm.requests if r.is_chat}
    assert asked == {("small", False), ("large", True)}
    calls = fake_llm.calls()
    plan = cascade(repo, "plan", DOC)
    assert "synthesizer (strong): synthesizer -> openai/large" in plan.stdout
    assert "architect -> openai/small" in plan.stdout and fake_llm.calls() == calls


def test_a_new_text_starts_the_protocol_again_and_ids_go_on(pcs_repo, fake_llm):
    repo = pcs_repo
    Panel(fake_llm)
    assert commit(repo).returncode == 1
    git(repo, "add", LEDGER)
    assert commit(repo).returncode == 0
    assert fake_llm.calls() == 7
    (repo / DOC).write_text("# Use SQLite\n\nWe will store events in SQLite, in WAL mode.\n")
    blocked = git_commit(repo, "-a")  # another index file: the real git commit
    assert blocked.returncode == 1
    assert fake_llm.calls() == 14  # round 1 again, for the new text
    d = Discussion.load(repo / LEDGER, root=repo)
    ids = [c.provenance["msg"] for c in d.comments if c.origin == "ai"]
    assert ids == [f"r1-msg-{i:03d}" for i in range(1, 15)]  # gapless, never restarting
    assert d.state.run.round == 1 and d.state.result.reached
    git(repo, "add", LEDGER)
    assert git_commit(repo, "-a").returncode == 0
    assert cascade(repo, "check", "--from-ref", "HEAD~2").returncode == 0


def test_explain_counts_a_step_protocol_s_rounds(pcs_repo, fake_llm):
    out = " ".join(cascade(pcs_repo, "explain", DOC).stdout.split())  # unwrapped
    assert "protocol 'pcs': 7 calls a round, at most 22 in 3 rounds" in out
    assert "@architect, @security, @synthesizer" in out
    assert fake_llm.calls() == 0


@pytest.mark.parametrize("setting, needs", [
    ("human_required: true", "a human READY vote is required"),
    ("persona_votes: advisory", "the panel's votes are advisory"),
])
def test_the_rule_s_people_settings_hold_for_a_step_protocol(loop_repo, fake_llm, setting,
                                                             needs):
    """human_required and an advisory panel are the rule's, whatever its protocol: the pcs
    panel accepting does not land the commit; a person's READY (theirs, in their commit)
    does, and check agrees at each point."""
    repo = loop_repo
    (repo / ".ai-rules.yml").write_text(PCS_RULES.replace("human_required: false", setting)
                                        if "human" in setting else
                                        PCS_RULES.replace("human_required: false",
                                                          f"human_required: false, {setting}"))
    git(repo, "commit", "-qam", "ADRs are discussed with pcs")
    install_plain(repo)
    git(repo, "add", DOC)
    Panel(fake_llm)
    first = commit(repo)
    assert first.returncode == 1, first.out
    step = first.out.strip().splitlines()[-1].rsplit("then ", 1)[1]
    assert subprocess.run(["bash", "-c", step], cwd=repo).returncode == 0
    blocked = commit(repo)
    assert blocked.returncode == 1, blocked.out
    assert needs in blocked.out
    d = Discussion.load(repo / LEDGER, root=repo)
    assert d.state.run.outcome == "READY"  # the panel's verdict, shown as advice
    assert not d.state.result.reached and needs in d.state.result.reason
    git(repo, "commit", "-qm", "the panel's advice, recorded", "--no-verify")
    check = cascade(repo, "check")
    assert check.returncode == 1 and needs in check.stdout, check.stdout
    assert cascade(repo, "comment", LEDGER, "--vote", "READY").returncode == 0  # Test Person
    git(repo, "add", LEDGER)
    landed = commit(repo)
    assert landed.returncode == 0, landed.out
    assert cascade(repo, "check").returncode == 0
