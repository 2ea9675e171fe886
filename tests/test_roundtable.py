"""The facilitator-led roundtable (seed 003) on the protocol engine, standalone: `cascade
discuss --protocol roundtable --strategy S` and in-process runs as the gate makes them, every
model call over HTTP to the fake endpoint, replies scripted per persona, step and round
(tests/roundtable_script.py)."""
from __future__ import annotations

import json

import pytest
from roundtable_script import Table

from cascade import Discussion

TOPIC = "How do we version the public API?"
LEDGER = "discussions/how-do-we-version-the-public-api.discussion.md"
PANEL = "architect,security,pragmatist"
NAMES = ("AI-Architect", "AI-Security", "AI-Pragmatist")


@pytest.fixture
def table(repo, fake_llm, monkeypatch):
    monkeypatch.setenv("CASCADE_MODEL", "openai/fake")
    monkeypatch.setenv("CASCADE_API_BASE", fake_llm.url)
    monkeypatch.setenv("CASCADE_BACKOFF", "0.05")
    return Table(fake_llm)


def discuss(cli, strategy: str = "standard", *extra: str):
    return cli("discuss", TOPIC, "--protocol", "roundtable", "--strategy", strategy,
               "--participants", PANEL, *extra)


def load(repo) -> Discussion:
    return Discussion.load(repo / LEDGER, root=repo)


def rounds(d: Discussion) -> list:
    return [e for e in d.events if e.kind == "ROUND"]


def create(repo, strategy: str = "standard", source: str | None = None) -> None:
    """A roundtable ledger: of the topic, or of a document (``source``: its path, which a
    closing vote ends)."""
    if source:
        (repo / source).parent.mkdir(parents=True, exist_ok=True)
        (repo / source).write_text("# API versioning\n\nVersion in the URL path.\n")
    Discussion.create(TOPIC, "topic", "", participants=PANEL.split(","),
                      protocol="roundtable", root=repo, extra={"Strategy": strategy},
                      source=source).save()


def step_run(repo, **kwargs):
    """One run as the gate makes it: no terminal, a decision point waits for a person."""
    from cascade.run.protocol_run import run
    from cascade.turns.settings import Settings

    return run(load(repo), Settings.from_env(), **kwargs)


def answer(repo, line: str) -> None:
    with open(repo / LEDGER, "a") as f:
        f.write(f"\n---\nName: Alice\n\n{line}\n---\n")


def test_standard_concludes_when_the_facilitator_does(repo, cli, table, fake_llm):
    table.actions = {1: "continue", 2: "continue"}
    code, out, err = discuss(cli, "standard", "--auto")
    assert code == 0, out + err
    d = load(repo)
    run = d.state.run
    assert run.round == 3 and run.outcome == "READY"
    # a round: the question, three blind answers, the synthesis; a topic has no document to
    # vote on: the last synthesis is the outcome
    assert fake_llm.calls() == 3 * 5
    assert [e.value.split()[0] for e in rounds(d)] == ["1", "2", "3"]
    assert "Roundtable: answered -- the discussion concluded after round 3" in out
    record = (repo / LEDGER.replace(".discussion.md", ".record.md")).read_text()
    synthesis = record.split("## Synthesis", 1)[1].split("##", 1)[0]
    assert "Synthesis of round 3: they converge." in synthesis  # the facilitator's last
    assert "_(none)_" not in record
    assert ("**Outcome**: READY: the discussion concluded after round 3; its synthesis is the "
            "outcome (a topic: no document to vote on)") in record
    assert "## Closing vote" not in record and "## Open findings" not in record


def test_answers_are_blind_and_see_only_the_question_and_the_last_synthesis(repo, cli, table):
    assert discuss(cli, "standard", "--auto")[0] == 0
    for name, step, round_, text in table.seen:
        if step != "Answers":
            continue
        others = [n for n in NAMES if n != name]
        assert not any(f"{n} holds position {round_}" in text for n in others)
        assert f"Question {round_}: what matters most now?" in text
        if round_ > 1:
            assert f"Synthesis of round {round_ - 1}" in text
            assert f"Synthesis of round {round_ - 2}" not in text if round_ > 2 else True
            assert f"holds position {round_ - 1}" not in text  # no earlier answers either


def test_six_hats_is_sequential_and_runs_every_phase_in_order(repo, cli, table):
    code, out, err = discuss(cli, "six-hats", "--auto")
    assert code == 0, out + err
    d = load(repo)
    phases = [e.fields.get("phase") for e in rounds(d)]
    assert phases == ["blue", "white", "red", "black", "yellow", "green", "blue-close"]
    assert d.state.run.round == 7
    for name, step, round_, text in table.seen:
        if step == "Answers":
            earlier = NAMES[:NAMES.index(name)]
            assert all(f"{n} holds position {round_}" in text for n in earlier), name
    first = [t for n, s, r, t in table.seen if (s, r) == ("Question", 1)][0]
    assert ("From the protocol's schedule (no person decided): Six thinking hats strategy, "
            "phase 1 of 7: Blue hat") in first


@pytest.mark.parametrize("strategy, phases", [
    ("disney", ["dreamer", "realist", "critic"]),
    ("debate", ["opening", "rebuttal", "closing"]),
])
def test_a_conclude_before_the_last_phase_moves_on(repo, cli, table, strategy, phases):
    assert discuss(cli, strategy, "--auto")[0] == 0
    d = load(repo)
    assert [e.fields.get("phase") for e in rounds(d)] == phases
    notes = [e.fields.get("note") for e in rounds(d)]
    moved = "a conclude before the strategy's last phase: the next phase instead"
    assert notes == [None, moved, moved]
    if strategy == "debate":
        sides = {n: t for n, s, r, t in table.seen if (s, r) == ("Answers", 1)}
        assert "Your side: pro." in sides["AI-Architect"]
        assert "Your side: con." in sides["AI-Security"]


def test_an_open_conflict_refuses_the_conclude(repo, cli, table):
    table.conflicts = {1: ["versioning: URL or header"]}
    assert discuss(cli, "standard", "--auto")[0] == 0
    d = load(repo)
    assert d.state.run.round == 2
    assert rounds(d)[-1].fields["note"] == "conclude refused: conflicts are open (versioning)"


def test_phase_refused_before_its_minimum_and_after_the_last(repo, cli, table):
    table.actions = {1: "phase", 2: "phase", 3: "conclude"}
    assert discuss(cli, "standard", "--auto")[0] == 0
    d = load(repo)
    assert rounds(d)[1].fields["note"] == ("there is no phase after the last: continue, or "
                                            "conclude")


@pytest.mark.parametrize("set_up, why", [
    (lambda t: t.actions.update({1: "escalate"}), "the facilitator escalated"),
    (lambda t: t.confidence.update({("AI-Security", 1): 0.3}),
     "AI-Security's confidence is 0.3 (below 0.5)"),
    (lambda t: t.concerns.update({("AI-Pragmatist", 1): ["a legal review is needed"]}),
     "AI-Pragmatist names a legal concern"),
    (lambda t: t.replies.update({("AI-Architect", "Answers", 1): json.dumps({
        "comment": "Wrong question.", "position": "-", "confidence": 0.9,
        "challenge": "we have not agreed we need public versioning at all"})}),
     "AI-Architect challenges the framing"),
    (lambda t: t.conflicts.update({1: ["auth: tokens or keys"], 2: ["auth: still"],
                                   3: ["auth: still"]}),
     "conflict 'auth' is still open after 3 rounds"),
])
def test_each_escalation_trigger_waits_for_a_person(repo, cli, table, fake_llm, set_up, why):
    set_up(table)
    create(repo)
    result = step_run(repo)
    assert result.waiting and f"Why: {why}" in result.waiting
    assert result.waiting.startswith("The roundtable needs a person.")
    calls = fake_llm.calls()
    assert step_run(repo).waiting and fake_llm.calls() == calls  # asks no one meanwhile
    code, out, _ = cli("status", LEDGER, "--json")
    view = json.loads(out)["discussions"][0]
    assert view["outcome"] == "WAITING" and "Why: " in view["waiting_for"]


def test_escalation_answers_accept_or_continue(repo, cli, table, fake_llm):
    table.actions = {1: "escalate", 2: "escalate", 3: "escalate", 4: "escalate"}
    create(repo)
    assert step_run(repo).waiting
    answer(repo, "NEXT: continue 2")  # two quiet rounds: round 2 and 3 escalate unasked
    result = step_run(repo)
    assert result.waiting and "(round 4;" in result.waiting
    answer(repo, "NEXT: accept")
    result = step_run(repo)
    assert result.outcome == "READY" and result.round == 4
    d = load(repo)
    nexts = [c for c in d.comments if c.author == "Alice"]
    assert [c.body for c in nexts] == ["NEXT: continue 2", "NEXT: accept"]


def test_a_person_s_decision_concludes_a_topic_without_a_closing_vote(repo, cli, table):
    table.actions = {1: "escalate"}
    create(repo)
    assert step_run(repo).waiting
    answer(repo, "NEXT: decide we version in the URL path")
    result = step_run(repo)
    assert result.outcome == "READY" and result.round == 1  # a person may end it early
    assert not [t for n, s, r, t in table.seen if s == "Closing vote"]  # a topic: no vote
    record = (repo / LEDGER.replace(".discussion.md", ".record.md")).read_text()
    assert "Alice decided: we version in the URL path" in record


def test_a_broken_facilitator_is_carried_by_the_fallbacks(repo, cli, table):
    table.replies[("AI-Facilitator", "Question", 1)] = "not json at all"
    table.replies[("AI-Facilitator", "Synthesis", 1)] = "{broken"
    code, out, err = discuss(cli, "standard", "--auto")
    assert code == 0, out + err
    assert "the step's fallback stands in" in out
    d = load(repo)
    first = [c for c in d.comments if c.author == "AI-Facilitator"][:2]
    assert first[0].body == f"What are the key considerations for {TOPIC}?"
    assert first[1].body == f"Discussion on {TOPIC} requires further exploration."
    assert first[1].provenance["next_action"] == "continue"


def test_a_too_easy_consensus_gets_one_probing_round(repo, cli, table):
    for name in NAMES:
        table.confidence[(name, 1)] = 0.9
        table.confidence[(name, 2)] = 0.9
    assert discuss(cli, "standard", "--auto")[0] == 0
    d = load(repo)
    assert d.state.run.round == 2
    assert rounds(d)[1].fields["note"].startswith("a probing round: the consensus came too")
    probe = [t for n, s, r, t in table.seen if (s, r) == ("Question", 2)][0]
    assert "a probing round" in probe


def test_consensus_driven_ends_in_consent_without_a_vote(repo, cli, table, fake_llm):
    code, out, err = discuss(cli, "consensus-driven", "--auto")
    assert code == 0, out + err
    d = load(repo)
    assert d.state.run.outcome == "READY" and fake_llm.calls() == 3 * 5  # no closing vote
    assert not table.asked("Closing vote")


def test_consensus_driven_blocked_is_not_ready(repo, cli, table):
    table.consent[("AI-Security", 3)] = "BLOCK"
    code, out, _ = discuss(cli, "consensus-driven", "--auto")
    assert code == 1
    d = load(repo)
    assert d.state.run.outcome == "CHANGES"
    assert d.state.run.closing.verdicts["security"] == "BLOCK"
    assert not d.state.result.reached


def test_plan_lists_the_strategies_and_makes_no_call(repo, cli, table, fake_llm):
    code, out, err = cli("plan", "--protocol", "roundtable", "--strategy", "disney")
    assert code == 0, out + err
    assert "strategy disney: Dreamer -> Realist -> Critic" in out
    assert fake_llm.calls() == 0


def test_a_round_reaches_the_ledger_whole_and_a_cut_round_costs_nothing_again(
        repo, cli, table, fake_llm, monkeypatch):
    """rounds.append: round (seed 003's batch write): a run stopped inside round 2 writes
    round 1 and nothing of round 2; the next run gets round 2's replies from the reply cache
    and asks only who was never asked."""
    table.actions = {1: "continue"}
    monkeypatch.setenv("CASCADE_MAX_CALLS", "8")  # round 1 (5 calls), then 3 of round 2
    code, out, err = discuss(cli, "standard", "--auto")
    assert code == 1 and "nothing of it is written" in out
    d = load(repo)
    assert {c.provenance["round"] for c in d.comments if c.origin == "ai"} == {"1"}
    assert len([c for c in d.comments if c.origin == "ai"]) == 5
    assert fake_llm.calls() == 8
    monkeypatch.delenv("CASCADE_MAX_CALLS")
    code, out, err = cli("run", LEDGER, "--auto")
    assert code == 0, out + err
    assert fake_llm.calls() == 2 * 5  # the three cached replies were not asked again
    d = load(repo)
    ids = [c.provenance["msg"] for c in d.comments if c.origin == "ai"]
    assert [int(i.split("-")[-1]) for i in ids] == list(range(1, len(ids) + 1))


@pytest.mark.parametrize("args, members", [
    (["--protocol", "roundtable", "--strategy", "debate"],
     "participant (fast): 3 participants, invited by topic (or --participants) -> openai/"),
    (["--protocol", "council", "--flow", "debate"],
     "advisor (fast): pragmatist -> openai/"),  # the protocol's own panel, by name
    (["--protocol", "swarm"], "expert (fast): 3 experts, generated from the topic -> openai/"),
])
def test_plan_prints_no_placeholder_and_no_empty_heading(repo, cli, table, fake_llm, args,
                                                         members):
    """No `<participant 1> -> -`: the names where the protocol knows them, else how many and
    how they are chosen, with the model they will ask; no heading line with nothing under it
    (`Flow debate:` before an unrelated line)."""
    code, out, err = cli("plan", *args)
    assert code == 0, out + err
    assert members in out
    assert "<participant" not in out and "<expert" not in out and " -> -" not in out
    lines = out.splitlines()
    for i, line in enumerate(lines):
        if line.endswith(":") and not line.startswith(" "):
            assert i + 1 < len(lines) and lines[i + 1].startswith("  "), line  # not empty
    assert fake_llm.calls() == 0


def test_a_panel_nobody_was_asked_about_is_not_recorded_as_confirmed(repo, cli, table,
                                                                     monkeypatch):
    """Input from a terminal but output to a pipe (`cascade discuss ... | tee log`): the panel
    is not asked about, so the ledger must not say a person confirmed it."""
    import sys

    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)
    code, out, err = cli("discuss", TOPIC, "--protocol", "roundtable", "--strategy", "standard")
    assert "Proposed panel" not in out
    header = (repo / LEDGER).read_text()
    assert "; confirmed" not in header
    assert "taken automatically (--auto or no terminal" in header
