"""The exit rules (cascade.protocol.registry), each a pure function of the run the ledger gives:
a table of runs per rule -- the bundled protocol's data (or a variant of its YAML), who
deliberates, the turns, confirmations and a person's answers its rounds left -- and the whole
``Exit`` each must give after a round: whether the rounds end, its explanation, and for a
flow the next round's phase, direction, quiet rounds and probing round. Also the conditions
a decision point asks by (``escalated``, ``not_last``) and the conflicts a synthesis leaves
open. A rule returns its answer and never writes into the run.

Mutation testing (bench/mutation.py, scope ``exits``) runs this module against each mutant
of these rules, then the protocol tests against the survivors."""
from __future__ import annotations

import copy
import functools
import inspect
import tempfile
from pathlib import Path

import pytest
from msgspec.structs import replace

from protocol_steps import steps_for

from cascade.base.errors import CascadeError
from cascade.protocol import registry
from cascade.protocol.behaviours import REQUIRED, Exit
from cascade.protocol.loader import load_protocol, load_protocol_file
from cascade.protocol.runstate import Answer, Draft, Run, Turn
from cascade.base.resources import bundled

ABC = ("architect", "security", "pragmatist")
A, B, C = ABC
NAMES = {B: "Security Lead"}  # a persona's name where the run knows one, else its alias


def read(value: str) -> str:
    """``value`` as a ledger gives it: a string read from text, equal to the test's constants
    but not the same object (so a rule that compared by identity would fail here as on a
    real ledger)."""
    return value.encode().decode()


@functools.cache
def steps_of(protocol: str, strategy: str | None = None, cap: int | None = None,
             edits: tuple[tuple[str, str], ...] = ()):
    """The bundled protocol's steps for ``strategy`` (or flow) and round ``cap``; ``edits``
    (old, new) make a variant of its YAML text."""
    if not edits:
        return steps_for(load_protocol(protocol, None).steps, None, cap, strategy)
    text = (bundled("protocols") / f"{protocol}.yml").read_text()
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{protocol}.yml"
        path.write_text(text)
        return steps_for(load_protocol_file(path).steps, None, cap, strategy)


def run_of(steps, members=ABC, turns=(), verdicts=None, chosen=(), phase_of=None,
           quiet_until: int = 0, probed: bool = False) -> Run:
    """A run of ``steps`` whose ledger left ``turns`` ((alias, step, round, fields), in
    order), the confirmations ``verdicts`` and the person's answers ``chosen`` ((round, step,
    choice, text))."""
    run = Draft(steps, list(members), {r.id: r.persona for r in steps.fixed_roles})
    run.turns = [Turn(read(alias), f"AI-{alias}", read(step), round_, f"r{round_}-msg-{n:03d}",
                      n, f"{alias} in {step}.", {k: read(v) for k, v in fields.items()}, [],
                      10 * n, None)
                 for n, (alias, step, round_, fields) in enumerate(turns, 1)]
    run.closing.verdicts = {m: read(v) for m, v in (verdicts or {}).items()}
    run.decisions.chosen = {(r, step): Answer(read(choice), read(text), "Ana", 1000 + r)
                  for r, step, choice, text in chosen}
    if phase_of is not None:
        run.steering.phase_of = dict(phase_of)
    run.steering.quiet_until, run.steering.probed = quiet_until, probed
    run.terms.names = dict(NAMES)
    return run


def state(run: Run):
    """The whole run, every group of it, as a copy to compare with."""
    return copy.deepcopy(run)


def exit_of(rule, run: Run, round_: int) -> Exit:
    """The rule's answer after ``round_``, checking it left the run as it found it."""
    before = state(run)
    answer = registry.EXITS.call(rule, run, round_)
    assert state(run) == before
    return answer


# --- all_accept (pcs): every member confirmed the round's synthesis with ACCEPT ------------

PCS = steps_of("pcs")


@pytest.mark.parametrize("members, verdicts, expected", [
    (ABC, {A: "ACCEPT", B: "ACCEPT", C: "ACCEPT"},
     Exit(True, "all 3 participants accepted the synthesis in round 2")),
    ((A, B), {A: "ACCEPT", B: "ACCEPT"},
     Exit(True, "all 2 participants accepted the synthesis in round 2")),
    ((A,), {A: "ACCEPT", B: "REJECT"},  # only the members' confirmations count
     Exit(True, "all 1 participants accepted the synthesis in round 2")),
    (ABC, {A: "ACCEPT", B: "REJECT", C: "ACCEPT"},
     Exit(False, "Security Lead did not accept the synthesis of round 2")),
    (ABC, {A: "ACCEPT", B: "ACCEPT"},  # a missing confirmation is not consent
     Exit(False, "pragmatist did not accept the synthesis of round 2")),
    (ABC, {A: "PARTIAL", B: "ACCEPT", C: "accept"},  # only the exact verdict
     Exit(False, "architect, pragmatist did not accept the synthesis of round 2")),
    (ABC, {}, Exit(False, "architect, Security Lead, pragmatist did not accept the synthesis "
                          "of round 2")),
    ((), {}, Exit(False, "nobody did not accept the synthesis of round 2")),  # nobody: no
    # consensus
])
def test_all_accept(members, verdicts, expected):
    assert exit_of("all_accept", run_of(PCS, members, verdicts=verdicts), 2) == expected


# --- next_action (swarm): the round's decision point chose to synthesize, or followed the
# quality gate's recommendation to ----------------------------------------------------------

SWARM = steps_of("swarm")


def gate(round_: int, recommendation: str):
    return ("moderator", "quality", round_, {"recommendation": recommendation})


@pytest.mark.parametrize("turns, chosen, expected", [
    ([], [], Exit(False, "no choice to synthesize in round 2")),
    ([], [(1, "next", "synthesize", "")], Exit(False, "no choice to synthesize in round 2")),
    ([], [(2, "next", "synthesize", "")], Exit(True, "Ana chose synthesize in round 2")),
    ([gate(2, "continue")], [(2, "next", "synthesize", "")],
     Exit(True, "Ana chose synthesize in round 2")),  # the person's choice, not the gate's
    ([gate(2, "synthesize")], [(2, "next", "deep-dive", "the cache")],
     Exit(False, "Ana chose deep-dive in round 2")),
    ([], [(2, "next", "pause", "")], Exit(False, "Ana chose pause in round 2")),
    ([gate(2, "synthesize")], [(2, "next", "follow", "")],
     Exit(True, "round 2 followed the recommendation to synthesize")),
    ([gate(2, "deep-dive")], [(2, "next", "follow", "")],
     Exit(False, "round 2 followed the recommendation to deep-dive")),
    ([gate(2, "synthesize"), gate(2, "continue")], [(2, "next", "follow", "")],
     Exit(False, "round 2 followed the recommendation to continue")),  # the round's last
    ([gate(1, "synthesize")], [(2, "next", "follow", "")],
     Exit(False, "round 2 followed the recommendation to go on")),  # another round's
    ([gate(2, "synthesize"), gate(3, "continue")], [(2, "next", "follow", "")],
     Exit(True, "round 2 followed the recommendation to synthesize")),
    ([], [(2, "next", "follow", "")],
     Exit(False, "round 2 followed the recommendation to go on")),  # none given
])
def test_next_action(turns, chosen, expected):
    assert exit_of("next_action", run_of(SWARM, turns=turns, chosen=chosen), 2) == expected


def test_next_action_goes_on_by_any_other_choice():
    """Any choice but synthesize goes on, whatever it is called (a variant's own choice)."""
    pause = "      pause: stop here; a resume context is written and cascade run picks it up\n"
    steps = steps_of("swarm", edits=((pause, pause + "      wait: wait a round\n"),))
    run = run_of(steps, chosen=[(2, "next", "wait", "")])
    assert exit_of("next_action", run, 2) == Exit(False, "Ana chose wait in round 2")


def test_next_action_without_a_decision_point_goes_on():
    run = run_of(PCS, chosen=[(2, "confirm", "synthesize", "")])
    assert exit_of("next_action", run, 2) == Exit(False, "no choice to synthesize in round 2")


# --- converged (delphi): the members' last values of a number field in the round lie within
# ``within`` of each other (as a share of their median when ``relative``), once ``quorum``
# members gave one --------------------------------------------------------------------------

def converged(**params):
    return registry.EXITS.ref({"converged": {"field": "estimate", **params}},
                              Path("delphi.yml"), 1)


def estimates(round_: int, **values: str):
    return [(alias, "propose", round_, {"estimate": v} if v else {"basis": "x"})
            for alias, v in values.items()]


@pytest.mark.parametrize("params, turns, expected", [
    ({"within": 2}, estimates(2, architect="10", security="11", pragmatist="12"),  # at the limit
     Exit(True, "the 3 estimate values converged in round 2: spread 2 within 2 (10 to 12, "
                "median 11)")),
    ({"within": 2}, estimates(2, architect="10", security="12.5", pragmatist="11"),
     Exit(False, "the 3 estimate values did not converge in round 2: spread 2.5, more than 2 "
                 "(10 to 12.5, median 11)")),
    ({"within": 1.5}, estimates(2, architect="3", security="1", pragmatist="2"),
     Exit(False, "the 3 estimate values did not converge in round 2: spread 2, more than 1.5 "
                 "(1 to 3, median 2)")),
    ({"within": 0}, estimates(2, architect="4", security="4.0"),  # the default quorum: two
     Exit(True, "the 2 estimate values converged in round 2: spread 0 within 0 (4 to 4, "
                "median 4)")),
    ({"within": 9}, estimates(2, architect="14", security="10"),  # even: the middle two's mean
     Exit(True, "the 2 estimate values converged in round 2: spread 4 within 9 (10 to 14, "
                "median 12)")),
    ({"within": 9, "quorum": 4}, estimates(2, architect="10", security="1", pragmatist="2")
     + [("visionary", "propose", 2, {"estimate": "4"})],
     Exit(True, "the 4 estimate values converged in round 2: spread 9 within 9 (1 to 10, "
                "median 3)")),
    ({"within": 100}, estimates(2, architect="1", security="2", pragmatist="3")
     + [("visionary", "propose", 2, {"estimate": "4"}), ("skeptic", "propose", 2,
                                                        {"estimate": "100"})],
     Exit(True, "the 5 estimate values converged in round 2: spread 99 within 100 (1 to 100, "
                "median 3)")),
    ({"within": 12}, estimates(2, architect="13", security="1", pragmatist="8", visionary="2",
                               skeptic="5", ux="3"),
     Exit(True, "the 6 estimate values converged in round 2: spread 12 within 12 (1 to 13, "
                "median 4)")),
    ({"within": 2}, estimates(2, architect="10"),  # one short of the default quorum
     Exit(False, "1 estimate value(s) in round 2, fewer than 2")),
    ({"within": 2, "quorum": 3}, estimates(2, architect="10", security="10"),
     Exit(False, "2 estimate value(s) in round 2, fewer than 3")),
    ({"within": 2, "quorum": 3}, estimates(2, architect="10", security="10", pragmatist="11"),
     Exit(True, "the 3 estimate values converged in round 2: spread 1 within 2 (10 to 11, "
                "median 10)")),
    ({"within": 2, "quorum": 0}, [],  # a quorum of none is one
     Exit(False, "0 estimate value(s) in round 2, fewer than 1")),
    ({"within": 2, "quorum": 1}, estimates(2, security="7"),
     Exit(True, "the 1 estimate values converged in round 2: spread 0 within 2 (7 to 7, "
                "median 7)")),
    ({"within": 0.1, "relative": True},  # at the limit, as a share of the median
     estimates(2, architect="95", security="100", pragmatist="105"),
     Exit(True, "the 3 estimate values converged in round 2: spread 10% within 10% (95 to "
                "105, median 100)")),
    ({"within": 0.1, "relative": True},
     estimates(2, architect="90", security="100", pragmatist="120"),
     Exit(False, "the 3 estimate values did not converge in round 2: spread 30%, more than "
                 "10% (90 to 120, median 100)")),
    ({"within": 0.2, "relative": True},  # a negative median: its size
     estimates(2, architect="-110", security="-100", pragmatist="-90"),
     Exit(True, "the 3 estimate values converged in round 2: spread 20% within 20% (-110 to "
                "-90, median -100)")),
    ({"within": 0.5, "relative": True},  # a median of 0: the spread itself
     estimates(2, architect="-1", security="0", pragmatist="1"),
     Exit(False, "the 3 estimate values did not converge in round 2: spread 200%, more than "
                 "50% (-1 to 1, median 0)")),
    ({"within": 3, "relative": False}, estimates(2, architect="95", security="100"),
     Exit(False, "the 2 estimate values did not converge in round 2: spread 5, more than 3 "
                 "(95 to 100, median 97.5)")),
    # what counts: each member's last value in this round, a number, of this field
    ({"within": 2}, estimates(1, architect="50") + estimates(2, architect="10", security="11")
     + estimates(3, security="90"),
     Exit(True, "the 2 estimate values converged in round 2: spread 1 within 2 (10 to 11, "
                "median 10.5)")),
    ({"within": 2}, estimates(1, pragmatist="50") + estimates(2, architect="10", security="11"),
     Exit(True, "the 2 estimate values converged in round 2: spread 1 within 2 (10 to 11, "
                "median 10.5)")),  # an earlier round's value is not this round's
    ({"within": 2}, estimates(2, architect="50", security="11") + estimates(2, architect="10"),
     Exit(True, "the 2 estimate values converged in round 2: spread 1 within 2 (10 to 11, "
                "median 10.5)")),
    ({"within": 2}, estimates(2, architect="10", security="11")
     + [("facilitator", "synthesize", 2, {"estimate": "90"})],  # not a member
     Exit(True, "the 2 estimate values converged in round 2: spread 1 within 2 (10 to 11, "
                "median 10.5)")),
    ({"within": 2}, estimates(2, architect="about ten", security="10", pragmatist="11"),
     Exit(True, "the 2 estimate values converged in round 2: spread 1 within 2 (10 to 11, "
                "median 10.5)")),  # not a number: not counted
    ({"within": 2}, estimates(2, architect="", security="10", pragmatist="11"),
     Exit(True, "the 2 estimate values converged in round 2: spread 1 within 2 (10 to 11, "
                "median 10.5)")),  # no estimate field
])
def test_converged(params, turns, expected):
    run = run_of(PCS, ABC + ("visionary", "skeptic", "ux"), turns=turns)
    assert exit_of(converged(**params), run, 2) == expected


@pytest.mark.parametrize("within, problem", [
    (0, None), (0.0, None), (2.5, None), (3, None),
    (-1, "must be a number of at least 0"), (-0.5, "must be a number of at least 0"),
    (True, "must be a number of at least 0"), (False, "must be a number of at least 0"),
    ("2", "must be a number of at least 0"),
])
def test_converged_spread_is_a_number_of_at_least_0(within, problem):
    check = dict(registry.EXITS.behaviour("converged").params)["within"].check
    assert check(within) == problem


@pytest.mark.parametrize("name", [n for n in registry.EXITS.names()
                                  if registry.EXITS[n].__module__ == registry.__name__])
def test_an_exit_rule_s_own_defaults_are_the_ones_it_declares(name):
    """A rule called directly (not through its registry) takes the defaults a protocol gets."""
    behaviour = registry.EXITS.behaviour(name)
    signature = inspect.signature(behaviour.fn).parameters
    for param, declared in behaviour.params:
        default = signature[param].default
        if declared.default is REQUIRED:
            assert default is inspect.Parameter.empty, (name, param)
        else:
            assert (type(default), default) == (type(declared.default), declared.default), \
                (name, param)


def test_converged_refuses_a_negative_spread_by_file_and_line():
    with pytest.raises(CascadeError) as e:
        converged(within=-1)
    assert "exit rule 'converged': parameter 'within' must be a number of at least 0" in str(e.value)
    assert converged(within=0).kwargs == {"field": "estimate", "within": 0}


# --- open conflicts: what the round's (last) synthesis lists and does not mark resolved ----

ROUNDTABLE = steps_of("roundtable")
# a variant that asks for three rounds at least (rounds.min: 3)
LASTING = steps_of("roundtable", edits=(("rounds: {min: 1,", "rounds: {min: 3,"),))


def synthesis(round_: int, action: str = "continue", **fields: str):
    return ("facilitator", "synthesis", round_, {"next_action": action, **fields})


def answer(alias: str, round_: int, **fields: str):
    return (alias, "answer", round_, {"position": "x", **fields})


@pytest.mark.parametrize("turns, expected", [
    ([], []),
    ([synthesis(2, conflicts="cost: too high | scale: unknown")], ["cost", "scale"]),
    ([synthesis(2, conflicts="cost: too high | scale: unknown", resolved="cost: agreed")],
     ["scale"]),
    ([synthesis(2, conflicts="Cost Model: too high | |  | Scale", resolved="scale")],
     ["cost-model"]),
    ([synthesis(2, conflicts="a very long conflict identifier here and more: x")],
     ["a-very-long-conflict-identifie"]),  # at most 30 characters
    ([synthesis(2, conflicts="cost: x"), synthesis(2, conflicts="scale: y")], ["scale"]),
    ([synthesis(2, conflicts="cost: x"), answer(A, 2, concerns="scale: y")], ["cost"]),
    ([synthesis(1, conflicts="cost: x"), synthesis(3, conflicts="scale: y")], []),
    ([synthesis(2, conflicts="cost: x"), ("facilitator", "synthesis", 2, {"conflicts": "y"})],
     ["cost"]),  # a synthesis without a next action is not the round's
    ([synthesis(2, conflicts="cost: x | cost: again")], ["cost", "cost"]),
])
def test_open_conflicts(turns, expected):
    run = run_of(ROUNDTABLE, turns=turns)
    before = state(run)
    assert registry.open_conflicts(run, 2) == expected
    assert state(run) == before


# --- escalated (roundtable): why the round goes to a person, or None ----------------------

def escalated(run: Run, round_: int):
    before = state(run)
    why = registry.CONDITIONS.call("escalated", run, round_)
    assert state(run) == before
    return why


def open_in(*rounds: int, conflict: str = "cost: the price"):
    return [synthesis(r, conflicts=conflict) for r in rounds]


LONG = "the question assumes one database, " * 5


@pytest.mark.parametrize("turns, round_, expected", [
    ([], 3, None),
    ([synthesis(3)], 3, None),
    ([synthesis(3, "escalate", escalation_reason="the budget is a person's call")], 3,
     "the facilitator escalated: the budget is a person's call"),
    ([synthesis(3, "escalate")], 3, "the facilitator escalated: no reason given"),
    ([synthesis(3, "escalate"), synthesis(3)], 3, None),  # the round's last synthesis
    ([synthesis(3, "phase")], 3, None),
    ([synthesis(3, "conclude")], 3, None),
    ([synthesis(2, "escalate")], 3, None),  # another round's
    # a conflict open rounds.per_conflict (3) rounds running
    (open_in(1, 2, 3), 3, "conflict 'cost' is still open after 3 rounds"),
    (open_in(2, 3, 4), 4, "conflict 'cost' is still open after 3 rounds"),
    (open_in(1, 2, 3, 4), 4, "conflict 'cost' is still open after 3 rounds"),
    (open_in(1, 2), 2, None),
    (open_in(2, 3), 3, None),
    (open_in(1, 3), 3, None),
    (open_in(1, 2) + [synthesis(3, conflicts="cost: x", resolved="cost: y")], 3, None),
    (open_in(1, 2) + open_in(3, conflict="scale: new | cost: x"), 3,
     "conflict 'cost' is still open after 3 rounds"),  # the first open so long
    (open_in(1, 2, 3, conflict="cost: x | scale: y"), 3,
     "conflict 'cost' is still open after 3 rounds"),
    # a participant's confidence below 0.5
    ([answer(A, 3, confidence="0.4")], 3, "AI-architect's confidence is 0.4 (below 0.5)"),
    ([answer(A, 3, confidence="0.5")], 3, None),
    ([answer(A, 3, confidence="")], 3, None),
    ([answer(A, 3, confidence="unsure"), answer(B, 3, confidence="0.2")], 3,
     "AI-security's confidence is 0.2 (below 0.5)"),
    ([answer(A, 2, confidence="0.1")], 3, None),
    ([answer(A, 4, confidence="0.1"), answer(B, 4, concerns="legal")], 3, None),  # a later
    # round's (check re-derives each round with the whole ledger)
    ([("facilitator", "question", 3, {"focus": "x"}), answer(A, 3, confidence="0.3")], 3,
     "AI-architect's confidence is 0.3 (below 0.5)"),
    ([("someone", "aside", 3, {"confidence": "0.1"}), answer(A, 3, confidence="0.3")], 3,
     "AI-architect's confidence is 0.3 (below 0.5)"),  # a step the protocol lacks
    ([answer(A, 3, concerns="a security hole"), answer(B, 3, confidence="0.2")], 3,
     "AI-security's confidence is 0.2 (below 0.5)"),  # confidence first
    # a critical concern, or a challenge to the framing
    ([answer(A, 3, concerns="the Security model")], 3, "AI-architect names a security concern"),
    ([answer(A, 3, concerns="LEGAL review | cost")], 3, "AI-architect names a legal concern"),
    ([answer(A, 3, concerns="a must-have")], 3, "AI-architect names a must-have concern"),
    ([answer(A, 3, concerns="a must have")], 3, "AI-architect names a must have concern"),
    ([answer(A, 3, concerns="blocking it")], 3, "AI-architect names a blocking concern"),
    ([answer(A, 3, concerns="a blocker")], 3, "AI-architect names a blocker concern"),
    ([answer(A, 3, concerns="blocker, then legal")], 3, "AI-architect names a legal concern"),
    ([answer(A, 3, concerns="cost")], 3, None),
    ([answer(A, 2, concerns="security")], 3, None),
    ([answer(A, 3, challenge="Wrong question.")], 3,
     "AI-architect challenges the framing: Wrong question."),
    ([answer(A, 3, challenge=LONG)], 3, "AI-architect challenges the framing: " + LONG[:120]),
    ([answer(A, 3, challenge="  ")], 3, None),
    ([answer(A, 3, challenge="Wrong question."), answer(B, 3, concerns="security")], 3,
     "AI-architect challenges the framing: Wrong question."),
    ([answer(A, 3, concerns="cost", challenge="Wrong."), answer(B, 3, concerns="legal")], 3,
     "AI-architect challenges the framing: Wrong."),
    ([answer(A, 3, concerns="legal", challenge="Wrong.")], 3,
     "AI-architect names a legal concern"),
])
def test_escalated(turns, round_, expected):
    assert escalated(run_of(ROUNDTABLE, turns=turns), round_) == expected


@pytest.mark.parametrize("quiet_until, expected", [
    (2, "the facilitator escalated: x"), (3, None), (4, None)])
def test_escalated_quiet_after_continue(quiet_until, expected):
    run = run_of(ROUNDTABLE, turns=[synthesis(3, "escalate", escalation_reason="x")],
                 quiet_until=quiet_until)
    assert escalated(run, 3) == expected


@pytest.mark.parametrize("per_conflict, turns, expected", [
    (2, open_in(2, 3), "conflict 'cost' is still open after 2 rounds"),
    (2, open_in(3), None),
    (1, open_in(3), "conflict 'cost' is still open after 1 rounds"),
    (4, open_in(1, 2, 3), None),
])
def test_escalated_per_conflict(per_conflict, turns, expected):
    steps = steps_of("roundtable", edits=(("per_conflict: 3", f"per_conflict: {per_conflict}"),))
    assert escalated(run_of(steps, turns=turns), 3) == expected


def test_escalated_reads_the_members_steps_whatever_their_name():
    steps = steps_of("roundtable", edits=(("  - id: answer\n", "  - id: weigh\n"),
                                          ("sees: [question, answer,", "sees: [question, weigh,")))
    run = run_of(steps, turns=[("architect", "weigh", 3, {"confidence": "0.2"})])
    assert escalated(run, 3) == "AI-architect's confidence is 0.2 (below 0.5)"


@pytest.mark.parametrize("role", ["facilitator", "scribe"])  # before and after the members'
def test_escalated_never_by_the_facilitator_s_own_concern(role):
    fields = ("    fields: {focus: text, participants: list, concerns: list}\n"
              "    reads: {addressed: participants, concerns: concerns}")
    given = "    fields: {focus: text, participants: list}\n    reads: {addressed: participants}"
    steps = steps_of("roundtable", edits=((given, fields),
                                          ("{id: facilitator,", f"{{id: {role},"),
                                          ("role: facilitator", f"role: {role}")))
    run = run_of(steps, turns=[("facilitator", "question", 3, {"concerns": "security"})])
    assert escalated(run, 3) is None
    run = run_of(steps, turns=[answer(A, 3, concerns="security")])
    assert escalated(run, 3) == "AI-architect names a security concern"


def test_escalated_never_by_the_closing_vote():
    reads = ("    fields: {vote: [READY, CHANGES, REJECT], findings: findings, concerns: list}\n"
             "    reads: {concerns: concerns}\n")
    steps = steps_of("roundtable", edits=((
        "    fields: {vote: [READY, CHANGES, REJECT], findings: findings}\n", reads),))
    run = run_of(steps, turns=[(A, "vote", 3, {"vote": "CHANGES", "concerns": "security"})])
    assert escalated(run, 3) is None


def test_escalated_when_a_round_is_fewer_than_per_conflict():
    steps = steps_of("roundtable", edits=(("per_conflict: 3", "per_conflict: 4"),))
    assert escalated(run_of(steps, turns=open_in(1, 2, 3)), 3) is None
    assert escalated(run_of(steps, turns=open_in(0, 1, 2, 3)), 3) is None


# --- not_last (swarm): the round's decision point is asked but after the last round ---------

@pytest.mark.parametrize("cap, round_, expected", [
    (None, 1, True), (None, 2, True), (None, 3, False), (None, 4, False), (2, 1, True),
    (2, 2, False)])
def test_not_last(cap, round_, expected):
    run = run_of(steps_of("swarm", cap=cap))
    assert registry.CONDITIONS.call("not_last", run, round_) is expected


# --- facilitated (roundtable): the facilitator proposes, these rules decide -----------------

DISNEY = steps_of("roundtable", "disney")
GO_ON = "the facilitator goes on after round {}"


def stay(why: str = "", phase: int = 0, round_: int = 3, quiet: int | None = None) -> Exit:
    return Exit(False, why or GO_ON.format(round_), phase, why, quiet_until=quiet)


def advance(why: str = "", phase: int = 1, round_: int = 3, quiet: int | None = None) -> Exit:
    return Exit(False, why or f"round {round_ + 1} begins the next phase", phase, why,
                quiet_until=quiet)


def rounds(*phases: int) -> dict[int, int]:
    """Round -> phase, from round 1."""
    return dict(enumerate(phases, 1))


def confident(round_: int, *values: str):
    return [answer(alias, round_, confidence=v) for alias, v in zip(ABC, values)]


CONCLUDED = Exit(True, "the facilitator concluded in round 3")


def capped(round_: int) -> Exit:
    """The last round allowed: seed 003's fallback, said after the rounds."""
    return Exit(True, f"round {round_} is the last the roundtable allows: {registry.AT_CAP}",
                conclusion=f"{registry.AT_CAP} Recommendation: {registry.RECOMMEND}")


@pytest.mark.parametrize("steps, phase_of, turns, round_, expected", [
    # the last round allowed concludes, whatever was said
    (ROUNDTABLE, None, [], 20, capped(20)),
    (ROUNDTABLE, None, [synthesis(21, "continue")], 21,
     capped(21)),
    (ROUNDTABLE, None, [], 19, stay(round_=19)),
    (steps_of("roundtable", cap=4), None, [], 4,
     capped(4)),
    (steps_of("roundtable", cap=4), None, [synthesis(3, "conclude")], 3, CONCLUDED),
    # the facilitator goes on
    (ROUNDTABLE, None, [], 3, stay()),
    (ROUNDTABLE, None, [synthesis(3)], 3, stay()),
    (ROUNDTABLE, None, [synthesis(3, "escalate")], 3, stay()),
    (ROUNDTABLE, None, [synthesis(3, "")], 3, stay()),
    (ROUNDTABLE, None, [synthesis(3, "abandon")], 3, stay()),  # no action known
    (ROUNDTABLE, None, [synthesis(2, "conclude")], 3, stay()),  # another round's
    (ROUNDTABLE, None, [synthesis(3, "conclude"), synthesis(3)], 3, stay()),  # the last one's
    # conclude, in the last phase: not before rounds.min, nor with a conflict open
    (ROUNDTABLE, None, [synthesis(3, "conclude")], 3, CONCLUDED),
    (ROUNDTABLE, None, [synthesis(3, "conclude", conflicts="cost: x", resolved="cost: y")], 3,
     CONCLUDED),
    (LASTING, None, [synthesis(2, "conclude")], 2,
     stay("conclude refused: the discussion needs 3 rounds", round_=2)),
    (ROUNDTABLE, None, [synthesis(3, "conclude", conflicts="cost: x | scale: y")], 3,
     stay("conclude refused: conflicts are open (cost, scale)")),
    (LASTING, None, [synthesis(1, "conclude", conflicts="cost: x")], 1,
     stay("conclude refused: the discussion needs 3 rounds; conflicts are open (cost)",
          round_=1)),
    (DISNEY, rounds(0, 1, 2), [synthesis(3, "conclude")], 3, CONCLUDED),
    (DISNEY, rounds(0, 1, 2), [synthesis(3, "conclude", conflicts="cost: x")], 3,
     stay("conclude refused: conflicts are open (cost)", phase=2)),
    # conclude before the last phase: the next phase instead
    (DISNEY, None, [synthesis(1, "conclude")], 1,
     advance("a conclude before the strategy's last phase: the next phase instead",
             round_=1)),
    (DISNEY, rounds(0, 1, 1), [synthesis(3, "conclude")], 3,
     advance("a conclude before the strategy's last phase: the next phase instead", phase=2)),
    # phase: the next one, while there is one
    (DISNEY, None, [synthesis(1, "phase")], 1, advance(round_=1)),
    (DISNEY, rounds(0, 0, 1), [synthesis(3, "phase")], 3, advance(phase=2)),
    (DISNEY, rounds(0, 1, 2), [synthesis(3, "phase")], 3,
     stay("there is no phase after the last: continue, or conclude", phase=2)),
    (ROUNDTABLE, None, [synthesis(3, "phase")], 3,
     stay("there is no phase after the last: continue, or conclude")),
    (DISNEY, rounds(0, 0, 1), [synthesis(3, "continue")], 3, stay(phase=1)),
    (DISNEY, rounds(0, 0, 1), [synthesis(3, "wait")], 3, stay(phase=1)),  # no action known
    # a phase runs at most rounds.per_phase (10) rounds
    (DISNEY, rounds(*[0] * 10), [synthesis(10)], 10,
     advance("the Dreamer phase reached its 10 rounds: on to the next phase", round_=10)),
    (DISNEY, rounds(*[0] * 9), [synthesis(9)], 9, stay(round_=9)),
    (DISNEY, rounds(*[0] * 11), [synthesis(9)], 9, stay(round_=9)),  # rounds to come
    (DISNEY, rounds(*[0] * 10, *[1] * 10), [synthesis(20)], 20,
     capped(20)),
    (DISNEY, rounds(0, *[1] * 10), [synthesis(11, "conclude")], 11,
     advance("the Realist phase reached its 10 rounds: on to the next phase", phase=2,
             round_=11)),
    (DISNEY, rounds(0, 1, *[2] * 10), [synthesis(12)], 12, stay(phase=2, round_=12)),
])
def test_facilitated(steps, phase_of, turns, round_, expected):
    run = run_of(steps, turns=turns, phase_of=phase_of)
    assert exit_of("facilitated", run, round_) == expected


def test_facilitated_without_a_strategy():
    steps = replace(LASTING, strategy=None)
    assert exit_of("facilitated", run_of(steps, turns=[synthesis(3, "phase")]), 3) == stay()
    assert exit_of("facilitated", run_of(steps, turns=[synthesis(3, "conclude")]), 3) \
        == CONCLUDED
    assert exit_of("facilitated", run_of(steps, turns=[synthesis(2, "conclude")]), 2) \
        == stay("conclude refused: the discussion needs 3 rounds", round_=2)


# each phase at least its min_rounds (a variant whose phases need two rounds)

SLOW = steps_of("roundtable", "disney", edits=(("min_rounds: 1", "min_rounds: 2"),
                                               ("rounds: {min: 1,", "rounds: {min: 3,")))


@pytest.mark.parametrize("phase_of, turns, round_, expected", [
    (None, [synthesis(1, "conclude")], 1,
     stay("conclude refused: the Dreamer phase needs 2 round(s)", round_=1)),
    (None, [synthesis(1, "phase")], 1,
     stay("phase refused: the Dreamer phase needs 2 round(s)", round_=1)),
    (rounds(0, 0), [synthesis(2, "phase")], 2, advance(round_=2)),
    (rounds(0, 0), [synthesis(2, "conclude")], 2,
     advance("a conclude before the strategy's last phase: the next phase instead", round_=2)),
    (rounds(0, 0, 1), [synthesis(3, "phase")], 3,
     stay("phase refused: the Realist phase needs 2 round(s)", phase=1)),
    (rounds(0, 0, 1, 1, 2), [synthesis(5, "conclude")], 5,
     stay("conclude refused: the last phase needs 2 round(s)", phase=2, round_=5)),
    (rounds(0, 0, 1, 1, 2, 2), [synthesis(6, "conclude")], 6,
     Exit(True, "the facilitator concluded in round 6")),
    (rounds(0, 0, 1, 1, 2, 2, 2), [synthesis(7, "conclude")], 7,
     Exit(True, "the facilitator concluded in round 7")),
    (rounds(0, 2), [synthesis(2, "conclude", conflicts="cost: x")], 2,
     stay("conclude refused: the last phase needs 2 round(s); the discussion needs 3 rounds; "
          "conflicts are open (cost)", phase=2, round_=2)),
])
def test_facilitated_phase_minimum(phase_of, turns, round_, expected):
    run = run_of(SLOW, turns=turns, phase_of=phase_of)
    assert exit_of("facilitated", run, round_) == expected


# a person's answer to an escalation: accept or decide concludes; continue N goes on, quiet N

@pytest.mark.parametrize("turns, choice, text, expected", [
    ([synthesis(3, "escalate", recommendation="Adopt the queue.")], "accept", "",
     Exit(True, "Ana accepted the facilitator's recommendation: Adopt the queue.",
          conclusion="Ana accepted the facilitator's recommendation: Adopt the queue.")),
    ([synthesis(3, "escalate")], "accept", "",
     Exit(True, "Ana accepted the facilitator's recommendation",
          conclusion="Ana accepted the facilitator's recommendation")),
    ([], "accept", "", Exit(True, "Ana accepted the facilitator's recommendation",
                            conclusion="Ana accepted the facilitator's recommendation")),
    ([synthesis(3, "escalate", recommendation="Adopt the queue.")], "decide", "Use Postgres.",
     Exit(True, "Ana decided: Use Postgres.", conclusion="Ana decided: Use Postgres.")),
    ([synthesis(1, "conclude")], "decide", "Stop here.",  # even before rounds.min
     Exit(True, "Ana decided: Stop here.", conclusion="Ana decided: Stop here.")),
    ([synthesis(3, "escalate")], "continue", "2", stay(quiet=5)),
    ([synthesis(3, "escalate")], "continue", "12 more rounds", stay(quiet=15)),
    ([synthesis(3, "escalate")], "continue", "", stay(quiet=4)),
    ([synthesis(3, "escalate")], "continue", "a while", stay(quiet=4)),
    ([synthesis(3, "escalate")], "continue", "-2", stay(quiet=4)),
    ([synthesis(3, "conclude")], "continue", "2", Exit(True, "the facilitator concluded in "
                                                            "round 3", quiet_until=5)),
    ([synthesis(3, "conclude", conflicts="cost: x")], "continue", "",
     stay("conclude refused: conflicts are open (cost)", quiet=4)),
])
def test_facilitated_after_an_escalation(turns, choice, text, expected):
    round_ = 1 if turns and turns[0][2] == 1 else 3
    run = run_of(ROUNDTABLE, turns=turns, chosen=[(round_, "escalation", choice, text)])
    assert exit_of("facilitated", run, round_) == expected


@pytest.mark.parametrize("steps, phase_of, turns, expected", [
    (DISNEY, rounds(0, 0, 0), [synthesis(3, "phase")], advance(quiet=4)),
    (DISNEY, rounds(0, 0, 0), [synthesis(3, "conclude")],
     advance("a conclude before the strategy's last phase: the next phase instead", quiet=4)),
    (DISNEY, rounds(0, 1, 2), [synthesis(3, "phase")],
     stay("there is no phase after the last: continue, or conclude", phase=2, quiet=4)),
    (SLOW, rounds(0, 0, 1), [synthesis(3, "phase")],
     stay("phase refused: the Realist phase needs 2 round(s)", phase=1, quiet=4)),
    (SLOW, rounds(0, 0, 1), [synthesis(3, "conclude")],
     stay("conclude refused: the Realist phase needs 2 round(s)", phase=1, quiet=4)),
])
def test_facilitated_keeps_the_quiet_rounds(steps, phase_of, turns, expected):
    run = run_of(steps, turns=turns, phase_of=phase_of, chosen=[(3, "escalation", "continue",
                                                                 "")])
    assert exit_of("facilitated", run, 3) == expected


def test_facilitated_reads_the_escalation_of_this_round_only():
    run = run_of(ROUNDTABLE, turns=[synthesis(3)], chosen=[(2, "escalation", "accept", "")])
    assert exit_of("facilitated", run, 3) == stay()


def test_facilitated_reads_the_escalation_not_another_decision_point():
    aside = ("  - id: aside\n    title: Aside\n    role: person\n"
             "    question: Anything to add?\n    choices: [accept, decide, continue]\n"
             "    recommended: continue\n")
    steps = steps_of("roundtable", edits=(("  - id: escalation\n",
                                           aside + "  - id: escalation\n"),))
    run = run_of(steps, turns=[synthesis(3)], chosen=[(3, "aside", "accept", "")])
    assert exit_of("facilitated", run, 3) == stay()
    run = run_of(steps, turns=[synthesis(3)], chosen=[(3, "escalation", "accept", "")])
    assert exit_of("facilitated", run, 3) == Exit(
        True, "Ana accepted the facilitator's recommendation",
        conclusion="Ana accepted the facilitator's recommendation")


# a consensus that came too easily (no conflict ever, every confidence at least 0.8, two
# rounds or fewer) gets one probing round (the bundled roundtable may conclude after one round)

EARLY = ROUNDTABLE
PROBING = ("a probing round: the consensus came too easily (no conflict, every confidence at "
           "0.8 or more); look for what was missed")


def probing(quiet: int | None = None) -> Exit:
    return Exit(False, PROBING, 0, PROBING, quiet_until=quiet, probed=True)


@pytest.mark.parametrize("turns, round_, probed, expected", [
    (confident(1, "0.8", "0.9", "1") + [synthesis(1, "conclude")], 1, False, probing()),
    (confident(1, "0.8", "0.9") + confident(2, "0.95") + [synthesis(2, "conclude")], 2, False,
     probing()),
    (confident(1, "0.8", "0.9", "1") + [synthesis(1, "conclude")], 1, True,
     Exit(True, "the facilitator concluded in round 1")),  # given once
    (confident(3, "0.8", "0.9", "1") + [synthesis(3, "conclude")], 3, False,
     Exit(True, "the facilitator concluded in round 3")),  # more than two rounds
    (confident(1, "0.8", "0.79", "1") + [synthesis(1, "conclude")], 1, False,
     Exit(True, "the facilitator concluded in round 1")),
    (confident(1, "0.3") + confident(2, "0.9", "0.9") + [synthesis(2, "conclude")], 2, False,
     Exit(True, "the facilitator concluded in round 2")),  # every confidence, every round
    (confident(1, "0.9", "high") + [synthesis(1, "conclude")], 1, False,
     Exit(True, "the facilitator concluded in round 1")),  # not a number
    ([answer(A, 1), synthesis(1, "conclude")], 1, False,
     Exit(True, "the facilitator concluded in round 1")),  # no confidence given
    (confident(1, "0.9") + [synthesis(1, "continue", conflicts="cost: x", resolved="cost: y")]
     + confident(2, "0.9") + [synthesis(2, "conclude")], 2, False,
     Exit(True, "the facilitator concluded in round 2")),  # a conflict once
    (confident(1, "0.9") + [synthesis(1, "continue", resolved="cost: y")]
     + confident(2, "0.9") + [synthesis(2, "conclude")], 2, False, probing()),
    (confident(1, "0.9") + [synthesis(1, "continue"), answer(B, 1, concerns="cost: x")]
     + [synthesis(2, "conclude")], 2, False, probing()),  # a concern is no conflict
    (confident(1, "0.9") + [("facilitator", "question", 1, {"conflicts": "cost: x"})]
     + [synthesis(1, "conclude")], 1, False, probing()),
])
def test_facilitated_probes_a_consensus_too_easy(turns, round_, probed, expected):
    run = run_of(EARLY, turns=turns, probed=probed)
    assert exit_of("facilitated", run, round_) == expected


def test_a_probing_round_keeps_the_quiet_rounds():
    run = run_of(EARLY, turns=confident(2, "0.9") + [synthesis(2, "conclude")],
                 chosen=[(2, "escalation", "continue", "3")])
    assert exit_of("facilitated", run, 2) == probing(quiet=5)


# --- scheduled (council): a set number of rounds, each in the phase its place gives it -----

DEBATE = steps_of("council", "debate")  # opening (first), rebuttal (middle), final (last)
SET = "a set number of rounds ({})"


@pytest.mark.parametrize("steps, round_, expected", [
    (DEBATE, 1, Exit(False, SET.format(3), 1)),
    (DEBATE, 2, Exit(False, SET.format(3), 2)),
    (DEBATE, 3, Exit(False, SET.format(3), 2)),
    (steps_of("council", "debate", cap=5), 3, Exit(False, SET.format(5), 1)),
    (steps_of("council", "debate", cap=2), 1, Exit(False, SET.format(2), 2)),
    (steps_of("council", "debate", edits=(("rounds: [2, 3]", "rounds: [2, 5]"),)), 3,
     Exit(False, SET.format(5), 1)),
    (steps_of("council", "debate", edits=(("rounds: [2, 3]", "rounds: [2, 5]"),)), 4,
     Exit(False, SET.format(5), 2)),
    (steps_of("council", "debate", edits=(("rounds: [2, 3]", "rounds: [2, 5]"),)), 5,
     Exit(False, SET.format(5), 2)),
    (steps_of("council", "parallel"), 1, Exit(False, SET.format(1), 2)),  # past the last
    # a phase without ``at`` covers the rounds no phase's ``at`` names
    (steps_of("council", "debate", edits=(("at: middle, ", ""),)), 1,
     Exit(False, SET.format(3), 1)),
    (steps_of("council", "debate", edits=(("at: last, ", ""),)), 2,
     Exit(False, SET.format(3), 2)),
    (steps_of("council", "debate", edits=(("at: first, ", ""),)), 1,
     Exit(False, SET.format(3), 1)),
    (steps_of("council", "debate", edits=(("at: middle, ", "at: first, "),)), 1,
     Exit(False, SET.format(3), 0)),  # none: the first phase
])
def test_scheduled(steps, round_, expected):
    assert exit_of("scheduled", run_of(steps, ("pragmatist", "visionary", "skeptic")),
                   round_) == expected


def test_scheduled_without_phases_never_ends():
    steps = replace(DEBATE, strategy=None)
    assert exit_of("scheduled", run_of(steps), 1) == Exit(False, SET.format(3))
    assert exit_of("scheduled", run_of(steps), 3) == Exit(False, SET.format(3))
