"""roundtable in the gate: a rule names `protocol: roundtable` (and `strategy:`); the hook
runs the rounds until the roundtable concludes or needs a person. An escalation blocks the
commit with its question and its cause; a person answers `NEXT:` in the ledger and the next
commit goes on; `cascade check` re-derives the outcome without a model."""
from __future__ import annotations

import subprocess
import sys

from conftest import git
from roundtable_script import Table
from test_hook import DOC, LEDGER, RULES, commit, install_plain, loop_repo, run  # noqa: F401

from cascade import Discussion

TABLE_RULES = RULES.replace("participants: [architect, security, pragmatist]",
                            "participants: [architect, security, pragmatist]\n"
                            "    protocol: roundtable\n    strategy: standard")


def cascade(repo, *args: str):
    return run(repo, sys.executable, "-m", "cascade", *args)


def test_the_gate_waits_on_an_escalation_and_moves_on_when_a_person_answers(loop_repo,
                                                                          fake_llm):
    repo = loop_repo
    (repo / ".ai-rules.yml").write_text(TABLE_RULES)
    git(repo, "commit", "-qam", "ADRs go to a roundtable")
    install_plain(repo)
    git(repo, "add", DOC)
    table = Table(fake_llm)
    table.concerns[("AI-Security", 1)] = ["a security review of the key handling"]
    blocked = commit(repo)
    assert blocked.returncode == 1
    assert fake_llm.calls() == 5  # round 1: the question, three answers, the synthesis
    assert ("The roundtable needs a person. Accept the facilitator's recommendation, decide "
            "yourself, or continue? Why: AI-Security names a security concern. (round 1;"
            in blocked.out)
    git(repo, "add", LEDGER)
    again = commit(repo)
    assert again.returncode == 1 and fake_llm.calls() == 5  # waiting: nobody is asked
    with open(repo / LEDGER, "a") as f:
        f.write("\n---\nName: Alice\n\nNEXT: accept the rotation plan is enough\n---\n")
    moved = commit(repo)  # concluded on the recommendation: the closing vote
    assert moved.returncode == 1
    assert fake_llm.calls() == 5 + 3
    d = Discussion.load(repo / LEDGER, root=repo)
    assert d.state.run.outcome == "READY" and d.status == "ACCEPTED"
    step = moved.out.strip().splitlines()[-1].rsplit("then ", 1)[1]
    assert subprocess.run(["bash", "-c", step], cwd=repo).returncode == 0
    landed = commit(repo)
    assert landed.returncode == 0, landed.out
    check = cascade(repo, "check")
    assert check.returncode == 0, check.stdout
