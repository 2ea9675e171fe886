"""A discussion's options -- its mode, strategy or flow, tier and round cap -- are applied in
one place (cascade.protocol.options.specialize): `discuss`, `plan`, `explain`, the hook and
`check` see the same protocol for the same options. A council rule with the debate flow,
the heavy tier and two rounds, in a real repository with the real hook."""
from __future__ import annotations

import json

import inproc
import pytest
from conftest import git
from council_script import Council
from inproc import commit
from test_hook import DOC, LEDGER, RULES, install_plain, loop_repo  # noqa: F401

from cascade import Discussion

# These tests follow the hook's hints step by step (git add by git add): staging off.
pytestmark = pytest.mark.usefixtures("hook_stages_nothing")

OPTION_RULES = RULES.replace("participants: [architect, security, pragmatist]",
                             "protocol: council\n    flow: debate\n    tier: heavy\n"
                             "    rounds: 2")
TOPIC = "Should we rewrite the billing service?"


def chosen(steps) -> tuple:
    return steps.mode, steps.strategy.name, steps.tier, steps.rounds.max


def test_explain_applies_the_flow_the_tier_and_the_round_cap(loop_repo, cli, fake_llm):
    (loop_repo / ".ai-rules.yml").write_text(OPTION_RULES)
    code, out, err = cli("explain", DOC, "--json")
    assert code == 0, err
    why = json.loads(out)["calls"]["why"]
    assert why == ("protocol 'council' (personality mode, debate flow, heavy tier): 3 calls a "
                   "round and 1 once, at most 7 in 2 rounds (cascade plan shows the steps)")
    assert fake_llm.calls() == 0


def test_the_hook_discuss_plan_and_check_run_the_same_protocol(loop_repo, cli, fake_llm,
                                                               monkeypatch):
    repo = loop_repo
    monkeypatch.setenv("CASCADE_MODEL_STRONG", "openai/strong")
    (repo / ".ai-rules.yml").write_text(OPTION_RULES)
    git(repo, "commit", "-qam", "ADRs go to a debating council")
    install_plain(repo)
    git(repo, "add", DOC)
    script = Council(fake_llm)
    blocked = commit(repo)
    assert blocked.returncode == 1, blocked.out
    hooked = Discussion.load(repo / LEDGER, root=repo).state.run
    assert chosen(hooked.steps) == ("personality", "debate", "heavy", 2)
    assert sorted({r for _, s, r in script.asked("Advice")}) == [1, 2]  # the cap: two rounds
    models = {r.body["model"] for r in fake_llm.chat_requests}
    assert models == {"strong"}  # the heavy tier: every role on the strong model
    code, out, _ = cli("plan", LEDGER)
    assert code == 0 and "Mode personality, flow debate, tier heavy:" in out
    assert "rounds: 2 to 2" in out
    code, out, err = cli("discuss", TOPIC, "--protocol", "council", "--flow", "debate",
                         "--tier", "heavy", "--rounds", "2", "--auto")
    assert code == 0, out + err
    ledger = "discussions/should-we-rewrite-the-billing-service.discussion.md"
    discussed = Discussion.load(repo / ledger, root=repo).state.run
    assert discussed.steps == hooked.steps  # one specialization, whoever asks
    git(repo, "add", "-A")
    assert commit(repo).returncode == 0
    check = inproc.cascade(repo, "check", "--format", "json")
    verdict = next(v for v in json.loads(check.stdout)["verdicts"] if v["ledger"] == LEDGER)
    assert check.returncode == 0 and verdict["verdict"] == (
        "consensus READY (the referee's verdict after round 2: READY)")
