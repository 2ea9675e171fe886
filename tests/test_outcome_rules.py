"""The outcome rules (cascade.protocol.registry), pinned before the engine's redesign: each is
a pure function of the run the ledger gives. A table of runs per rule -- the bundled
protocol's data, who deliberates, the turns and verdicts its rounds left -- and the outcome
each must give, with the verdicts it counted (what status and the record show). A rule
returns its answer and never writes into the run."""
from __future__ import annotations

import copy

import pytest

from protocol_steps import steps_for

from cascade.ledger.consensus import ConsensusResult, VotingConfig
from cascade.protocol import registry
from cascade.protocol.ballot import Ballot, counted, result_of, with_people
from cascade.protocol.behaviours import Exit, Ruling
from cascade.protocol.loader import load_protocol
from cascade.protocol.runstate import Run, Turn, draft

ABC = ("architect", "security", "pragmatist")
A, B, C = ABC


def run_of(protocol: str, members=ABC, turns=(), verdicts=None, consensus=None,
           strategy: str | None = None, mode: str | None = None) -> Run:
    """A run of ``protocol`` whose ledger left ``turns`` ((alias, step, round, fields), in
    order) and, for a confirming step, ``verdicts``."""
    steps = steps_for(load_protocol(protocol, None).steps, mode, None, strategy)
    run = draft(steps, list(members), {r.id: r.persona for r in steps.fixed_roles},
                consensus=consensus)
    run.turns = [Turn(alias, f"AI-{alias}", step, round_, f"r{round_}-msg-{n:03d}", n,
                      f"{alias} in {step}.", dict(fields), [], 10 * n, None)
                 for n, (alias, step, round_, fields) in enumerate(turns, 1)]
    run.closing.verdicts = dict(verdicts or {})
    return run


def outcome(rule: str, run: Run, round_: int, ended: bool = False):
    """The rule's verdict, checking it left the run as it found it."""
    before = copy.deepcopy(run)
    verdict = registry.OUTCOMES.call(rule, run, round_, Exit(ended))
    assert run == before
    assert verdict.why
    return verdict


# --- all_accept (pcs): every member confirmed with ACCEPT ---------------------------------

@pytest.mark.parametrize("members, verdicts, accepted", [
    (ABC, {A: "ACCEPT", B: "ACCEPT", C: "ACCEPT"}, True),
    (ABC, {A: "ACCEPT", B: "ACCEPT", C: "REJECT"}, False),
    (ABC, {A: "ACCEPT", B: "ACCEPT"}, False),  # a missing verdict is not consent
    (ABC, {A: "ACCEPT", B: "ACCEPT", C: "PARTIAL"}, False),  # saw part of the document
    (ABC, {A: "ACCEPT", B: "ACCEPT", C: "accept"}, False),  # only the exact verdict
    ((A,), {A: "ACCEPT", B: "REJECT"}, True),  # only the members' verdicts count
    ((), {}, False),  # nobody deliberated: no consensus
])
def test_all_accept(members, verdicts, accepted):
    run = run_of("pcs", members, verdicts=verdicts)
    assert registry.EXITS.call("all_accept", run, 1).ends is accepted
    assert outcome("all_accept", run, 1).outcome == ("READY" if accepted else "IMPASSE")


# --- thresholds (swarm, roundtable): the closing vote, by the consensus thresholds ---------

@pytest.mark.parametrize("verdicts, consensus, expected", [
    ({A: "READY", B: "READY", C: "READY"}, None, "READY"),
    ({A: "READY", B: "READY", C: "CHANGES"}, None, "READY"),  # 2/3 meets 0.67
    ({A: "READY", B: "CHANGES", C: "CHANGES"}, None, "CHANGES"),
    ({A: "READY", B: "READY", C: "REJECT"}, None, "CHANGES"),  # one REJECT holds it back
    ({A: "REJECT", B: "REJECT", C: "READY"}, None, "REJECT"),
    ({A: "REJECT", B: "CHANGES", C: "CHANGES"}, None, "CHANGES"),
    ({A: "READY", B: "READY"}, None, "READY"),  # C's missing vote counts against: 2/3
    ({A: "READY"}, None, "CHANGES"),
    ({A: "READY", B: "PARTIAL", C: "PARTIAL"}, None, "CHANGES"),  # not counted: 1/3
    ({A: "READY", B: "READY", C: "PARTIAL"}, None, "READY"),
    ({}, None, "CHANGES"),  # no vote at all
    ({A: "READY", B: "READY", C: "CHANGES"}, VotingConfig(threshold_ready=1.0), "CHANGES"),
    ({A: "READY", B: "READY", C: "REJECT"}, VotingConfig(threshold_reject=0.5), "READY"),
    ({A: "READY", B: "READY", C: "READY"}, VotingConfig(human_required=True), "READY"),  # the
    # gate applies human_required, as for any protocol's READY
])
def test_thresholds(verdicts, consensus, expected):
    outcome_ = outcome
    for protocol, strategy in (("swarm", None), ("roundtable", "standard")):
        run = run_of(protocol, verdicts=verdicts, consensus=consensus, strategy=strategy)
        assert outcome_("thresholds", run, 3).outcome == expected, protocol


# --- consent (roundtable consensus-driven): no member BLOCKs in the last round -------------

def answers(round_: int, **consent: str):
    return [(alias, "answer", round_, {"consent": value} if value else {"position": "x"})
            for alias, value in consent.items()]


@pytest.mark.parametrize("turns, expected, counted", [
    (answers(3, architect="SUPPORT", security="SUPPORT", pragmatist="SUPPORT"), "READY",
     {A: "SUPPORT", B: "SUPPORT", C: "SUPPORT"}),
    (answers(3, architect="SUPPORT", security="STAND-ASIDE", pragmatist="SUPPORT"), "READY",
     {A: "SUPPORT", B: "STAND-ASIDE", C: "SUPPORT"}),
    (answers(3, architect="SUPPORT", security="BLOCK", pragmatist="SUPPORT"), "CHANGES",
     {A: "SUPPORT", B: "BLOCK", C: "SUPPORT"}),
    (answers(3, architect="SUPPORT", security="SUPPORT"), "CHANGES",  # no consent: BLOCK
     {A: "SUPPORT", B: "SUPPORT", C: "BLOCK"}),
    (answers(3, architect="SUPPORT", security="SUPPORT", pragmatist=""), "CHANGES",
     {A: "SUPPORT", B: "SUPPORT", C: "BLOCK"}),  # an answer without a consent field
    (answers(2, architect="BLOCK", security="BLOCK", pragmatist="BLOCK")
     + answers(3, architect="SUPPORT", security="SUPPORT", pragmatist="SUPPORT"), "READY",
     {A: "SUPPORT", B: "SUPPORT", C: "SUPPORT"}),  # only the last round counts
    (answers(3, architect="SUPPORT", security="SUPPORT", pragmatist="SUPPORT")
     + answers(4, pragmatist="BLOCK"), "READY",
     {A: "SUPPORT", B: "SUPPORT", C: "SUPPORT"}),  # a later round is not this one's
    (answers(2, pragmatist="SUPPORT") + answers(3, architect="SUPPORT", security="SUPPORT"),
     "CHANGES", {A: "SUPPORT", B: "SUPPORT", C: "BLOCK"}),
])
def test_consent(turns, expected, counted):
    run = run_of("roundtable", turns=turns, strategy="consensus-driven")
    assert run.steps.outcome.name == "consent"
    verdict = outcome("consent", run, 3)
    assert verdict.outcome == expected
    assert verdict.counted == counted


def test_consent_without_members_is_not_ready():
    run = run_of("roundtable", members=(), strategy="consensus-driven")
    assert outcome("consent", run, 1).outcome == "CHANGES"


# --- referee (council): the last verdict of an after step ---------------------------------

def said(alias: str, step: str, round_: int = 1, **fields: str):
    return (alias, step, round_, fields)


@pytest.mark.parametrize("mode, turns, expected, counted", [
    ("personality", [said("referee", "verdict", verdict="READY")], "READY",
     {"referee": "READY"}),
    ("personality", [said("referee", "verdict", verdict="CHANGES")], "CHANGES",
     {"referee": "CHANGES"}),
    ("personality", [said("referee", "verdict", verdict="REJECT")], "REJECT",
     {"referee": "REJECT"}),
    ("personality", [said("referee", "verdict", verdict="MAYBE")], "REJECT",
     {"referee": "MAYBE"}),  # fails closed
    ("personality", [], "REJECT", {}),  # no verdict given
    ("personality", [said(A, "advise", verdict="READY")], "REJECT", {}),  # a round step's
    # field is no verdict
    ("personality", [said("referee", "verdict", verdict="READY"),
                     said("referee", "verdict", 2, verdict="CHANGES")], "CHANGES",
     {"referee": "CHANGES"}),  # the last one
    ("personality", [said("referee", "verdict", verdict="CHANGES"),
                     said("referee", "verdict", 2, minority="none")], "CHANGES",
     {"referee": "CHANGES"}),  # the last that gives one
    ("dp", [said("d-arbiter", "assess", verdict="READY"),
            said("meta-arbiter", "merge", verdict="CHANGES")], "CHANGES",
     {"meta-arbiter": "CHANGES"}),
    ("dp", [said("meta-arbiter", "merge", verdict="READY")], "READY",
     {"meta-arbiter": "READY"}),
])
def test_referee(mode, turns, expected, counted):
    members = () if mode == "dp" else ("pragmatist", "visionary", "skeptic")
    run = run_of("council", members, turns, verdicts={"someone": "READY"}, mode=mode)
    verdict = outcome("referee", run, 1)
    assert verdict.outcome == expected
    assert verdict.counted == counted


# --- exit rules: what the next round is, returned, never written into the run -------------

def test_facilitated_returns_the_next_round_and_leaves_the_run_alone():
    run = run_of("roundtable", turns=[("facilitator", "synthesis", 1,
                                       {"next_action": "conclude", "conflicts": ""})],
                 strategy="disney")
    before = copy.deepcopy(run)  # every group of it: steering, decisions, closing, ...
    exit_ = registry.EXITS.call("facilitated", run, 1)
    assert run == before
    assert not exit_.ends and exit_.phase == 1  # a conclude before the last phase: the next
    assert exit_.direction == exit_.why == ("a conclude before the strategy's last phase: the "
                                            "next phase instead")


def test_scheduled_names_each_round_s_phase():
    run = run_of("council", strategy="debate")
    steps = run.steps
    assert [registry.EXITS.call("scheduled", run, r).phase for r in range(1, steps.rounds.max)] \
        == [1] * (steps.rounds.max - 2) + [2]
    assert run.steering.phase_of == {1: 0}


# --- the explanation: each rule's whole verdict (why, what it counted, the tally, the names
# against it and missing), as status, the record and check print it -----------------------

NAMES = {B: "Security Lead"}  # a persona's name where the run knows one, else its alias


def read(value: str) -> str:
    """``value`` as a ledger gives it: a string read from text, equal to the rule's constants
    but not the same object (so a rule that compared by identity would fail here as on a
    real ledger)."""
    return value.encode().decode()


def verdict_of(rule: str, run: Run, round_: int, exit_: Exit | None = None) -> Ruling:
    run.terms.names = dict(NAMES)
    run.closing.verdicts = {m: read(v) for m, v in run.closing.verdicts.items()}
    for t in run.turns:
        t.fields = {k: read(v) for k, v in t.fields.items()}
    before = copy.deepcopy(run)
    verdict = registry.OUTCOMES.call(rule, run, round_, exit_ or Exit(False))
    assert run == before
    return verdict


@pytest.mark.parametrize("ended, expected", [
    (True, Ruling("READY", "the rule's reason", {A: "ACCEPT"})),
    (False, Ruling("IMPASSE", "impasse after 3 rounds (the rule's reason)", {A: "ACCEPT"})),
])
def test_exit_explained(ended, expected):
    run = run_of("pcs", verdicts={A: "ACCEPT"})
    assert verdict_of("exit", run, 3, Exit(ended, "the rule's reason")) == expected


@pytest.mark.parametrize("members, verdicts, expected", [
    (ABC, {A: "ACCEPT", B: "ACCEPT", C: "ACCEPT"}, Ruling(
        "READY", "all 3 participants accepted the synthesis in round 2",
        {A: "ACCEPT", B: "ACCEPT", C: "ACCEPT"}, {"ACCEPT": 3, "REJECT": 0})),
    (ABC, {A: "ACCEPT", B: "REJECT", "visitor": "ACCEPT"}, Ruling(
        "IMPASSE", "impasse after 2 rounds (Security Lead rejected the last synthesis; no "
                   "confirmation from pragmatist)",
        {A: "ACCEPT", B: "REJECT"}, {"ACCEPT": 1, "REJECT": 1}, ("Security Lead",))),
    (ABC, {A: "ACCEPT", B: "ACCEPT", C: "PARTIAL"}, Ruling(
        "IMPASSE", "impasse after 2 rounds (pragmatist rejected the last synthesis)",
        {A: "ACCEPT", B: "ACCEPT", C: "PARTIAL"}, {"ACCEPT": 2, "REJECT": 1}, (C,))),
    (ABC, {A: "ACCEPT", B: "ABSTAIN", C: "ACCEPT"}, Ruling(  # any other verdict, even one
        # sorting before ACCEPT, is against
        "IMPASSE", "impasse after 2 rounds (Security Lead rejected the last synthesis)",
        {A: "ACCEPT", B: "ABSTAIN", C: "ACCEPT"}, {"ACCEPT": 2, "REJECT": 1},
        ("Security Lead",))),
    (ABC, {A: "ACCEPT", B: "ACCEPT"}, Ruling(
        "IMPASSE", "impasse after 2 rounds (no confirmation from pragmatist)",
        {A: "ACCEPT", B: "ACCEPT"}, {"ACCEPT": 2, "REJECT": 0})),
    ((), {}, Ruling("IMPASSE", "impasse after 2 rounds (nobody deliberated)", {},
                     {"ACCEPT": 0, "REJECT": 0})),
])
def test_all_accept_explained(members, verdicts, expected):
    assert verdict_of("all_accept", run_of("pcs", members, verdicts=verdicts), 2) == expected


@pytest.mark.parametrize("verdicts, expected", [
    ({A: "READY", B: "READY", C: "READY"}, Ruling(
        "READY", "the closing vote after round 3: 3/3 READY", {A: "READY", B: "READY",
                                                                C: "READY"},
        {"READY": 3, "CHANGES": 0, "REJECT": 0})),
    ({A: "READY", B: "READY", C: "CHANGES"}, Ruling(
        "READY", "the closing vote after round 3: 2/3 READY", {A: "READY", B: "READY",
                                                                C: "CHANGES"},
        {"READY": 2, "CHANGES": 1, "REJECT": 0})),
    ({A: "READY", B: "CHANGES", C: "PARTIAL"}, Ruling(
        "CHANGES", "the closing vote after round 3: 1 READY, 1 CHANGES, 1 REJECT (not READY: "
                   "Security Lead, pragmatist)",
        {A: "READY", B: "CHANGES", C: "PARTIAL"}, {"READY": 1, "CHANGES": 1, "REJECT": 1},
        ("Security Lead", C))),
    ({A: "REJECT", B: "REJECT", C: "READY"}, Ruling(
        "REJECT", "the closing vote after round 3: 1 READY, 2 REJECT (not READY: architect, "
                  "Security Lead)",
        {A: "REJECT", B: "REJECT", C: "READY"}, {"READY": 1, "CHANGES": 0, "REJECT": 2},
        (A, "Security Lead"))),
    ({A: "READY"}, Ruling(
        "CHANGES", "the closing vote after round 3: 1 READY (no vote: Security Lead, "
                   "pragmatist)",
        {A: "READY"}, {"READY": 1, "CHANGES": 0, "REJECT": 0}, (), ("Security Lead", C))),
    ({}, Ruling("CHANGES", "the closing vote after round 3: no votes (no vote: architect, "
                            "Security Lead, pragmatist)",
                 {}, {"READY": 0, "CHANGES": 0, "REJECT": 0}, (), (A, "Security Lead", C))),
])
def test_thresholds_explained(verdicts, expected):
    assert verdict_of("thresholds", run_of("swarm", verdicts=verdicts), 3) == expected


@pytest.mark.parametrize("members, turns, expected", [
    (ABC, answers(3, architect="SUPPORT", security="STAND-ASIDE", pragmatist="SUPPORT"),
     Ruling("READY", "consent after round 3", {A: "SUPPORT", B: "STAND-ASIDE", C: "SUPPORT"},
             {"SUPPORT": 2, "STAND-ASIDE": 1, "BLOCK": 0})),
    (ABC, answers(3, architect="SUPPORT", security="BLOCK"),
     Ruling("CHANGES", "no consent after round 3: BLOCK from Security Lead, pragmatist",
             {A: "SUPPORT", B: "BLOCK", C: "BLOCK"}, {"SUPPORT": 1, "STAND-ASIDE": 0,
                                                      "BLOCK": 2},
             ("Security Lead", C))),
    ((), [], Ruling("CHANGES", "no consent after round 3: nobody deliberated", {},
                     {"SUPPORT": 0, "STAND-ASIDE": 0, "BLOCK": 0})),
])
def test_consent_explained(members, turns, expected):
    run = run_of("roundtable", members, turns, strategy="consensus-driven")
    assert verdict_of("consent", run, 3) == expected


@pytest.mark.parametrize("turns, expected", [
    ([said("referee", "verdict", verdict="READY")], Ruling(
        "READY", "the referee's verdict after round 1: READY", {"referee": "READY"},
        {"READY": 1, "CHANGES": 0, "REJECT": 0})),
    ([said("referee", "verdict", verdict="CHANGES")], Ruling(
        "CHANGES", "the referee's verdict after round 1: CHANGES", {"referee": "CHANGES"},
        {"READY": 0, "CHANGES": 1, "REJECT": 0}, ("AI-referee",))),
    ([said("referee", "verdict", verdict="MAYBE")], Ruling(
        "REJECT", "the referee's verdict after round 1: REJECT", {"referee": "MAYBE"},
        {"READY": 0, "CHANGES": 0, "REJECT": 1}, ("AI-referee",))),
    ([], Ruling("REJECT", "no referee's verdict after round 1: REJECT", {},
                 {"READY": 0, "CHANGES": 0, "REJECT": 0})),
    # the last verdict given counts, whoever gave it (a referee replaced in the panel)
    ([said("referee", "verdict", verdict="REJECT"), said("judge", "verdict", verdict="READY")],
     Ruling("READY", "the referee's verdict after round 1: READY", {"judge": "READY"},
             {"READY": 1, "CHANGES": 0, "REJECT": 0})),
    ([said("referee", "verdict", verdict="REJECT"), said("judge", "verdict", verdict="CHANGES")],
     Ruling("CHANGES", "the referee's verdict after round 1: CHANGES", {"judge": "CHANGES"},
             {"READY": 0, "CHANGES": 1, "REJECT": 0}, ("AI-judge",))),  # the last one's name
])
def test_referee_explained(turns, expected):
    run = run_of("council", ("pragmatist", "visionary", "skeptic"), turns, mode="personality")
    assert verdict_of("referee", run, 1) == expected


# --- a protocol of phases: its standing ballot, counted by thresholds; then the rule's
# settings about people, for any protocol (cascade.protocol.ballot) ---------------------------

P, Q = "Pat", "Quinn"  # people
NAMES3 = ("AI-Architect", "AI-Security", "AI-Pragmatist")


@pytest.mark.parametrize("votes, consensus, expected, why, against, missing", [
    ({}, None, "CHANGES", "0/3 READY, needs 67%", (), NAMES3),
    (dict(zip(NAMES3, ["READY"] * 3)), None, "READY", "3/3 READY", (), ()),
    ({NAMES3[0]: "READY", NAMES3[1]: "READY"}, None, "READY", "2/3 READY", (), (NAMES3[2],)),
    ({NAMES3[0]: "READY", NAMES3[1]: "CHANGES"}, None, "CHANGES", "1/3 READY, needs 67%",
     (NAMES3[1],), (NAMES3[2],)),
    ({NAMES3[0]: "READY", NAMES3[1]: "READY", NAMES3[2]: "REJECT"}, None, "CHANGES",
     f"REJECT from {NAMES3[2]}", (NAMES3[2],), ()),
    ({NAMES3[0]: "REJECT", NAMES3[1]: "REJECT", NAMES3[2]: "READY"}, None, "REJECT",
     "2/3 REJECT", (NAMES3[0], NAMES3[1]), ()),
    ({**dict(zip(NAMES3, ["READY"] * 3)), P: "CHANGES"}, VotingConfig(threshold_ready=1.0),
     "CHANGES", "3/4 READY, needs 100%", (P,), ()),  # a person votes alongside
])
def test_a_phase_s_ballot_is_counted_by_thresholds(votes, consensus, expected, why, against,
                                                   missing):
    for protocol in ("review", "phased"):
        steps = load_protocol(protocol, None).steps
        verdict = counted(steps, Ballot(votes, frozenset({P}) & set(votes), frozenset(),
                                        NAMES3), consensus)
        assert (verdict.outcome, verdict.why) == (expected, why), protocol
        assert (verdict.against, verdict.missing) == (against, missing), protocol
        assert verdict.counted == votes


def panel(outcome: str | None, reason: str = "the panel's reason"):
    reached = outcome in ("READY", "REJECT")
    return ConsensusResult(reached, outcome if reached else None, {"READY": 2}, [], [], reason,
                           {"AI-Other": "READY"})


@pytest.mark.parametrize("config, result, votes, attributed, reached, outcome, why", [
    (VotingConfig(), "READY", {}, (), True, "READY", "the panel's reason"),
    (VotingConfig(), "CHANGES", {P: "READY"}, (P,), False, None, "the panel's reason"),
    (VotingConfig(human_required=True), "READY", {}, (), False, None,
     "a human READY vote is required"),
    (VotingConfig(human_required=True), "READY", {P: "READY"}, (P,), True, "READY",
     "the panel's reason"),
    (VotingConfig(human_required=True), "READY", {P: "CHANGES"}, (P,), False, None,
     "a human READY vote is required"),
    (VotingConfig(human_required=True), "READY", {P: "READY", Q: "READY"}, (Q,), True,
     "READY", "the panel's reason"),
    (VotingConfig(human_required=True), "READY", {P: "READY"}, (), False, None,
     "a human READY vote is required (Pat's READY was added in a commit by someone else)"),
    (VotingConfig(human_required=True), "READY", {P: "REJECT"}, (P,), False, None,
     "a human READY vote is required"),
    (VotingConfig(human_required=True), "READY", {P: "CHANGES", Q: "REJECT"}, (), False, None,
     "a human READY vote is required"),  # nobody's READY was added by someone else
    (VotingConfig(human_required=True), "CHANGES", {}, (), False, None, "the panel's reason"),
    (VotingConfig(human_required=True), "REJECT", {}, (), True, "REJECT", "the panel's reason"),
    (VotingConfig(persona_votes="advisory"), "READY", {NAMES3[0]: "READY"}, (), False, None,
     "waiting for a person's vote; the panel's votes are advisory"),
    (VotingConfig(persona_votes="advisory"), "CHANGES", {P: "READY", NAMES3[0]: "CHANGES"},
     (P,), True, "READY", "1/1 READY"),
    (VotingConfig(persona_votes="advisory"), "READY", {P: "CHANGES"}, (P,), False, None,
     "0/1 READY, needs 67%"),
    (VotingConfig(persona_votes="advisory", human_required=True), "READY",
     {P: "READY", NAMES3[0]: "READY"}, (), False, None,
     "a human READY vote is required (Pat's READY was added in a commit by someone else)"),
])
def test_the_rule_s_people_settings_over_any_panel_s_verdict(config, result, votes, attributed,
                                                             reached, outcome, why):
    people = frozenset(n for n in votes if n in (P, Q))
    got = with_people(panel(result), Ballot(votes, people, frozenset(attributed), NAMES3),
                      config)
    assert (got.reached, got.outcome, got.reason) == (reached, outcome, why)
    assert got.advisory == ({"AI-Other": "READY", **{n: v for n, v in votes.items()
                                                     if n not in people}}
                            if config.advisory else {"AI-Other": "READY"})


@pytest.mark.parametrize("outcome, reached, counted_as", [
    ("READY", True, "READY"), ("REJECT", True, "REJECT"), ("CHANGES", False, None),
    ("IMPASSE", False, None)])
def test_an_outcome_rule_s_verdict_as_the_consensus_the_gate_reads(outcome, reached,
                                                                   counted_as):
    verdict = Ruling(outcome, "why", {A: "x"}, {"READY": 1}, ("AI-Security",), ("AI-Pragmatist",))
    got = result_of(verdict, {"AI-Other": "READY"})
    assert (got.reached, got.outcome, got.reason) == (reached, counted_as, "why")
    assert (got.counts, got.blocked_by, got.missing) == ({"READY": 1}, ["AI-Security"],
                                                         ["AI-Pragmatist"])
    assert got.advisory == {"AI-Other": "READY"}
