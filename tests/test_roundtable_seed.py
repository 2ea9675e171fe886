"""The roundtable as seed 003 words it, item by item: each test quotes the seed line it
holds the roundtable to, and runs it through the real parts (`cascade discuss` in process,
every model call over HTTP to the fake endpoint, replies scripted per persona, step and
round by tests/roundtable_script.py)."""
from __future__ import annotations

import json

import pytest
from roundtable_script import Table
from test_roundtable import LEDGER, TOPIC, answer, create, discuss, load, rounds, step_run

from cascade import Discussion

RECORD = LEDGER.replace(".discussion.md", ".record.md")


@pytest.fixture
def table(repo, fake_llm, monkeypatch):
    monkeypatch.setenv("CASCADE_MODEL", "openai/fake")
    monkeypatch.setenv("CASCADE_API_BASE", fake_llm.url)
    monkeypatch.setenv("CASCADE_BACKOFF", "0.05")
    return Table(fake_llm)


def test_a_round_is_enough_when_its_phase_needs_one(repo, cli, table, fake_llm):
    """Seed 003: "Each phase has a `min_rounds` requirement (default: 1)" -- not three rounds
    for every roundtable: a standard roundtable the facilitator concludes after round 1 ends
    there (one question, three answers, one synthesis: a topic has no closing vote)."""
    code, out, err = discuss(cli, "standard", "--auto")
    assert code == 0, out + err
    d = load(repo)
    assert d.state.run.round == 1 and d.state.run.outcome == "READY"
    assert fake_llm.calls() == 5
    assert not any("needs 3 rounds" in e.fields.get("note", "") for e in rounds(d))


def test_a_too_easy_consensus_is_probed_under_the_bundled_rounds(repo, cli, table):
    """Seed 003: "Facilitator cannot advance phase until min_rounds completed" with
    min_rounds 1: the probing round for a consensus that came too easily (PROTOCOLS.md: "no
    conflicts, all confident, <= 2 rounds") is reachable with the bundled protocol."""
    for name in ("AI-Architect", "AI-Security", "AI-Pragmatist"):
        table.confidence[(name, 1)] = 0.9
    assert discuss(cli, "standard", "--auto")[0] == 0
    d = load(repo)
    assert d.state.run.round == 2
    assert rounds(d)[-1].fields["note"].startswith("a probing round")


@pytest.mark.parametrize("strategy, phases", [
    ("disney", ["dreamer", "realist", "critic"]),
    ("standard", ["discussion"]),
])
def test_the_ledger_records_every_round_s_phase(repo, cli, table, strategy, phases):
    """Seed 003: "Session File Updates ... Update `current_phase` if advancing" and "For
    multi-phase strategies (Disney, Six-Hats, Debate)": each round of the ledger says its
    phase, round 1 included (a Disney roundtable's round 1 is the dreamer's)."""
    assert discuss(cli, strategy, "--auto")[0] == 0
    d = load(repo)
    assert [(e.value.split()[0], e.fields.get("phase")) for e in rounds(d)] == [
        (str(i), p) for i, p in enumerate(phases, 1)]
    assert d.state.unfounded == []  # the round 1 event holds where it stands
    assert d.state.run.outcome == "READY"


def test_the_record_keeps_the_synthesis_the_recommendation_and_a_person_s_decision(
        repo, cli, table):
    """Seed 003: "Show facilitator's recommendation" and "Record user decision in session
    file": the record of a roundtable a person concluded at an escalation gives the last
    synthesis, the facilitator's recommendation and the person's decision."""
    table.actions = {1: "continue", 2: "escalate"}
    create(repo)
    assert step_run(repo).waiting
    answer(repo, "NEXT: decide we version in the URL path")
    assert step_run(repo).outcome == "READY"
    record = (repo / RECORD).read_text()
    synthesis = record.split("## Synthesis", 1)[1].split("\n## ", 1)[0]
    assert "Synthesis of round 2: they converge." in synthesis
    assert "## Recommendation\n\nAdopt the converged proposal." in record
    assert "## Conclusion\n\nAlice decided: we version in the URL path" in record


@pytest.mark.parametrize("block, outcome", [(None, "READY"), ("BLOCK", "CHANGES")])
def test_a_consensus_driven_record_gives_the_positions_and_the_recommendation(
        repo, cli, table, block, outcome):
    """Seed 003: "Display all positions with rationale to user" and "Show facilitator's
    recommendation": a consensus-driven record (consent, no closing vote) lists each
    participant's last position and SUPPORT/BLOCK, and the facilitator's recommendation --
    never "-" for a position given, nor "the synthesizer gave none"."""
    if block:
        table.consent[("AI-Security", 3)] = block
    discuss(cli, "consensus-driven", "--auto")
    assert load(repo).state.run.outcome == outcome
    record = (repo / RECORD).read_text()
    for name in ("AI-Architect", "AI-Security", "AI-Pragmatist"):
        assert f"| {name} | {name} holds position 3 |" in record
    assert "| AI-Security | AI-Security holds position 3 | " + (block or "SUPPORT") in record
    assert "gave none" not in record
    assert "## Recommendation\n\nAdopt the converged proposal." in record


CAP = "Discussion reached maximum rounds without full consensus."


@pytest.mark.parametrize("recommendation, said", [
    ("Adopt the converged proposal.", "Adopt the converged proposal."),
    ("", "Review consensus points and address unresolved items separately."),
])
def test_the_round_cap_concludes_with_the_seed_s_fallback(repo, cli, table, recommendation,
                                                          said):
    """Seed 003: "Fallback for Conclude (max rounds reached)": synthesis "Discussion reached
    maximum rounds without full consensus.", a recommendation; "max_rounds ... If reached,
    force conclude with summary - Note in session file": the note is in the ledger (the
    outcome event) and the record; a topic has no closing vote to tell it."""
    table.actions = {1: "continue", 2: "continue"}
    for round_ in (1, 2):  # the facilitator's last recommendation, or none at all
        table.replies[("AI-Facilitator", "Synthesis", round_)] = json.dumps({
            "comment": f"Synthesis of round {round_}: still apart.", "consensus": [],
            "conflicts": [], "resolved": [], "next_action": "continue", "next_focus": "",
            "recommendation": recommendation, "escalation_reason": ""})
    code, out, err = discuss(cli, "standard", "--auto", "--rounds", "2")
    assert code == 0, out + err
    d = load(repo)
    assert d.state.run.round == 2 and d.state.run.outcome == "READY"
    note = f"{CAP} Recommendation: {said}"
    outcome = next(e for e in d.events if e.kind == "OUTCOME")
    assert outcome.fields["note"] == note
    record = (repo / RECORD).read_text()
    assert f"## Conclusion\n\n{note}" in record
    assert not [t for n, s, r, t in table.seen if s == "Closing vote"]


def test_an_escalation_shows_the_positions_and_the_recommendation(repo, cli, table):
    """Seed 003: "When escalation occurs: 1. Display all positions with rationale to user
    2. Show facilitator's recommendation 3. Ask user to: accept recommendation, provide own
    decision, or continue discussion": the question comes with each participant's position
    and the facilitator's recommendation, as `cascade status` shows it."""
    table.actions = {1: "escalate"}
    create(repo)
    assert step_run(repo).waiting
    code, out, err = cli("status", LEDGER)
    assert code == 0, out + err
    asked = out.split("Waiting for a person:", 1)[1].split("\nParticipants (", 1)[0]
    for name in ("AI-Architect", "AI-Security", "AI-Pragmatist"):
        assert f"({name}, r1-msg-" in asked
        assert f"position: {name} holds position 1" in asked
        assert f"{name} reasons about round 1." in asked  # the rationale
    assert "recommendation: Adopt the converged proposal." in asked
    assert "NEXT: accept -- conclude on the facilitator's recommendation: Adopt the " \
           "converged proposal." in asked


@pytest.mark.parametrize("named", [["AI-Security"], ["security"], ["@security", "nobody"]])
def test_the_facilitator_may_put_a_question_to_some_participants(repo, cli, table, fake_llm,
                                                                  named):
    """Seed 003: the question's "participants: "all"" in its deterministic fallback -- the
    facilitator says whom it asks (`participants: all | [names]`): a question put to one
    participant is answered by that one alone; the next, put to all, by everyone."""
    table.actions = {1: "continue"}
    table.replies[("AI-Facilitator", "Question", 1)] = json.dumps({
        "comment": "Security: is a header version enough for the auth rules?",
        "focus": "auth", "participants": named})
    table.replies[("AI-Facilitator", "Question", 2)] = json.dumps({
        "comment": "Question 2: what matters most now?", "focus": "all",
        "participants": "all"})
    code, out, err = discuss(cli, "standard", "--auto")
    assert code == 0, out + err
    answered = {r: sorted(n for n, s, r_ in table.asked("Answers") if r_ == r)
                for r in (1, 2)}
    assert answered == {1: ["AI-Security"],
                        2: ["AI-Architect", "AI-Pragmatist", "AI-Security"]}
    assert fake_llm.calls() == (1 + 1 + 1) + 5
    assert load(repo).state.run.outcome == "READY"


def test_an_unknown_speakers_rule_is_one_line_naming_file_and_line(repo, cli, table, fake_llm):
    from cascade.base.resources import bundled

    text = (bundled("protocols") / "roundtable.yml").read_text()
    folder = repo / ".cascade/protocols"
    folder.mkdir(parents=True)
    (folder / "roundtable.yml").write_text(text.replace("speakers: addressed",
                                                        "speakers: loudest"))
    code, _, err = discuss(cli, "standard", "--auto")
    assert code == 2
    assert "roundtable.yml:" in err and "unknown speakers rule 'loudest' (known: addressed)" \
        in err
    assert fake_llm.calls() == 0


@pytest.mark.parametrize("topic, strategy, word", [
    ("Brainstorm a new onboarding flow", "disney", "new"),
    ("Postgres vs SQLite for the cache", "debate", "vs"),
    ("An urgent fix for the login outage", "consensus-driven", "urgent"),
    ("Look at the billing design from all angles", "six-hats", "all angles"),
    ("How do we version the public API?", "standard", None),
])
def test_with_no_strategy_the_topic_s_words_pick_one(repo, cli, table, topic, strategy, word):
    """Seed 003's public original: "Auto-detect strategy (if not specified)" -- creative,
    innovation, new, brainstorm: disney; vs, compare, evaluate, choose, decide: debate;
    urgent, fast, quick, asap: consensus-driven; comprehensive, thorough, all angles, deep:
    six-hats; else standard. The ledger records the strategy and who picked it, and why."""
    code, out, err = cli("discuss", topic, "--protocol", "roundtable", "--participants",
                         "architect,security,pragmatist", "--auto")
    assert code in (0, 1), out + err
    ledger = next((repo / "discussions").glob("*.discussion.md"))
    d = Discussion.load(ledger, root=repo)
    assert d.state.run.steps.strategy.name == strategy
    said = f"Strategy {strategy}: picked by cascade from the topic's word {word!r}"
    assert (said in out and said in ledger.read_text()) if word else "picked by" not in out


def test_a_strategy_given_is_never_replaced_by_a_keyword(repo, cli, table):
    code, out, err = cli("discuss", "Brainstorm a new onboarding flow", "--protocol",
                         "roundtable", "--strategy", "standard", "--participants",
                         "architect,security,pragmatist", "--auto")
    assert code == 0, out + err
    assert "picked by cascade" not in out
    d = Discussion.load(next((repo / "discussions").glob("*.discussion.md")), root=repo)
    assert d.state.run.steps.strategy.name == "standard"


@pytest.mark.parametrize("asked, written, absent", [
    (None, ".summary.md", ".adr-draft.md"),
    ("adr", ".adr-draft.md", ".summary.md"),
])
def test_a_concluded_roundtable_leaves_its_output_document(repo, cli, table, asked, written,
                                                           absent):
    """Seed 003's public original: "Generate output -- Based on output_type from facilitator"
    (`output_type: adr|...|summary`): a summary (key decisions, unresolved items,
    participants with their confidence) or an ADR draft (status, context, decision, options
    considered, consequences), beside the ledger, once the roundtable concluded."""
    table.actions = {1: "continue"}
    table.conflicts = {1: ["auth: tokens or keys"]}
    if asked:
        table.replies[("AI-Facilitator", "Synthesis", 2)] = json.dumps({
            "comment": "Synthesis of round 2: URL versioning.", "consensus": ["version in URL"],
            "conflicts": [], "resolved": ["auth: keys"], "next_action": "conclude",
            "recommendation": "Version the public API in the URL path.",
            "output_type": asked})
    code, out, err = discuss(cli, "standard", "--auto")
    assert code == 0, out + err
    base = repo / LEDGER.replace(".discussion.md", "")
    assert not base.with_name(base.name + absent).exists()
    text = base.with_name(base.name + written).read_text()
    if asked == "adr":
        for heading in ("## Status", "## Context", "## Decision", "## Options considered",
                        "## Consequences"):
            assert heading in text
        assert "Version the public API in the URL path." in text
        assert "- Contested: auth: tokens or keys" in text
        assert "- AI-Security: AI-Security holds position 2" in text
    else:
        assert "## Key decisions\n\n- point 1\n- point 2" in text
        assert "## Unresolved items\n\n_(none)_" in text
        assert "| AI-Security | AI-Security holds position 2 | 0.7 |" in text
    assert f"how-do-we-version-the-public-api{written}" in out  # said where it is


def test_no_output_document_before_the_roundtable_concludes(repo, cli, table):
    table.actions = {1: "escalate"}
    create(repo)
    assert step_run(repo).waiting
    assert not list((repo / "discussions").glob("*.summary.md"))
    assert not list((repo / "discussions").glob("*.adr-draft.md"))


def test_pro_and_con_put_each_participant_on_the_side_given(repo, cli, table):
    """Seed 003's public original: "--pro: Optional (debate only). Comma-separated list of
    participant IDs for Pro side; --con: ... for Con side": the participants are the sides
    given, the debate strategy is taken, each is told its own side, and the ledger records
    them (a resumed run reads them back)."""
    code, out, err = cli("discuss", TOPIC, "--protocol", "roundtable", "--pro", "security",
                         "--con", "architect,pragmatist", "--auto")
    assert code == 0, out + err
    assert "Strategy debate: picked by cascade for the sides given" in out
    told = {n: t for n, s, r, t in table.seen if (s, r) == ("Answers", 1)}
    assert "Your side: pro." in told["AI-Security"]
    assert "Your side: con." in told["AI-Architect"]
    assert "Your side: con." in told["AI-Pragmatist"]  # not pro by turn
    text = (repo / LEDGER).read_text()
    assert "<!-- Sides: pro: security; con: architect, pragmatist -->" in text
    d = load(repo)
    assert dict(d.state.run.steps.strategy.assigned) == {
        "security": "pro", "architect": "con", "pragmatist": "con"}


@pytest.mark.parametrize("extra, message", [
    (["--strategy", "standard", "--participants", "security,architect"],
     "strategy 'standard' has no sides for --pro/--con (strategies with sides: debate)"),
    (["--participants", "security,architect,pragmatist"],
     "--pro/--con: name each participant's side once (no side for pragmatist)"),
])
def test_sides_that_do_not_fit_are_refused_in_one_line(repo, cli, table, fake_llm, extra,
                                                       message):
    code, out, err = cli("discuss", TOPIC, "--protocol", "roundtable", "--pro", "security",
                         "--con", "architect", *extra, "--auto")
    assert code == 2 and message in err
    assert fake_llm.calls() == 0 and not (repo / LEDGER).exists()


def test_the_facilitator_s_fallbacks_give_the_seed_s_focus_and_next_focus(repo, cli, table):
    """Seed 003, Fallback Behavior: the question's fallback 'question: "What are the key
    considerations for {topic}?" participants: "all" focus: "Core requirements and
    constraints"', the synthesis's 'synthesis: "Discussion on {topic} requires further
    exploration." consensus: [] conflicts: [] resolved: [] next_action: "continue"
    next_focus: "Clarify positions"'. An unreadable reply gets the whole fallback, its
    fields included."""
    table.actions = {1: "continue", 2: "continue"}
    table.replies[("AI-Facilitator", "Question", 1)] = "not json at all"
    table.replies[("AI-Facilitator", "Synthesis", 1)] = "{broken"
    code, out, err = discuss(cli, "standard", "--auto")
    assert code == 0, out + err
    d = load(repo)
    turns = [c for c in d.comments if c.author == "AI-Facilitator"]
    question, synthesis = turns[:2]
    assert question.provenance["focus"] == "Core requirements and constraints"
    assert question.provenance["participants"] == "all"
    assert synthesis.body.startswith("Discussion on")
    assert synthesis.provenance["next_focus"] == "Clarify positions"
    assert synthesis.provenance["next_action"] == "continue"
    assert "next_action: no value given" not in out  # the fallback gives it, as the seed does
    # every answer of round 1 was asked: the fallback puts the question to all
    assert sorted(n for n, s, r in table.asked("Answers") if r == 1) == [
        "AI-Architect", "AI-Pragmatist", "AI-Security"]


def test_a_bad_fallback_is_one_line_naming_file_and_line(repo, cli):
    from cascade.base.resources import bundled

    text = (bundled("protocols") / "roundtable.yml").read_text()
    folder = repo / ".cascade/protocols"
    folder.mkdir(parents=True)
    (folder / "roundtable.yml").write_text(text.replace(
        '      focus: "Core requirements and constraints"',
        '      fokus: "Core requirements and constraints"'))
    code, out, err = cli("plan", "--protocol", "roundtable")
    assert code == 2
    line = text.splitlines().index('    fallback:                      # the seed\'s fallback '
                                   'for question generation') + 1
    assert f".cascade/protocols/roundtable.yml:{line}" in err
    assert "step 'question': fallback takes a comment" in err
    assert len(err.strip().splitlines()) == 1


def test_a_consensus_driven_roundtable_without_consent_keeps_its_last_synthesis(
        repo, cli, table):
    """Seed 003, Fallback for Conclude: 'synthesis: "..." consensus: {any points agreed on}
    conflicts: {remaining open conflicts} ... recommendation: "Review consensus points and
    address unresolved items separately."' -- a roundtable that ends without consent (a
    BLOCK) still leaves its last synthesis in the record, with the recommendation."""
    table.consent[("AI-Security", 3)] = "BLOCK"
    code, out, _ = discuss(cli, "consensus-driven", "--auto")
    assert code == 1 and load(repo).state.run.outcome == "CHANGES"
    record = (repo / RECORD).read_text()
    assert "## Last synthesis\n\nSynthesis of round 3: they converge." in record
    assert "## Recommendation\n\nAdopt the converged proposal." in record
    assert "## Divergent positions" in record
