"""The visibilities (cascade.protocol.visibility), each a pure function of the run the ledger
gives: a table of ledgers over the bundled protocols and, for a speaker in a step and round,
the turns each visibility shows, in ledger order. tests/test_visibility.py checks the same
definitions end to end, through the hook and the prompts the fake endpoint receives; this
table pins each rule's edge (its own turn in this step, but not in another; another's turn in
this step; the last round, this one, an older and a later one) in milliseconds.

Mutation testing (cosmic-ray) runs this module and tests/test_outcome_rules.py against each
mutant of the visibilities and the outcome rules, then the slower visibility and protocol
tests against the survivors; bench/mutation.py runs both."""
from __future__ import annotations

from pathlib import Path

import pytest

from protocol_steps import steps_for

from cascade.protocol import visibility
from cascade.protocol.loader import load_protocol, load_protocol_file
from cascade.protocol.runstate import Draft, Run, Turn

A, B, C = "architect", "security", "ux"  # the speaker, B, between the others by name


def run_of(protocol: str | Path, turns, round_: int, members=(A, B, C), mode: str | None = None,
           strategy: str | None = None) -> Run:
    """A run of ``protocol`` in ``round_`` whose ledger holds ``turns`` ((label, alias, step,
    round[, fields]), in order; the label is the turn's message id)."""
    found = load_protocol_file(protocol) if isinstance(protocol, Path) else \
        load_protocol(protocol, None)
    steps = steps_for(found.steps, mode, None, strategy)
    run = Draft(steps, list(members), {r.id: r.persona for r in steps.fixed_roles}, round=round_)
    run.turns = [Turn(read(alias), f"AI-{alias}", read(step), r, label, n,
                      f"{alias} in {step}.", dict(rest[0]) if rest else {}, [], 10 * n, None)
                 for n, (label, alias, step, r, *rest) in enumerate(turns, 1)]
    return run


def read(value: str) -> str:
    """``value`` as a ledger gives it: a string read from text, equal to the test's constants
    but not the same object (so a rule that compared by identity would fail here as on a
    real ledger)."""
    return value.encode().decode()


def shown(run: Run, step_id: str, alias: str, name: str | None = None) -> list[str]:
    """The labels ``alias`` is shown in ``step_id`` (by visibility ``name``, else the step's),
    checking the visibility left the run as it found it."""
    before = [(t.msg, t.body, dict(t.fields)) for t in run.turns]
    step = run.steps.step(step_id)
    assert step is not None, step_id
    out = [t.msg for t in visibility.shown(run, step, alias, name)]
    assert [(t.msg, t.body, dict(t.fields)) for t in run.turns] == before
    return out


# --- pcs: the speaker B in ``confirm``, round 2 (``confirm`` sorts after ``challenge``, before
# ``propose``; the synthesizer is the fixed role) ------------------------------------------

PCS = [
    ("a1", A, "propose", 1), ("b1", B, "propose", 1), ("c1", C, "challenge", 1),
    ("s1", "synthesizer", "synthesize", 1), ("b2", B, "confirm", 1), ("x1", C, "confirm", 1),
    ("r1", "synthesizer", "recommend", 1),
    ("a2", A, "propose", 2), ("b3", B, "challenge", 2), ("b4", B, "propose", 2),
    ("s2", "synthesizer", "synthesize", 2), ("a3", A, "confirm", 2), ("b5", B, "confirm", 2),
    ("c2", C, "confirm", 2),
    ("c3", C, "propose", 3), ("b6", B, "confirm", 3),  # a later round's: not this one's
]


@pytest.mark.parametrize("name, expected", [
    ("blind", []),
    # this round's turns, less its own in this step (its own in other steps, and the others'
    # in this step, are shown)
    ("all", ["a2", "b3", "b4", "s2", "a3", "c2"]),
    # every round's turns, less its own in this step
    ("history", ["a1", "b1", "c1", "s1", "x1", "r1", "a2", "b3", "b4", "s2", "a3", "c2", "c3"]),
    # the run's last fixed-role turn
    ("synthesis", ["s2"]),
    # the last round's last fixed-role turn and this round's fixed-role turns
    ("question", ["r1", "s2"]),
    # that, and this round's turns of this step (the earlier speakers', its own)
    ("sequential", ["r1", "s2", "a3", "b5", "c2"]),
    # the others' turns of the last round
    ("previous", ["a1", "c1", "s1", "x1", "r1"]),
    # this round's turns of the other steps (not this step's, its own or the others')
    ("key_points", ["a2", "b3", "b4", "s2"]),
    # every turn of the last round, its own too
    ("prior", ["a1", "b1", "c1", "s1", "b2", "x1", "r1"]),
    # every turn of the earlier rounds, and this round's turns of this step
    ("thread", ["a1", "b1", "c1", "s1", "b2", "x1", "r1", "a3", "b5", "c2"]),
])
def test_pcs_ledger(name, expected):
    run = run_of("pcs", PCS, 2)
    assert run.steps.step("confirm").visibility == "key_points"
    assert shown(run, "confirm", B, name) == expected


@pytest.mark.parametrize("speaker, expected", [
    (A, ["b1", "c1", "s1", "b2", "x1", "r1"]),
    (C, ["a1", "b1", "s1", "b2", "r1"]),
])
def test_previous_leaves_out_only_the_speaker(speaker, expected):
    assert shown(run_of("pcs", PCS, 2), "confirm", speaker, "previous") == expected


def test_the_step_s_own_visibility_when_none_is_named():
    run = run_of("pcs", PCS, 2)
    assert shown(run, "confirm", B) == ["a2", "b3", "b4", "s2"]  # key_points
    assert shown(run, "challenge", B) == ["a2", "b4", "s2", "a3", "b5", "c2"]  # all
    assert shown(run, "propose", B) == []  # blind


def test_the_first_round_has_no_last_round():
    run = run_of("pcs", PCS[:7], 1)
    assert shown(run, "confirm", B, "question") == ["s1", "r1"]
    assert shown(run, "confirm", B, "previous") == []
    assert shown(run, "confirm", B, "synthesis") == ["r1"]


def test_a_turn_of_a_step_the_protocol_lacks_counts_as_its_first_step_s():
    # (a turn of a removed step) pcs's first step is a participant's, not fixed
    run = run_of("pcs", PCS[:7] + [("z1", "synthesizer", "retired", 1)], 1)
    assert shown(run, "confirm", B, "synthesis") == ["r1"]
    # roundtable's first step, the question, is the facilitator's: fixed (its second is not)
    run = run_of("roundtable", [("q1", "facilitator", "question", 1),
                                ("z1", A, "retired", 1), ("a1", A, "answer", 1)], 1,
                 strategy="standard")
    assert shown(run, "vote", B, "synthesis") == ["z1"]


# --- sees: only the turns of the steps named (council D/P's merge sees the assessments) ----

DP = [
    ("d1", "d-freethinker", "ideate", 1), ("p1", "p-freethinker", "ideate", 1),
    ("D1", "d-arbiter", "assess", 1, {"bridge": "passed", "bridge.top_ideas": "d's idea"}),
    ("P1", "p-arbiter", "assess", 1, {"bridge": "passed", "bridge.themes": "p's theme"}),
    ("m1", "meta-arbiter", "merge", 1),
    ("d2", "d-freethinker", "ideate", 2), ("p2", "p-freethinker", "ideate", 2),
    ("D2", "d-arbiter", "assess", 2, {"bridge": "passed", "bridge.top_ideas": "d's next"}),
    ("P2", "p-arbiter", "assess", 2, {"bridge": "skipped"}),
    ("Q2", "p-arbiter", "assess", 2, {"bridge": "passed", "bridge.themes": ""}),
    ("m2", "meta-arbiter", "merge", 2),
    ("d3", "d-freethinker", "ideate", 3), ("p3", "p-freethinker", "ideate", 3),
    ("D3", "d-arbiter", "assess", 3), ("P3", "p-arbiter", "assess", 3),
    ("d4", "d-freethinker", "ideate", 4), ("P4", "p-arbiter", "assess", 4),  # a later round
]


def dp(round_: int = 3) -> Run:
    return run_of("council", DP, round_, members=(), mode="dp")


def test_sees_narrows_a_visibility_to_the_steps_it_names():
    run = dp()
    assert run.steps.step("merge").sees == ("assess",)
    assert shown(run, "merge", "meta-arbiter") == ["D3", "P3"]  # all, of assess only
    assert shown(run, "merge", "meta-arbiter", "history") == ["D1", "P1", "D2", "P2", "Q2",
                                                              "D3", "P3", "P4"]
    assert shown(run, "ideate", "meta-arbiter", "history") == [
        "d1", "p1", "D1", "P1", "m1", "d2", "p2", "D2", "P2", "Q2", "m2", "d3", "p3", "D3",
        "P3", "d4", "P4"]  # a step that names none sees every step's


# --- group (council D/P): its group's turns of this round and the last, less its own in this
# step and round, and the other groups' bridge packets of the last round, the packets alone --

@pytest.mark.parametrize("alias, step, expected, packets", [
    ("d-arbiter", "assess", ["d2", "D2", "d3"], []),  # p passed no packet in round 2
    ("p-arbiter", "assess", ["p2", "D2", "P2", "Q2", "p3"], ["D2"]),
    ("d-freethinker", "ideate", ["d2", "D2", "D3"], []),
    ("p-freethinker", "ideate", ["p2", "D2", "P2", "Q2", "P3"], ["D2"]),
    ("meta-arbiter", "merge", [], []),  # in no group: nothing
])
def test_group(alias, step, expected, packets):
    run = dp()
    assert run.steps.step(step).visibility == ("all" if step == "merge" else "group")
    out = visibility.shown(run, run.steps.step(step), alias, "group")
    assert [t.msg for t in out] == expected
    bridged = [t for t in out if visibility.group_of(run, t.alias) != visibility.group_of(
        run, alias)]
    assert [t.msg for t in bridged] == packets
    for t in bridged:  # the packet alone crosses
        assert t.fields == {} and t.body.startswith("**Bridge packet**")
        assert t.body != next(u.body for u in run.turns if u.msg == t.msg)


def test_group_in_the_second_round_sees_the_first_round_s_packets():
    run = dp(2)
    assert [t.msg for t in visibility.shown(run, run.steps.step("assess"), "d-arbiter")] == [
        "d1", "D1", "P1", "d2"]
    assert [t.msg for t in visibility.shown(run, run.steps.step("ideate"), "p-freethinker")] \
        == ["p1", "D1", "P1", "P2", "Q2"]


def test_group_of():
    run = dp()
    assert [visibility.group_of(run, a) for a in ("d-freethinker", "p-arbiter", "meta-arbiter",
                                                  "someone")] == ["d", "p", "", ""]


@pytest.mark.parametrize("alias, step, other", [
    ("d-freethinker", "ideate", "assess"),  # (a step sorting before its own, and after)
    ("d-arbiter", "assess", "ideate"),
])
def test_group_shows_its_own_turns_of_another_step(alias, step, other):
    run = run_of("council", [("o3", alias, other, 3), ("s3", alias, step, 3)], 3, members=(),
                 mode="dp")
    assert shown(run, step, alias, "group") == ["o3"]


@pytest.mark.parametrize("name, expected", [
    ("previous", ["a2", "s2", "a3", "c2"]),  # round 2's, less its own
    ("question", ["s2"]),  # round 2's synthesis; round 3 has no question yet
    ("sequential", ["s2", "b6"]),
    ("all", ["c3"]),
])
def test_the_third_round_s_last_round_is_the_second(name, expected):
    assert shown(run_of("pcs", PCS, 3), "confirm", B, name) == expected


def test_question_without_a_synthesis_in_the_last_round_shows_no_older_one():
    assert shown(run_of("pcs", PCS, 4), "confirm", B, "question") == []


def test_group_names_are_compared_by_value(tmp_path):
    # group names of more than one letter, each role's read from its own line of the file
    bundled = Path(__file__).resolve().parent.parent / "protocols" / "council.yml"
    text = bundled.read_text()
    assert text.count("group: d,") == 2 and text.count("group: p,") == 2
    (tmp_path / "council.yml").write_text(text.replace("group: d,", "group: dreamers,")
                                          .replace("group: p,", "group: planners,"))
    run = run_of(tmp_path / "council.yml", DP, 3, members=(), mode="dp")
    assert visibility.group_of(run, "d-arbiter") == "dreamers"
    assert shown(run, "assess", "d-arbiter") == ["d2", "D2", "d3"]
    assert shown(run, "ideate", "p-freethinker") == ["p2", "D2", "P2", "Q2", "P3"]


@pytest.mark.parametrize("alias, step, other", [
    ("d-arbiter", "assess", "d-freethinker"),  # (another of its group, sorting after it)
    ("d-freethinker", "ideate", "d-arbiter"),  # (and before it)
])
def test_group_shows_its_group_s_others_in_its_step(alias, step, other):
    run = run_of("council", [("o3", other, step, 3), ("s3", alias, step, 3)], 3, members=(),
                 mode="dp")
    assert shown(run, step, alias, "group") == ["o3"]


def test_question_leaves_out_a_later_round_s_synthesis():
    run = run_of("pcs", PCS + [("s3", "synthesizer", "synthesize", 3)], 2)
    assert shown(run, "confirm", B, "question") == ["r1", "s2"]
