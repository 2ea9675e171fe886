"""The council (seed 004) on the protocol engine: personality mode with its flows (parallel,
sequential, debate), tiers, word budgets that shrink by round, and the referee's verdict as
the outcome -- standalone and in the gate, over HTTP to the fake endpoint. The referee's and the
meta-arbiter's verdicts in the gate, and a rule's bad rounds or mode, are in
tests/test_protocol_gates.py, with every other protocol's."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import REPO, git
from council_script import Council
from inproc import commit
from test_hook import DOC, LEDGER, RULES, install_plain, loop_repo  # noqa: F401
from visibility import visible

from cascade import Discussion

# These tests follow the hook's hints step by step (git add by git add): staging off.
pytestmark = pytest.mark.usefixtures("hook_stages_nothing")

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
    assert "Council: answered -- the referee's verdict after round 1: READY" in out


def test_sequential_flow_each_advisor_sees_the_earlier_ones(repo, cli, council):
    assert discuss(cli, "--flow", "sequential", "--auto")[0] == 0
    order = [n for n, s, r in council.asked("Advice")]
    assert order == list(ADVISORS)  # one at a time, in the panel's order
    for name, step, round_, text in council.seen:
        if step == "Advice":
            earlier = order[:order.index(name)]
            assert all(f"{n} advises plan 1" in text for n in earlier)
            assert not any(f"{n} advises plan 1" in text for n in order[order.index(name) + 1:])


def test_sequential_flow_a_later_round_keeps_the_earlier_rounds(repo, cli, council):
    """Sequential participation adds the earlier advisors of the round to what blind advice
    sees -- the earlier rounds' summary stays: round 2's first advisor is asked how far its
    position moved, and must be shown round 1."""
    assert discuss(cli, "--flow", "sequential", "--rounds", "2", "--auto")[0] == 0
    by = {n: t for n, s, r, t in council.seen if (s, r) == ("Advice", 2)}
    assert list(by) == list(ADVISORS)
    for name, text in by.items():
        assert "The earlier rounds, in short:" in text, name
        summary = text.split("The earlier rounds, in short:", 1)[1].split("<<<end", 1)[0]
        assert "Round 1:" in summary and "Round 2:" not in summary
        assert all(f"{n}: {n} advises plan 1" in summary for n in ADVISORS), summary


def test_debate_openings_rebuttals_and_final_positions(repo, cli, council, fake_llm):
    assert discuss(cli, "--flow", "debate", "--auto")[0] == 0
    assert fake_llm.calls() == 3 * 3 + 1  # three rounds of three, then the referee
    by = {(n, r): t for n, s, r, t in council.seen if s == "Advice"}
    for name in ADVISORS:
        others = [n for n in ADVISORS if n != name]
        assert not any(f"{n} advises" in by[(name, 1)] for n in ADVISORS)  # openings: blind
        assert all(f"{n} advises plan 1" in by[(name, 2)] for n in others)  # rebuttal
        assert f"{name} argues in round 1" not in by[(name, 2)]  # not its own turn
        final = visible(by[(name, 3)])  # final positions: blind, the debate summarized
        assert final.shown == () and final.summary == {1, 2}  # no turn, rounds 1 and 2
        # no argument is shown, only the declared positions in the summary
        assert not any(f"{n} argues in round" in by[(name, 3)] for n in ADVISORS)
    # word budgets shrink by round, in the prompt and as max tokens
    bodies = [r.body for r in fake_llm.chat_requests]
    advice = [(b["max_tokens"], json.dumps(b)) for b in bodies if "STEP: Advice" in json.dumps(b)]
    tokens = sorted({t for t, _ in advice}, reverse=True)
    assert tokens == [800, 650, 575]
    assert "between 200 and 400 words" in by[("AI-Skeptic", 1)]
    assert "between 200 and 300 words" in by[("AI-Skeptic", 2)]
    assert "between 150 and 250 words" in by[("AI-Skeptic", 3)]
    d = load(repo)
    assert [e.fields.get("phase") for e in d.events if e.kind == "ROUND"] == [
        "opening", "rebuttal", "final"]  # every round's phase, the first's too
    # each round's table holds that round's advice (written once the round has moved on)
    tables = {c.provenance["round"]: c.body for c in d.comments
              if c.origin == "tool" and c.provenance.get("table")}
    assert sorted(tables) == ["1", "2", "3"]
    for round_, body in tables.items():
        assert all(f"| {n} |" in body for n in ADVISORS), (round_, body)


@pytest.mark.parametrize("tier, advisors, referee", [
    ("light", "fast", "strong"), ("medium", "fast", "strong"), ("heavy", "strong", "strong"),
])
def test_each_tier_gives_the_strong_model_to_its_roles(repo, cli, council, fake_llm, tier,
                                                      advisors, referee):
    assert discuss(cli, "--tier", tier, "--auto")[0] == 0
    asked = {("Reply as AI-Referee" in r.text, r.body["model"]) for r in fake_llm.chat_requests}
    assert asked == {(False, advisors), (True, referee)}
    code, out, _ = cli("plan", LEDGER_T)
    assert f"flow parallel, tier {tier}:" in out and f"referee ({referee}): referee -> openai/{referee}" in out


def test_plan_of_a_ledger_loads_no_model_library(repo, cli, council):
    """``plan PATH`` reads the ledger and its rule, and never loads litellm or Jinja2."""
    assert discuss(cli, "--auto")[0] == 0
    probe = ("import sys\nfrom cascade.main import main\n"
             f"code = main(['plan', {LEDGER_T!r}])\n"
             "print('IMPORTED', code, [m for m in ('litellm', 'jinja2') if m in sys.modules])\n")
    proc = subprocess.run([sys.executable, "-c", probe], cwd=repo, capture_output=True,
                          text=True, timeout=60, check=False,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert "Now: " + LEDGER_T + ", round 1: concluded, READY" in proc.stdout, proc.stderr
    assert "IMPORTED 0 []" in proc.stdout, proc.stdout + proc.stderr


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


# --- D/P mode ---------------------------------------------------------------------------------

GROUPS = {"AI-D-Freethinker": "D", "AI-D-Arbiter": "D", "AI-P-Freethinker": "P",
          "AI-P-Arbiter": "P"}


def _other(group: str) -> str:
    return "P" if group == "D" else "D"


def test_dp_one_round_five_calls_groups_apart_and_the_meta_arbiter_s_verdict(repo, cli, council,
                                                                             fake_llm):
    code, out, err = discuss(cli, "--mode", "dp", "--auto")
    assert code == 0, out + err
    assert fake_llm.calls() == 5
    asked = council.asked()
    assert sorted(n for n, s, r in asked[:2]) == ["AI-D-Freethinker", "AI-P-Freethinker"]
    assert sorted(n for n, s, r in asked[2:4]) == ["AI-D-Arbiter", "AI-P-Arbiter"]
    assert asked[4] == ("AI-Meta-Arbiter", "Merge", 1)
    for name, step, round_, text in council.seen:
        if name in GROUPS:
            mine, other = GROUPS[name], _other(GROUPS[name])
            assert f"{other}-idea" not in text and f"{other}-top" not in text  # apart
            if step == "Assessment":
                assert f"{mine}-idea-1-1" in text  # the arbiter assesses its group's ideas
            else:
                assert f"{mine}-idea" not in text.split("YOUR ROLE:")[0]  # blind in round 1
        else:  # the meta-arbiter sees both final shortlists, not the freethinkers' turns
            assert "D-private-1" in text and "P-private-1" in text
            assert "AI-D-Freethinker" not in text.split("YOUR ROLE:")[0]
    d = load(repo)
    assert d.state.run.outcome == "READY" and d.state.result.reached
    # a topic is answered, by the role that decides in this mode: the meta-arbiter
    assert "Council: answered -- the meta-arbiter's verdict after round 1: READY" in out
    assert "referee" not in out.lower()
    assert "the meta-arbiter's verdict after round 1: READY" in d.state.result.reason
    arbiter = next(c for c in d.comments if c.author == "AI-D-Arbiter")
    assert arbiter.provenance["bridge"] == "passed"
    assert arbiter.provenance["bridge.top_ideas"] == "D-top-1"
    assert arbiter.provenance["shortlist"].startswith("advance 3/4/3/4/3 D-idea-1-1")
    assert "| D-idea-1-1 | 3 | 4 | 3 | 4 | 3 | advance |" in arbiter.body
    assert "**Bridge packet** (passed to the other group):" in arbiter.body
    meta = next(c for c in d.comments if c.author == "AI-Meta-Arbiter")
    assert meta.provenance["verdict"] == "READY"


@pytest.mark.parametrize("rounds", [2, 3])
def test_dp_rounds_4n_plus_1_and_only_the_bridge_packets_cross(repo, cli, council, fake_llm,
                                                               rounds):
    assert discuss(cli, "--mode", "dp", "--rounds", str(rounds), "--auto")[0] == 0
    assert fake_llm.calls() == 4 * rounds + 1
    order = [(s, r) for n, s, r in council.asked()]
    assert order == [(s, r) for r in range(1, rounds + 1) for s in ("Ideation",) * 2
                     + ("Assessment",) * 2] + [("Merge", rounds)]
    for name, step, round_, text in council.seen:
        if name not in GROUPS:
            continue
        mine, other = GROUPS[name], _other(GROUPS[name])
        material = text.split("YOUR ROLE:")[0]
        # nothing of the other group but its arbiter's last packet: no idea, no private text
        assert f"{other}-idea" not in material and f"{other}-private" not in material
        if round_ == 1:
            assert f"{other}-top" not in material
            continue
        last = round_ - 1
        for key in ("top", "assumes", "asks", "theme", "avoid"):
            assert f"{other}-{key}-{last}" in material  # the whole packet, re-serialized
        assert f"{other}-top-{last - 1}" not in material  # the last round's packet only
        assert f"{mine}-idea-{last}-1" in material and f"{mine}-private-{last}" in material
        assert "The earlier rounds, in short:" not in material  # no summary crosses groups
    d = load(repo)
    assert d.state.run.outcome == "READY"
    assert [c.provenance["msg"] for c in d.comments] == [
        f"r{(i // 4) + 1 if i < 4 * rounds else rounds}-msg-{i + 1:03d}"
        for i in range(4 * rounds + 1)]


@pytest.mark.parametrize("packet, why", [
    ({"top_ideas": ["P-top-1"], "secret_plan": ["P-private-1"]}, "key 'secret_plan' is not on "
     "the whitelist"),
    ("P-top-1 and everything else", "a packet is an object"),
    ({"top_ideas": "P-top-1", "themes": [{"nested": "P-theme-1"}]}, "themes must be a list "
     "of texts"),
    ({}, "the packet is empty"),
])
def test_dp_a_bad_bridge_packet_skips_the_exchange_and_the_ledger_says_so(repo, cli, council,
                                                                          packet, why):
    good = json.loads(council.reply("AI-P-Arbiter", "Assessment", 1, ""))
    council.replies[("AI-P-Arbiter", "Assessment", 1)] = json.dumps({**good, "bridge": packet})
    code, out, err = discuss(cli, "--mode", "dp", "--rounds", "2", "--auto")
    assert code == 0, out + err
    assert f"bridge: not passed on ({why}" in out
    d = load(repo)
    arbiter = next(c for c in d.comments if c.author == "AI-P-Arbiter")
    assert arbiter.provenance["bridge"] == "skipped"
    assert not any(k.startswith("bridge.") for k in arbiter.provenance)
    assert f"**Bridge packet**: not passed on to the other group ({why}" in arbiter.body
    for name, step, round_, text in council.seen:
        if round_ == 2 and GROUPS.get(name) == "D":
            material = text.split("YOUR ROLE:")[0]
            assert "P-top-1" not in material and "P-private-1" not in material
            assert "P-theme-1" not in material
        if round_ == 2 and GROUPS.get(name) == "P":
            assert "D-top-1" in text  # the good packet still crosses the other way
    assert d.state.run.outcome == "READY"


@pytest.mark.parametrize("tier, workers, meta", [
    ("light", "fast", "strong"), ("medium", "fast", "strong"), ("heavy", "strong", "strong"),
])
def test_dp_tiers_and_word_budgets_per_role(repo, cli, council, fake_llm, tier, workers, meta):
    assert discuss(cli, "--mode", "dp", "--tier", tier, "--auto")[0] == 0
    by = {}
    for request in fake_llm.chat_requests:
        name = next(n for n in (*GROUPS, "AI-Meta-Arbiter") if f"Reply as {n} with" in
                    request.text)
        by[name] = (request.body["model"], request.body["max_tokens"], request.text)
    assert {n: m for n, (m, _, _) in by.items()} == {
        **{n: f"openai/{workers}".removeprefix("openai/") for n in GROUPS},
        "AI-Meta-Arbiter": meta}
    assert by["AI-D-Freethinker"][1] == by["AI-P-Freethinker"][1] == 1700
    assert by["AI-D-Arbiter"][1] == by["AI-P-Arbiter"][1] == 950
    assert by["AI-Meta-Arbiter"][1] == 950
    assert "between 300 and 1000 words" in by["AI-D-Freethinker"][2]
    assert "between 150 and 500 words" in by["AI-P-Arbiter"][2]
    assert "between 300 and 500 words" in by["AI-Meta-Arbiter"][2]
    code, out, _ = cli("plan", LEDGER_T)
    assert f"meta ({meta}): meta-arbiter -> openai/{meta}" in out
    assert f"d-arbiter ({workers}): d-arbiter -> openai/{workers}" in out


def test_dp_plan_prints_the_roster_calls_and_budgets_with_no_call(repo, cli, council, fake_llm):
    code, out, err = cli("plan", "--protocol", "council", "--mode", "dp", "--tier", "medium")
    assert code == 0, out + err
    assert "Mode dp, tier medium: the strong model for meta (tiers:" in out
    assert "d-freethinker (fast): d-freethinker -> openai/fast" in out
    assert "meta (strong): meta-arbiter -> openai/strong" in out
    assert "advisor" not in out.split("Roles:")[1] and "referee" not in out.split("Roles:")[1]
    assert "Ideation     d-freethinker, p-freethinker group      300-1000 words  (max tokens " \
           "1700)" in out
    assert "at most 5 in 1 round" in out and "with --rounds N (up to 5): 4N + 1" in out
    assert fake_llm.calls() == 0
    code, out, err = discuss(cli, "--mode", "dp", "--participants", "architect,security")
    assert code == 2 and "in dp mode has no participants" in err


@pytest.mark.parametrize("flow, calls", [("sequential", 5), ("debate", 13)])
def test_dp_a_flow_sets_the_rounds_and_the_groups_stay_apart(repo, cli, council, fake_llm, flow,
                                                             calls):
    assert discuss(cli, "--mode", "dp", "--flow", flow, "--auto")[0] == 0
    assert fake_llm.calls() == calls  # sequential: one round; debate: three, then the merge
    for name, step, round_, text in council.seen:
        if name in GROUPS:
            material = text.split("YOUR ROLE:")[0]
            assert f"{_other(GROUPS[name])}-private" not in material


def test_dp_a_failed_arbiter_stops_the_run_and_run_resumes_asking_no_one_twice(repo, cli,
                                                                             council, fake_llm,
                                                                             monkeypatch):
    from fakellm import http_error

    monkeypatch.setenv("CASCADE_RETRIES", "0")
    council.replies[("AI-P-Arbiter", "Assessment", 1)] = http_error(500)
    code, out, err = discuss(cli, "--mode", "dp", "--rounds", "2", "--auto")
    assert code != 0 and "AI-P-Arbiter" in out + err and "HTTP 500" in out + err
    assert fake_llm.calls() == 4  # round 1's wave of arbiters ran; round 2 did not start
    del council.replies[("AI-P-Arbiter", "Assessment", 1)]
    before = len(council.seen)
    code, out, err = cli("run", LEDGER_T, "--auto")
    assert code == 0, out + err
    again = [(n, s, r) for n, s, r, _ in council.seen[before:]]
    assert again[0] == ("AI-P-Arbiter", "Assessment", 1) and len(again) == 1 + 4 + 1
    d = load(repo)
    assert d.state.run.outcome == "READY"
    assert [c.provenance["msg"] for c in d.comments] == [f"r{1 if i < 4 else 2}-msg-{i + 1:03d}"
                                                         for i in range(8)] + ["r2-msg-009"]
