"""A protocol written as the phased discussion design writes its phases -- ``phases:`` with
``id``, ``title``, ``instructions``, ``voting_mode``, ``auto_trigger`` and ``next`` -- is
read as written: a phased protocol copied from the design runs in the gate. What the engine
cannot honour is one line naming the file and the line, exit 2."""
from __future__ import annotations

import inproc
import pytest
from conftest import git
from inproc import commit
from test_hook import DOC, LEDGER, PANEL, install_plain, loop_repo, script  # noqa: F401

from cascade import Discussion

PROTOCOL = ".cascade/protocols/design.yml"
# The design's phase file, as it gives it ("Phases define the stages of a discussion. Each
# phase has: ID, Title, Instructions, Voting mode, Auto-trigger, Next phase"):
SEED_PHASES = """\
phases:
  - id: initial_feedback
    title: Initial Feedback
    instructions: |
      Share your initial thoughts on the proposal. Focus on:
      - Overall feasibility
      - Major concerns or risks
      - Questions that need answering
    voting_mode: false
    auto_trigger: all_mentioned_responded
    next: detailed_review

  - id: detailed_review
    title: Detailed Review
    instructions: |
      Provide detailed feedback from your area of expertise.
      Raise specific concerns and suggest alternatives.
    voting_mode: false
    auto_trigger: null  # Manual advancement
    next: consensus_vote

  - id: consensus_vote
    title: Consensus Vote
    instructions: |
      Cast your final vote based on the discussion.
      - READY: Approve to proceed
      - CHANGES: Needs modifications (specify what)
      - REJECT: Fundamental issues (explain why)
    voting_mode: true
    auto_trigger: null
    next: null  # Terminal phase
"""
RULES = """\
rules:
  - name: adr
    match: "docs/adr/*.md"
    template: adr
    discussion: "docs/adr/discussions/{stem}.discussion.md"
    participants: [architect, security, pragmatist]
    protocol: design
    consensus: {threshold_ready: 0.67, threshold_reject: 0.01, human_required: false}
"""


def run(repo, *args: str) -> inproc.Ran:
    """``cascade ARGS`` in ``repo``, in this process (tests/inproc.py)."""
    return inproc.cascade(repo, *args)


def test_a_phase_file_copied_from_the_design_runs_in_the_gate(loop_repo, fake_llm):
    repo = loop_repo
    (repo / ".cascade/protocols").mkdir(parents=True)
    (repo / PROTOCOL).write_text(SEED_PHASES)
    (repo / ".ai-rules.yml").write_text(RULES)
    git(repo, "add", ".ai-rules.yml", PROTOCOL)
    git(repo, "commit", "-qm", "the design's phases", "--no-verify")
    install_plain(repo)

    said = run(repo, "explain", DOC)
    assert said.returncode == 0, said.stdout + said.stderr
    assert "Protocol: design, phases: initial_feedback -> detailed_review -> consensus_vote" \
        in said.stdout

    # "voting_mode: false": the first phase's votes are advisory -- READY from all three does
    # not pass; "auto_trigger: all_mentioned_responded" moves it on once all have spoken
    script(fake_llm, ("READY", "READY", "READY"), "first look")
    git(repo, "add", DOC)
    first = commit(repo)
    assert first.returncode == 1, first.out
    assert fake_llm.calls() == 3
    sent = fake_llm.chat_requests[0].text
    assert "Share your initial thoughts on the proposal" in sent  # the phase's instructions
    d = Discussion.load(repo / LEDGER, root=repo)
    assert d.phase == "detailed_review" and d.protocol.name == "design"
    git(repo, "add", LEDGER)

    # "auto_trigger: null # Manual advancement": a person advances, to the voting phase
    moved = run(repo, "advance", LEDGER, "--to", "consensus_vote")
    assert moved.returncode == 0, moved.stdout + moved.stderr
    git(repo, "add", LEDGER)
    script(fake_llm, ("READY", "READY", "CHANGES"), "final vote")
    second = commit(repo)
    assert second.returncode == 0, second.out  # "voting_mode: true": 2 of 3 READY, 0.67
    assert "Cast your final vote based on the discussion" in fake_llm.chat_requests[-1].text
    d = Discussion.load(repo / LEDGER, root=repo)
    assert d.phase == "consensus_vote"
    assert d.votes == {"AI-Architect": "READY", "AI-Security": "READY",
                       "AI-Pragmatist": "CHANGES"}
    assert git(repo, "status", "--porcelain").strip() == ""
    checked = run(repo, "check", "--from-ref", "HEAD~1", "--to-ref", "HEAD")  # CI, no model
    assert checked.returncode == 0, checked.stdout + checked.stderr


BAD = [  # (what replaces what, the line named, the message)
    (("auto_trigger: all_mentioned_responded", "auto_trigger: on_timeout"), 10,
     "phase 'initial_feedback': auto_trigger 'on_timeout' is not one this tool has (allowed: "
     "all_mentioned_responded, all_responded, consensus, or null: a person advances)"),
    (("next: consensus_vote", "next: sign_off"), 20,
     "phase 'detailed_review': next 'sign_off' is no phase (phases: initial_feedback, "
     "detailed_review, consensus_vote; null: the last)"),
    (("next: consensus_vote", "next: initial_feedback"), 20,
     "phase 'detailed_review': next 'initial_feedback' comes back to an earlier phase"),
    (("next: detailed_review", "next: consensus_vote"), 13,
     "phase 'detailed_review' is never reached: no phase's next leads to it from "
     "'initial_feedback'"),
    (("    auto_trigger: null\n    next: null", "    auto_trigger: consensus\n    next: null"),
     30, "phase 'consensus_vote' is the last (next: null): there is no phase for its "
         "auto_trigger to advance to"),
    (("voting_mode: true", "voting_mode: false"), 1,
     "no phase has 'voting_mode: true': no vote would ever count"),
    (("voting_mode: true", "voting_mode: sometimes"), 29,
     "phase 'consensus_vote': voting_mode must be true or false"),
    (("phases:\n", "author: rob\nphases:\n"), 1, "unknown protocol key 'author'"),
    (("phases:\n", "max_rounds: 2\nrounds: {max: 2}\nphases:\n"), 1,
     "'max_rounds' and 'rounds' say the same: give one"),
    (("phases:\n", "steps: []\nphases:\n"), 2,
     "a protocol has 'phases:' (each a phase) or 'steps:', not both"),
]


@pytest.mark.parametrize("change, line, message", BAD, ids=[b[2][:40] for b in BAD])
def test_what_the_engine_cannot_honour_names_the_file_and_line(loop_repo, fake_llm, change, line,
                                                                 message):
    repo = loop_repo
    old, new = change
    assert old in SEED_PHASES
    (repo / ".cascade/protocols").mkdir(parents=True)
    (repo / PROTOCOL).write_text(SEED_PHASES.replace(old, new, 1))
    (repo / ".ai-rules.yml").write_text(RULES)
    git(repo, "add", DOC)
    proc = run(repo, "hook", DOC)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.startswith(f"cascade: {PROTOCOL}:{line}: {message}"), proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    assert fake_llm.calls() == 0
    assert not (repo / LEDGER).exists()
