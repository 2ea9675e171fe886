"""The council (seed 004) on the protocol engine: personality mode with its flows (parallel,
sequential, debate), tiers, word budgets that shrink by round, and the referee's verdict as
the outcome -- standalone and in the gate, over HTTP to the fake endpoint."""
from __future__ import annotations

import json
import sys

import pytest
from conftest import git
from council_script import Council
from test_hook import DOC, LEDGER, RULES, commit, install_plain, loop_repo, run  # noqa: F401

from cascade import Discussion

TOPIC = "Should we rewrite the billing service?"
BASE = "discussions/should-we-rewrite-the-billing-service"
LEDGER_T = BASE + ".discussion.md"
ADVISORS = ("AI-Pragmatist", "AI-Visionary", "AI-Skeptic")


@pytest.fixture
def council(repo, fake_llm, monkeypatch):
    monkeypatch.setenv("CASCADE_MODEL", "openai/fast")
    monkeypatch.setenv("CASCADE_MODEL_STRONG", "openai/strong")
    monkeypatch.setenv("CASCADE_API_BASE", fake_llm.url)
    monkeypatch.setenv("CASCADE_BACKOFF", "0.05")
    return Council(fake_llm)


def discuss(cli, *extra: str):
    return cli("discuss", TOPIC, "--protocol", "council", *extra)


def load(repo) -> Discussion:
    return Discussion.load(repo / LEDGER_T, root=repo)


def test_parallel_flow_three_lenses_and_the_referee_s_verdict(repo, cli, council, fake_llm):
    code, out, err = discuss(cli, "--auto")
    assert code == 0, out + err
    assert [n for n, s, r in council.asked()] == sorted(ADVISORS, key=lambda n: [
        n for n, s, r in council.asked()].index(n)) + ["AI-Referee"]
    assert sorted(n for n, s, r in council.asked("Advice")) == sorted(ADVISORS)
    assert fake_llm.calls() == 4
    for name, step, round_, text in council.seen:
        if step == "Advice":
            assert not any(f"{n} advises" in text for n in ADVISORS)  # blind
        else:
            assert all(f"{n} advises plan 1" in text for n in ADVISORS)  # the referee sees all
    d = load(repo)
    assert d.state.run.outcome == "READY" and d.state.result.reached
    referee = [c for c in d.comments if c.author == "AI-Referee"][0]
    assert referee.provenance["verdict"] == "READY"
    assert referee.provenance["minority"] == "Wait for the load test."
    assert "Council: READY by the referee's verdict after round 1" in out


def test_sequential_flow_each_advisor_sees_the_earlier_ones(repo, cli, council):
    assert discuss(cli, "--flow", "sequential", "--auto")[0] == 0
    order = [n for n, s, r in council.asked("Advice")]
    assert order == list(ADVISORS)  # one at a time, in the panel's order
    for name, step, round_, text in council.seen:
        if step == "Advice":
            earlier = order[:order.index(name)]
            assert all(f"{n} advises plan 1" in text for n in earlier)
            assert not any(f"{n} advises plan 1" in text for n in order[order.index(name) + 1:])


def test_debate_openings_rebuttals_and_final_positions(repo, cli, council, fake_llm):
    assert discuss(cli, "--flow", "debate", "--auto")[0] == 0
    assert fake_llm.calls() == 3 * 3 + 1  # three rounds of three, then the referee
    by = {(n, r): t for n, s, r, t in council.seen if s == "Advice"}
    for name in ADVISORS:
        others = [n for n in ADVISORS if n != name]
        assert not any(f"{n} advises" in by[(name, 1)] for n in ADVISORS)  # openings: blind
        assert all(f"{n} advises plan 1" in by[(name, 2)] for n in others)  # rebuttal
        assert f"{name} advises plan 1" not in by[(name, 2)].split("YOUR ROLE")[0]
        final = by[(name, 3)]
        assert "The earlier rounds, in short:" in final  # the transcript's summary only
        assert "<<<material" in final and f"{others[0]} advises plan 2 (" not in final
    # word budgets shrink by round, in the prompt and as max tokens
    bodies = [r.body for r in fake_llm.chat_requests]
    advice = [(b["max_tokens"], json.dumps(b)) for b in bodies if "STEP: Advice" in json.dumps(b)]
    tokens = sorted({t for t, _ in advice}, reverse=True)
    assert tokens == [800, 650, 575]
    assert "between 200 and 400 words" in by[("AI-Skeptic", 1)]
    assert "between 200 and 300 words" in by[("AI-Skeptic", 2)]
    assert "between 150 and 250 words" in by[("AI-Skeptic", 3)]
    d = load(repo)
    assert [e.fields.get("phase") for e in d.events if e.kind == "ROUND"] == ["rebuttal",
                                                                              "final"]


@pytest.mark.parametrize("tier, advisors, referee", [
    ("light", "fast", "fast"), ("medium", "fast", "strong"), ("heavy", "strong", "strong"),
])
def test_each_tier_gives_the_strong_model_to_its_roles(repo, cli, council, fake_llm, tier,
                                                      advisors, referee):
    assert discuss(cli, "--tier", tier, "--auto")[0] == 0
    asked = {("Reply as AI-Referee" in r.text, r.body["model"]) for r in fake_llm.chat_requests}
    assert asked == {(False, advisors), (True, referee)}
    code, out, _ = cli("plan", LEDGER_T)
    assert f"Tier {tier}:" in out and f"referee ({referee}): referee -> openai/{referee}" in out


@pytest.mark.parametrize("reply, outcome, code", [
    (json.dumps({"comment": "Not yet.", "verdict": "CHANGES"}), "CHANGES", 1),
    (json.dumps({"comment": "No.", "verdict": "REJECT"}), "REJECT", 1),
    (json.dumps({"comment": "I cannot decide.", "verdict": "MAYBE"}), "REJECT", 1),
])
def test_the_referee_s_verdict_is_the_outcome_and_fails_closed(repo, cli, council, reply,
                                                               outcome, code):
    council.replies[("AI-Referee", "Verdict", 1)] = reply
    assert discuss(cli, "--auto")[0] == code
    d = load(repo)
    assert d.state.run.outcome == outcome and d.state.result.outcome != "READY"
    assert f"the referee's verdict after round 1: {outcome}" in d.state.result.reason


def test_a_rule_s_participants_replace_the_advisors(repo, cli, council):
    assert discuss(cli, "--participants", "architect,security", "--auto")[0] == 0
    assert sorted(n for n, s, r in council.asked("Advice")) == ["AI-Architect", "AI-Security"]


def test_plan_shows_the_roster_models_and_budgets_with_no_call(repo, cli, council, fake_llm):
    code, out, err = cli("plan", "--protocol", "council", "--flow", "debate", "--tier", "heavy",
                         "--participants", "pragmatist,visionary,skeptic")
    assert code == 0, out + err
    assert "advisor (strong): pragmatist -> openai/strong" in out
    assert "Word budgets (and max tokens) by phase: Opening 200-400 (800); Cross-rebuttal " \
           "200-300 (650); Final position 150-250 (575)" in out
    assert "at most 10 in 3 rounds" in out
    code, out, err = cli("plan", "--protocol", "council", "--tier", "ultra")
    assert code == 2 and "has no tier 'ultra' (tiers: light, medium, heavy)" in err
    assert fake_llm.calls() == 0


COUNCIL_RULES = RULES.replace("participants: [architect, security, pragmatist]",
                              "protocol: council\n    flow: parallel")  # the lenses advise


def cascade(repo, *args: str):
    return run(repo, sys.executable, "-m", "cascade", *args)


@pytest.mark.parametrize("verdict, lands", [("READY", True), ("REJECT", False)])
def test_in_the_gate_the_referee_decides_and_check_agrees(loop_repo, fake_llm, verdict, lands):
    repo = loop_repo
    (repo / ".ai-rules.yml").write_text(COUNCIL_RULES)
    git(repo, "commit", "-qam", "ADRs go to a council")
    install_plain(repo)
    git(repo, "add", DOC)
    script = Council(fake_llm)
    script.verdict = verdict
    blocked = commit(repo)
    assert blocked.returncode == 1 and fake_llm.calls() == 4
    assert sorted(n for n, s, r in script.asked("Advice")) == sorted(ADVISORS)
    assert Discussion.load(repo / LEDGER, root=repo).header.participants == [
        "pragmatist", "visionary", "skeptic"]
    git(repo, "add", "-A")
    second = commit(repo)
    assert (second.returncode == 0) is lands, second.out
    assert fake_llm.calls() == 4
    if not lands:
        assert "REJECT" in second.out
        git(repo, "commit", "-qm", "recorded", "--no-verify")
    check = cascade(repo, "check")
    assert (check.returncode == 0) is lands, check.stdout


def test_in_the_gate_a_rule_s_participants_replace_the_lenses(loop_repo, fake_llm):
    repo = loop_repo
    (repo / ".ai-rules.yml").write_text(COUNCIL_RULES.replace(
        "protocol: council", "participants: [architect, security]\n    protocol: council"))
    git(repo, "commit", "-qam", "ADRs go to a council of two")
    install_plain(repo)
    git(repo, "add", DOC)
    script = Council(fake_llm)
    assert commit(repo).returncode == 1
    assert sorted(n for n, s, r in script.asked("Advice")) == ["AI-Architect", "AI-Security"]
