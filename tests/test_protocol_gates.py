"""Every protocol in the gate: a rule names the protocol; the hook runs its rounds to an outcome
within the commit attempt, the commit lands when the outcome passes the rule and is blocked
otherwise, a later attempt asks nobody again, and `cascade check` and `cascade status` reach
the same verdict without a model. A rule that breaks the protocol's settings is refused at its
line before anyone is asked.

One scenario, parametrised over the protocols (review, pcs, council in both modes, swarm,
roundtable), each with an outcome that lands and one that does not. Real repositories and git,
the plain hooks, the fake endpoint over HTTP; the hook and the commands run in this process
(tests/inproc.py), the roundtable's refused rule under the real `git commit`. What is particular
to one protocol in the gate stays in its own file (tests/test_pcs_gate.py: impasse and a
person's decision, tiers, a new revision; tests/test_swarm_gate.py: the panel's confirmation;
tests/test_roundtable_gate.py: an escalation; tests/test_council.py: a rule's participants).
"""
from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from typing import Any, Callable

import inproc
import pytest
from conftest import git
from council_script import Council
from inproc import commit
from roundtable_script import Table
from swarm_script import Swarm
from test_hook import DOC, LEDGER, RULES, install_plain, loop_repo, script  # noqa: F401
from test_hook import commit as git_commit
from test_pcs import Panel

from cascade import Discussion

BASE = "docs/adr/discussions/0001-use-sqlite"
RECORD = BASE + ".record.md"
GRAPH = BASE + ".argument-graph.json"

PANEL3 = "participants: [architect, security, pragmatist]"
PCS_RULES = RULES.replace(PANEL3, "participants: [architect, security]\n    protocol: pcs")
COUNCIL_RULES = RULES.replace(PANEL3, "protocol: council\n    flow: parallel")
DP_RULES = COUNCIL_RULES.replace("flow: parallel", "flow: parallel\n    mode: dp\n    rounds: 2")
SWARM_RULES = RULES.replace(PANEL3, "protocol: swarm\n    mode: lightweight\n    auto: true")
TABLE_RULES = RULES.replace(PANEL3, PANEL3 + "\n    protocol: roundtable\n    strategy: standard")
ADVISORS = ("AI-Pragmatist", "AI-Visionary", "AI-Skeptic")


@dataclass
class Case:
    rules: str
    set_up: Callable[[Any], Any]  # scripts the fake endpoint; returns the protocol's script
    calls: int  # the first attempt's calls: the whole protocol to its outcome
    outcome: str  # what the ledger's run records (the panel's tally for review)
    lands: bool
    said: str = ""  # in the first attempt's output
    reason: str = ""  # why it is blocked: in the hook's, check's and status's words alike
    stage: bool = False  # the hook stages what it wrote (the default); else its hint is followed
    hint: str = ""  # the exact step the hook names when it stages nothing
    committed: tuple[str, ...] = ()  # files that land with the ledger
    probe: Callable[[Any, Any, Discussion], None] | None = None  # the protocol's own checks
    extra: dict = field(default_factory=dict)


def review(fake, votes):
    script(fake, votes)


def pcs_round_two(fake):
    panel = Panel(fake)
    panel.verdicts[("AI-Security", 1)] = "REJECT"  # one more round, in the same attempt
    return panel


def pcs_rejected(fake):
    panel = Panel(fake)
    for r in (1, 2, 3):
        panel.verdicts[("AI-Architect", r)] = "REJECT"
    return panel


def council(verdict):
    def set_up(fake):
        c = Council(fake)
        c.verdict = verdict
        return c
    return set_up


def council_probe(repo, c, d):
    assert sorted(n for n, s, r in c.asked("Advice")) == sorted(ADVISORS)  # the lenses advise
    assert d.header.participants == ["pragmatist", "visionary", "skeptic"]


def dp_probe(repo, c, d):
    assert [n for n, s, r in c.asked()][-1] == "AI-Meta-Arbiter"
    assert d.header.participants == []


def dp_record(repo):
    record = (repo / RECORD).read_text()
    assert "**READY** by AI-Meta-Arbiter; minority view: Wait for the load test." in record
    assert "### AI-D-Arbiter" in record and "| D-idea-2-1 | 3 | 4 | 3 | 4 | 3 | advance |" \
        in record
    assert "AI-D-Freethinker, AI-P-Freethinker, AI-D-Arbiter, AI-P-Arbiter, " \
           "AI-Meta-Arbiter" in record


def swarm(votes):
    def set_up(fake):
        s = Swarm(fake)
        s.votes.update(votes)
        return s
    return set_up


def table(votes):
    def set_up(fake):
        t = Table(fake)
        t.votes.update(votes)
        return t
    return set_up


SWARM_FILES = tuple(BASE + suffix for suffix in (
    ".discussion.md", ".record.md", ".argument-graph.json", ".synthesis.md",
    ".open-questions.md", ".position-evolution.md", ".progress.md"))

CASES = {
    "review-ready": Case(RULES, lambda f: review(f, ("READY", "READY", "CHANGES")), 3, "",
                         True, stage=True, committed=(LEDGER,)),
    "review-rejected": Case(RULES, lambda f: review(f, ("READY", "REJECT", "READY")), 3, "",
                            False, reason="REJECT from AI-Security"),
    "pcs-ready": Case(PCS_RULES, pcs_round_two, 14, "READY", True,
                      said="round 2, Confirm: AI-Security: ACCEPT",
                      hint=f"git add {LEDGER} {RECORD} {GRAPH}", committed=(LEDGER, RECORD)),
    "pcs-impasse": Case(PCS_RULES, pcs_rejected, 22, "IMPASSE", False,
                        reason="impasse after 3 rounds"),
    "council-ready": Case(COUNCIL_RULES, council("READY"), 4, "READY", True,
                          probe=council_probe, committed=(LEDGER, RECORD)),
    "council-rejected": Case(COUNCIL_RULES, council("REJECT"), 4, "REJECT", False,
                             probe=council_probe, reason="REJECT"),
    "council-dp-ready": Case(DP_RULES, council("READY"), 9, "READY", True, probe=dp_probe,
                             committed=(LEDGER, RECORD), extra={"record": dp_record}),
    "council-dp-changes": Case(DP_RULES, council("CHANGES"), 9, "CHANGES", False,
                               probe=dp_probe, reason="CHANGES"),
    # panel, two lightweight rounds, the synthesis, the two experts' closing votes
    "swarm-ready": Case(SWARM_RULES, swarm({}), 1 + 2 * 9 + 1 + 2, "READY", True, stage=True,
                        committed=SWARM_FILES),
    # ... and the expert who votes CHANGES without a finding, asked for its findings once more
    "swarm-short": Case(SWARM_RULES, swarm({"AI-Api-Designer": "CHANGES"}), 23, "CHANGES",
                        False, stage=True, said="round 2, Closing vote: AI-Api-Designer: CHANGES",
                        reason="closing vote after round 2"),
    # round 1: the question, three answers, the synthesis (it concludes); the closing vote
    "roundtable-ready": Case(TABLE_RULES, table({}), 5 + 3, "READY", True, stage=True,
                             committed=(LEDGER, RECORD)),
    "roundtable-changes": Case(TABLE_RULES, table({"AI-Security": "CHANGES",
                                                   "AI-Architect": "CHANGES"}), 10, "CHANGES",
                               False, stage=True, reason="closing vote after round 1"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_the_gate_runs_the_protocol_to_its_outcome_and_check_agrees(loop_repo, fake_llm,
                                                                    monkeypatch, name):
    case = CASES[name]
    repo = loop_repo
    if not case.stage:  # the hook's hints, followed step by step
        monkeypatch.setenv("CASCADE_STAGE", "0")
    (repo / ".ai-rules.yml").write_text(case.rules)
    git(repo, "commit", "-qam", f"ADRs are discussed: {name}", "--allow-empty")
    install_plain(repo)
    git(repo, "add", DOC)
    protocol = case.set_up(fake_llm)

    first = commit(repo)  # the whole protocol, in this attempt
    assert fake_llm.calls() == case.calls, first.out
    assert case.said in first.out
    d = Discussion.load(repo / LEDGER, root=repo)
    if case.outcome:
        assert d.state.run.outcome == case.outcome, first.out
    if case.probe:
        case.probe(repo, protocol, d)
    if case.stage and case.lands:  # staged and landed in this very commit
        assert first.returncode == 0, first.out
        final = first
    else:
        assert first.returncode == 1, first.out
        if case.stage:
            git(repo, "add", "-A")
        else:
            step = first.out.strip().splitlines()[-1].rsplit("then ", 1)[1]
            if case.hint:
                assert step == case.hint
            assert subprocess.run(["bash", "-c", step], cwd=repo).returncode == 0
        final = commit(repo)  # concluded: nobody is asked again
        assert fake_llm.calls() == case.calls
        assert (final.returncode == 0) is case.lands, final.out
    assert case.reason in final.out
    if case.lands:
        assert git(repo, "status", "--porcelain").strip() == ""
        landed = git(repo, "show", "--name-only", "--format=", "HEAD").split()
        assert set(case.committed) <= set(landed), landed
        assert Discussion.load(repo / LEDGER, root=repo).status == "ACCEPTED"
        if "record" in case.extra:
            case.extra["record"](repo)
    else:
        git(repo, "commit", "-qm", "the outcome, recorded", "--no-verify")

    check = inproc.cascade(repo, "check")  # CI reads the same verdict, with no model
    assert (check.returncode == 0) is case.lands, check.out
    assert case.reason in check.stdout
    status = json.loads(inproc.cascade(repo, "status", LEDGER, "--json").stdout)
    assert status["discussions"][0]["gate"]["ok"] is case.lands
    assert fake_llm.calls() == case.calls


REFUSED = [  # (rules, the line named, what it says)
    (PCS_RULES.replace("[architect, security]", "[architect]"), 6,
     "protocol 'pcs' takes 2 to 4 participants, not 1"),
    (PCS_RULES.replace("[architect, security]",
                       "[architect, security, pragmatist, perfectionist, designer]"), 6,
     "takes 2 to 4 participants, not 5"),
    (PCS_RULES.replace("[architect, security]", "[architect, synthesizer]"), 6,
     "synthesizer has a fixed role in protocol 'pcs'"),
    (SWARM_RULES.replace("mode: lightweight", "mode: huge"), 7,
     "protocol 'swarm' has no mode 'huge' (modes: lightweight, standard, deep)"),
    (TABLE_RULES.replace("strategy: standard", "strategy: chaos"), 8,
     "protocol 'roundtable' has no strategy 'chaos' (strategies: standard, disney, debate, "
     "consensus-driven, six-hats)"),
    (COUNCIL_RULES.replace("flow: parallel", "flow: parallel\n    rounds: 9"), 8,
     "protocol 'council' runs 1 to 5 rounds, not 9"),
    (COUNCIL_RULES.replace("flow: parallel", "flow: parallel\n    rounds: two"), ".ai-rules.yml:8: ",
     "rounds must be a whole number of at least 1"),
    (COUNCIL_RULES.replace("flow: parallel",
                           "flow: parallel\n    mode: dp\n    participants: [architect, security]"),
     None, "in mode 'dp' has no participants"),
    (COUNCIL_RULES.replace("flow: parallel", "flow: parallel\n    mode: xp"), 8,
     "protocol 'council' has no mode 'xp' (modes: personality, dp)"),
]


@pytest.mark.parametrize("rules, line, message", REFUSED,
                         ids=["pcs-one", "pcs-five", "pcs-synthesizer", "swarm-mode",
                              "roundtable-strategy", "council-rounds", "council-rounds-word",
                              "council-dp-participants", "council-mode"])
def test_a_rule_that_breaks_its_protocol_is_refused_at_its_line(loop_repo, fake_llm, rules,
                                                                line, message, request):
    """explain and the hook each say it in one line naming the rule's file and line; nobody is
    asked. The roundtable's goes through the real `git commit`."""
    repo = loop_repo
    (repo / ".ai-rules.yml").write_text(rules)
    git(repo, "commit", "-qam", "a bad rule", "--no-verify")
    where = (f".ai-rules.yml:{line}: rule 'adr': " if isinstance(line, int) else
             line or ".ai-rules.yml:")
    explain = inproc.cascade(repo, "explain", DOC)  # the rule that governs it, checked
    assert explain.returncode == 2, explain.out
    lines = explain.stderr.strip().splitlines()
    assert len(lines) == 1 and where in lines[0] and message in lines[0], lines
    install_plain(repo)
    git(repo, "add", DOC)
    real = "roundtable" in request.node.callspec.id
    blocked = (git_commit if real else commit)(repo)
    assert blocked.returncode == 1, blocked.out  # git commit exits 1, whatever the hook's code
    assert real or blocked.hook_returncode == 2  # the hook's: bad configuration
    assert where in blocked.out and message in blocked.out
    assert fake_llm.calls() == 0
