"""``cascade plan`` counts what a run really does: the waves of a round (a step whose
speakers see the earlier ones asks them one at a time: a wave each), and the rounds asked
for with ``--rounds N`` -- the flag its own output names, as ``discuss`` takes it."""
from __future__ import annotations

import re

import pytest


def _calls(out: str) -> str:
    return next(line for line in out.splitlines() if line.startswith("Calls:"))


@pytest.mark.parametrize("args, calls", [
    # the advisors speak one after another, each seeing the earlier ones: three waves, then
    # the referee
    (("--flow", "sequential"), "Calls: 3 per round in 3 waves, 1 once"),
    (("--flow", "parallel"), "Calls: 3 per round in 1 wave, 1 once"),  # blind: one wave
    # D/P sequential: D-freethinker, D-arbiter, P-freethinker, P-arbiter
    (("--mode", "dp", "--flow", "sequential"), "Calls: 4 per round in 4 waves, 1 once"),
    (("--mode", "dp", "--flow", "parallel"), "Calls: 4 per round in 2 waves, 1 once"),
])
def test_plan_counts_the_waves_a_round_runs(repo, cli, args, calls):
    code, out, err = cli("plan", "--protocol", "council", *args)
    assert code == 0, out + err
    assert _calls(out).startswith(calls), _calls(out)


def test_a_sequential_strategy_asks_its_participants_one_at_a_time(repo, cli):
    """six-hats: each participant sees the earlier answers of its round, so the three
    participants' answers are three waves, between the facilitator's question and synthesis."""
    code, out, err = cli("plan", "--protocol", "roundtable", "--strategy", "six-hats")
    assert code == 0, out + err
    assert _calls(out).startswith("Calls: 5 per round in 5 waves"), _calls(out)


def test_plan_takes_the_rounds_its_output_names(repo, cli):
    code, out, err = cli("plan", "--protocol", "council", "--mode", "dp")
    assert code == 0, out + err
    assert "with --rounds N (up to 5): 4N + 1" in out
    code, out, err = cli("plan", "--protocol", "council", "--mode", "dp", "--rounds", "3")
    assert code == 0, out + err
    assert "rounds: 1 to 3" in out
    assert re.search(r"; at most 13 in 3 rounds", _calls(out)), _calls(out)  # 4N + 1
    code, out, err = cli("plan", "--protocol", "pcs", "--rounds", "2")
    assert code == 0, out + err
    assert "rounds: 1 to 2" in out and "in 2 rounds" in _calls(out)


@pytest.mark.parametrize("args", [("--protocol", "pcs", "--rounds", "4"),
                                  ("--protocol", "council", "--rounds", "0")])
def test_plan_refuses_rounds_the_protocol_cannot_run(repo, cli, args):
    code, out, err = cli("plan", *args)
    assert code == 2, out + err
    assert "--rounds must be between 1 and" in err and len(err.strip().splitlines()) == 1
