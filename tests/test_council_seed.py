"""The council as seed 004 describes its flows and tiers: parallel and sequential rounds in
the seed's shape (opening, rebuttal, final, with shrinking word budgets), D/P sequential in
the seed's order, and the role-aware tier table -- standalone, over HTTP to the fake
endpoint."""
from __future__ import annotations

import pytest
from council_script import Council
from visibility import visible

from cascade import Discussion

pytestmark = pytest.mark.usefixtures("hook_stages_nothing")

TOPIC = "Should we rewrite the billing service?"
LEDGER_T = "discussions/should-we-rewrite-the-billing-service.discussion.md"
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


def advice(council) -> dict[tuple[str, int], str]:
    return {(n, r): t for n, s, r, t in council.seen if s == "Advice"}


def ids_of(repo, round_: int, names=ADVISORS) -> set[str]:
    d = Discussion.load(repo / LEDGER_T, root=repo)
    return {t.msg for t in d.state.run.turns if t.round == round_ and t.name in names}


def test_parallel_rounds_open_rebut_and_close_with_shrinking_budgets(repo, cli, council,
                                                                       fake_llm):
    """Seed 004, parallel flow, multi-round: "ROUND 1: Spawn 3 advisors in parallel (opening
    position prompt)"; "ROUND 2..N-1: Respawn all 3 in parallel (rebuttal prompt) - Each gets:
    own prior output + all other advisors' prior output"; "ROUND N: Respawn all 3 in parallel
    (final position prompt) - Each gets: full debate transcript summary"; word guidance
    "Round 1 (opening): 200-400 words / Middle rounds: 200-300 words / Final round: 150-250
    words"."""
    code, out, err = discuss(cli, "--rounds", "3", "--auto")
    assert code == 0, out + err
    assert fake_llm.calls() == 3 * 3 + 1
    by = advice(council)
    first, second = ids_of(repo, 1), ids_of(repo, 2)
    for name in ADVISORS:
        opening = visible(by[(name, 1)])
        assert opening.shown == () and "between 200 and 400 words" in by[(name, 1)]
        assert "Opening" in by[(name, 1)]
        rebuttal = visible(by[(name, 2)])
        assert set(rebuttal.shown) == first  # its own prior output and the others'
        assert "between 200 and 300 words" in by[(name, 2)] and "Rebuttal" in by[(name, 2)]
        final = visible(by[(name, 3)])
        assert final.shown == () and final.summary == {1, 2}  # the transcript summarized
        assert "between 150 and 250 words" in by[(name, 3)]
        assert "Final position" in by[(name, 3)]
    referee = visible(next(t for n, s, r, t in council.seen if n == "AI-Referee"))
    assert first | second | ids_of(repo, 3) <= set(referee.shown)  # the full transcript


def test_sequential_rounds_see_every_prior_output_with_shrinking_budgets(repo, cli, council):
    """Seed 004, sequential flow, multi-round: "ROUND 1: Sequential as above"; "ROUND 2..N:
    Each advisor sees ALL prior round outputs" -- not only a summary of them; the word
    guidance of personality mode shrinks by round."""
    assert discuss(cli, "--flow", "sequential", "--rounds", "3", "--auto")[0] == 0
    order = [n for n, s, r in council.asked("Advice")]
    assert order == list(ADVISORS) * 3  # one at a time, every round
    by = advice(council)
    first, second = ids_of(repo, 1), ids_of(repo, 2)
    d = Discussion.load(repo / LEDGER_T, root=repo)
    msg = {(t.name, t.round): t.msg for t in d.state.run.turns}
    for i, name in enumerate(ADVISORS):
        earlier = {msg[(n, 2)] for n in ADVISORS[:i]}
        assert set(visible(by[(name, 2)]).shown) == first | earlier
        assert set(visible(by[(name, 3)]).shown) == first | second | {
            msg[(n, 3)] for n in ADVISORS[:i]}
        assert "between 200 and 400 words" in by[(name, 1)]
        assert "between 200 and 300 words" in by[(name, 2)]
        assert "between 150 and 250 words" in by[(name, 3)]


def test_dp_sequential_runs_group_by_group_in_the_seed_s_order(repo, cli, council, fake_llm):
    """Seed 004, D/P mode, sequential flow: "1. Spawn D-Freethinker -> collect ideas / 2. Spawn
    D-Arbiter with D ideas -> collect shortlist / 3. Spawn P-Freethinker -> collect ideas /
    4. Spawn P-Arbiter with P ideas -> collect shortlist / 5. Spawn Meta-Arbiter with both
    shortlists -> deliver"."""
    code, out, err = discuss(cli, "--mode", "dp", "--flow", "sequential", "--auto")
    assert code == 0, out + err
    assert [n for n, s, r in council.asked()] == [
        "AI-D-Freethinker", "AI-D-Arbiter", "AI-P-Freethinker", "AI-P-Arbiter",
        "AI-Meta-Arbiter"]
    seen = {n: t.split("YOUR ROLE:")[0] for n, s, r, t in council.seen}
    assert "D-idea-1-1" in seen["AI-D-Arbiter"]  # the D arbiter assesses the D ideas
    assert "P-idea-1-1" in seen["AI-P-Arbiter"]
    for name in ("AI-P-Freethinker", "AI-P-Arbiter"):  # no bridge before the round's end
        assert "D-idea" not in seen[name] and "D-private" not in seen[name]
        assert "D-top" not in seen[name]
    assert "D-private-1" in seen["AI-Meta-Arbiter"] and "P-private-1" in seen["AI-Meta-Arbiter"]
    assert not any("Opening" in t for t in seen.values())  # the advisors' phases are not theirs
    d = Discussion.load(repo / LEDGER_T, root=repo)
    assert d.state.run.outcome == "READY"
    code, out, _ = cli("plan", "--protocol", "council", "--mode", "dp", "--flow", "sequential")
    steps = out.split("Steps of a round:", 1)[1]
    assert steps.index("d-arbiter") < steps.index("p-freethinker"), steps


def test_dp_parallel_keeps_both_groups_in_one_wave(repo, cli, council):
    """Seed 004: "Parallel is the natural D/P flow": the freethinkers ideate together, then
    the arbiters assess together."""
    assert discuss(cli, "--mode", "dp", "--auto")[0] == 0
    steps = [s for n, s, r in council.asked()]
    assert steps == ["Ideation"] * 2 + ["Assessment"] * 2 + ["Merge"]


@pytest.mark.parametrize("mode, synthesis, workers", [
    ((), "AI-Referee", ADVISORS),
    (("--mode", "dp"), "AI-Meta-Arbiter", ("AI-D-Freethinker", "AI-P-Freethinker",
                                            "AI-D-Arbiter", "AI-P-Arbiter")),
])
@pytest.mark.parametrize("tier", [(), ("--tier", "light")])
def test_the_light_tier_puts_synthesis_on_the_strong_model(repo, cli, council, fake_llm, mode,
                                                          synthesis, workers, tier):
    """Seed 004, role-aware model tiering: "light: advisors/freethinkers/arbiters ->
    dedicated council role agents on litellm/gpt-5-mini; referee/meta-arbiter -> dedicated
    synthesis agents on openai-codex/gpt-5.4" -- and "tier: light (default)"."""
    assert discuss(cli, *mode, *tier, "--auto")[0] == 0
    model = {}
    for request in fake_llm.chat_requests:
        name = next(n for n in (synthesis, *workers) if f"Reply as {n} with" in request.text)
        model[name] = request.body["model"]
    assert model == {synthesis: "strong", **{n: "fast" for n in workers}}
    code, out, _ = cli("plan", LEDGER_T)
    assert code == 0 and "tier light:" in out


def test_the_earlier_rounds_in_short_carry_the_declared_positions(repo, cli, council):
    """Seed 004: "ROUND N: ... (final position prompt) - Each gets: full debate transcript
    summary" -- a summary of the positions taken, so each advisor's line is the position it
    declared ("position"), not the first sentence of its argument."""
    council.replies[("AI-Skeptic", "Advice", 1)] = (
        '{"comment": "Rewrites fail. Most of them, anyway.", "position": "Keep the billing '
        'service and fix its tests first", "shift": "none"}')
    assert discuss(cli, "--rounds", "2", "--auto")[0] == 0
    final = [t for n, s, r, t in council.seen if (s, r) == ("Advice", 2)]
    assert len(final) == 3
    for text in final:
        summary = text.split("The earlier rounds, in short:", 1)[1].split("<<<end", 1)[0]
        assert "AI-Skeptic: Keep the billing service and fix its tests first" in summary
        assert "Rewrites fail" not in summary
        assert "AI-Pragmatist: AI-Pragmatist advises plan 1" in summary
