"""swarm in the gate: a rule names `protocol: swarm` (with `mode:`); the hook generates the
panel and waits at its confirmation unless the rule says `auto: true`; with it, the hook runs
the rounds, the synthesis and the experts' closing vote on the document, whose thresholds
decide, and `cascade check` re-derives the same outcome without a model. Real repositories,
the plain hook run in this process (tests/inproc.py), the fake endpoint over HTTP. The rounds
to the closing vote in the gate, and a rule's unknown mode, are in
tests/test_protocol_gates.py, with every other protocol's."""
from __future__ import annotations

from conftest import git
from inproc import commit
from swarm_script import Swarm
from test_hook import DOC, LEDGER, RULES, install_plain, loop_repo  # noqa: F401

from cascade import Discussion

SWARM_RULES = RULES.replace("participants: [architect, security, pragmatist]",
                            "protocol: swarm\n    mode: lightweight")

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
