"""The swarm discussion (seed 001) on the protocol engine, standalone: `cascade discuss
--protocol swarm` and `cascade run` in a real repository, every model call over HTTP to the
fake endpoint, whose replies are scripted per persona, step and round (tests/swarm_script.py).
"""
from __future__ import annotations

import json
import re

import pytest
from swarm_script import Swarm

from cascade import Discussion

TOPIC = "Which database for the event store?"
BASE = "discussions/which-database-for-the-event-store"
LEDGER = BASE + ".discussion.md"
ARTIFACTS = [BASE + s for s in (".record.md", ".argument-graph.json", ".synthesis.md",
                                ".open-questions.md", ".position-evolution.md", ".progress.md",
                                ".synthesis.json")]
FIXED = {"AI-Moderator", "AI-Historian", "AI-Contrarian", "AI-Cross-Domain"}


@pytest.fixture
def swarm(repo, fake_llm, monkeypatch):
    monkeypatch.setenv("CASCADE_MODEL", "openai/fake")
    monkeypatch.setenv("CASCADE_API_BASE", fake_llm.url)
    monkeypatch.setenv("CASCADE_BACKOFF", "0.05")
    return Swarm(fake_llm)


def discuss(cli, mode: str | None = "standard", *extra: str):
    return cli("discuss", TOPIC, "--protocol", "swarm", *(("--mode", mode) if mode else ()),
               *extra)


def load(repo) -> Discussion:
    return Discussion.load(repo / LEDGER, root=repo)


def ai_turns(d: Discussion):
    return [c for c in d.comments if c.origin == "ai"]


def step_of(c) -> tuple[str, int]:
    return c.provenance["step"], int(c.provenance["round"])


@pytest.mark.parametrize("mode, experts, rounds, absent", [
    ("lightweight", 2, 2, {"AI-Historian", "AI-Cross-Domain"}),
    ("standard", 3, 3, set()),
    ("deep", 4, 5, set()),
])
def test_each_mode_runs_its_roles_rounds_and_panel(repo, cli, swarm, fake_llm, mode, experts,
                                                    rounds, absent):
    code, out, err = discuss(cli, mode, "--auto")
    assert code == 0, out + err
    d = load(repo)
    run = d.state.run
    assert run.terms.mode == mode and len(run.members) == experts
    assert run.outcome == "READY" and run.round == rounds  # "continue" until the last round
    speakers = {c.author for c in ai_turns(d)}
    assert FIXED - absent <= speakers and not absent & speakers
    synth = [c for c in ai_turns(d) if c.provenance["step"] == "synthesis"]
    assert [c.author for c in synth] == (["AI-Moderator"] if mode == "lightweight"
                                         else ["AI-Historian"])
    # the round as PROTOCOLS.md lists it, every round
    per_round = ["declare"] * experts + ["frame"] + ["argue"] * experts + ["stress"] + [
        "respond"] * experts + ([] if mode == "lightweight" else ["analogy"]) + ["quality"]
    for r in range(1, rounds + 1):
        assert [s for s, rr in map(step_of, ai_turns(d)) if rr == r and s not in
                ("panel", "synthesis", "vote")] == per_round
    calls = 1 + rounds * len(per_round) + 1  # panel, rounds, synthesis (a topic: no vote)
    assert fake_llm.calls() == calls
    # ids gapless over the whole discussion
    ids = [c.provenance["msg"] for c in ai_turns(d)]
    assert [int(i.split("-")[-1]) for i in ids] == list(range(1, len(ids) + 1))
    assert all(i.startswith(f"r{c.provenance['round']}-") for i, c in zip(ids, ai_turns(d)))
    # decisions were taken automatically, and say so
    nexts = [e for e in d.events if e.kind == "NEXT"]
    assert [e.value.split()[0] for e in nexts] == ["start"] + ["follow"] * (rounds - 1)
    assert all(e.fields["auto"] == "true" for e in nexts)
    assert "Swarm discussion: answered -- the discussion concluded after round" in out


def test_the_panel_is_recorded_and_its_experts_speak_as_personas(repo, cli, swarm):
    assert discuss(cli, "standard", "--auto")[0] == 0
    d = load(repo)
    kinds = [e.kind for e in d.events]
    assert kinds.count("PERSONA") == 3 and kinds.count("PROBLEM") == 1
    tensions = [e.value.split()[:2] for e in d.events if e.kind == "TENSION"]
    paired = {a for pair in tensions for a in pair}
    assert paired == {"db-engineer", "api-designer", "sre"}  # every expert in a pair
    assert ["sre", "db-engineer"] in tensions  # the proposal left the SRE out: paired by us
    panel_turn = ai_turns(d)[0]
    assert panel_turn.author == "AI-Moderator" and panel_turn.provenance["panel"] == "3"
    assert "| Site Reliability Engineer (@sre) |" in panel_turn.body
    names = {c.author for c in ai_turns(d)} - FIXED
    assert names == {"AI-Db-Engineer", "AI-Api-Designer", "AI-Sre"}
    assert all(d.personas.get(a).votes for a in ("db-engineer", "api-designer", "sre"))
    # the expert is told who it is, its stakes, blind spots and designed tension
    declare = [t for n, s, r, t in swarm.seen if (n, s) == ("AI-Db-Engineer",
                                                              "Position declarations")][0]
    assert "pages at 3 a.m. when writes stall" in declare
    assert "application complexity" in declare and "Consistency vs. flexibility" in declare
    assert "Pick the event store's database." in declare  # the problem definition
    # the ledger alone gives the same panel and run (as check and status read it)
    again = Discussion.load(repo / LEDGER, root=repo).state.run
    assert again.members == ["db-engineer", "api-designer", "sre"]
    assert again.outcome == "READY"


def test_declarations_are_blind_and_the_framing_sees_them(repo, cli, swarm):
    assert discuss(cli, "lightweight", "--auto")[0] == 0
    for name, step, round_, text in swarm.seen:
        if step == "Position declarations" and round_ == 1:
            assert "r1-msg-00" not in text.split("YOUR ROLE:")[0].replace("r1-msg-001", "")
            assert "prefers option" not in text
        if step == "Moderator framing" and round_ == 1:
            assert text.count("prefers option") == 2


def test_a_citation_never_shown_is_dropped_and_a_valid_shift_is_recorded(repo, cli, swarm):
    swarm.replies[("AI-Api-Designer", "Arguments", 1)] = json.dumps({
        "comment": "I counter the future.", "position": "as before", "references": [
            {"targetId": "r9-msg-999", "relation": "counters"},  # never written
            {"targetId": "r1-msg-002", "relation": "counters"},  # shown
            # a message of this very step: not shown to it
            {"targetId": "r1-msg-007", "relation": "supports"}]})
    swarm.replies[("AI-Sre", "Responses", 1)] = json.dumps({
        "comment": "Moved.", "positionShift": "major", "previousPosition": "SQLite",
        "currentPosition": "Postgres", "trigger": ["r1-msg-009", "r1-msg-999"],
        "shiftReason": "the stress test"})
    code, out, _ = discuss(cli, "standard", "--auto")
    assert code == 0
    assert "references 'r1-msg-007' dropped: not a message it was shown" in out
    d = load(repo)
    argue = next(c for c in ai_turns(d) if c.author == "AI-Api-Designer"
                 and step_of(c) == ("argue", 1))
    assert argue.provenance["refs"] == "counters:r1-msg-002"
    graph = json.loads((repo / ARTIFACTS[1]).read_text())
    targets = {e["to"] for e in graph["edges"]}
    assert "r9-msg-999" not in targets
    assert ("r1-msg-00" + argue.provenance["msg"][-1], "r1-msg-007") not in {
        (e["from"], e["to"]) for e in graph["edges"]}
    respond = next(c for c in ai_turns(d) if c.author == "AI-Sre" and step_of(c) == ("respond", 1))
    contrarian = next(c for c in ai_turns(d) if c.author == "AI-Contrarian")
    assert contrarian.provenance["msg"] == "r1-msg-009"
    assert respond.provenance["refs"] == "responds_to:r1-msg-009"
    assert respond.provenance["positionShift"] == "major"
    evolution = (repo / ARTIFACTS[4]).read_text()
    assert (f"Round 1, major shift ({respond.provenance['msg']}): SQLite -> Postgres; "
            "triggered by r1-msg-009") in evolution


def test_low_quality_is_flagged_and_the_next_framing_hears_of_it(repo, cli, swarm):
    swarm.overall[1] = 2
    assert discuss(cli, "lightweight", "--auto")[0] == 0
    d = load(repo)
    quality = [c for c in ai_turns(d) if c.provenance["step"] == "quality"]
    assert [c.provenance["flagged"] for c in quality] == ["yes", "no"]
    assert quality[0].provenance["scores"].endswith("overall:2")
    framing = [t for n, s, r, t in swarm.seen if (s, r) == ("Moderator framing", 2)][0]
    assert "Quality flagged (" in framing and "overall:2" in framing
    assert "Round 1 was weak." in framing


def test_missing_scores_are_the_lowest_and_flagged(repo, cli, swarm):
    swarm.replies[("AI-Moderator", "Quality gate", 1)] = json.dumps({
        "comment": "No scores.", "recommendation": "continue"})
    assert discuss(cli, "lightweight", "--auto")[0] == 0
    d = load(repo)
    q = next(c for c in ai_turns(d) if step_of(c) == ("quality", 1))
    assert q.provenance["flagged"] == "yes" and "overall:1" in q.provenance["scores"]


def test_every_artifact_is_written_and_matches_the_ledger(repo, cli, swarm):
    from cascade.protocol.artifacts import render_artifacts
    from cascade.protocol.record import artifact_path

    assert discuss(cli, "standard", "--auto")[0] == 0
    for path in ARTIFACTS:
        assert (repo / path).is_file(), path
    d = load(repo)
    for name, text in render_artifacts(d, d.state.run).items():
        assert artifact_path(d.path, name).read_text() == text, name
    synthesis = (repo / ARTIFACTS[2]).read_text()
    assert "## Minority report" in synthesis or "### Minority report" in synthesis
    assert "```mermaid" in synthesis and "-- counters -->" in synthesis
    assert "## Closing vote" not in synthesis  # a topic: its synthesis is the outcome
    questions = (repo / ARTIFACTS[3]).read_text()
    assert "- Peak write rate -- no measurement yet" in questions
    assert "## Left open by round 2" in questions
    progress = (repo / ARTIFACTS[5]).read_text()
    entries = re.findall(r"^### (Setup|Round \d+): (.+)$", progress, re.M)
    steps = sum(1 for _ in ai_turns(d))  # one entry per step: count the distinct steps
    distinct = len({(c.provenance["round"], c.provenance["step"]) for c in ai_turns(d)})
    assert len(entries) == distinct + 1 + 2  # + the panel's confirmation, 2 next actions
    assert steps > distinct
    assert "**Key takeaway**: position shifts: 1 minor, 2 none" in progress
    code, out, _ = cli("status", LEDGER, "--json")
    view = json.loads(out)["discussions"][0]
    assert view["protocol"] == "swarm" and view["outcome"] == "READY"
    assert view["artifacts"] == ARTIFACTS


def test_off_a_terminal_discuss_takes_the_recommended_choices_and_says_so(repo, cli, swarm):
    code, out, err = discuss(cli, "lightweight")
    assert code == 0, out + err
    assert "took the recommended choice start" in out
    assert "took the recommended choice follow" in out


def create(repo, mode: str = "standard") -> Discussion:
    d = Discussion.create(TOPIC, "topic", "", participants=[], protocol="swarm", root=repo,
                          extra={"Mode": mode})
    d.save()
    return d


def step_run(repo, **kwargs):
    """One run as the gate makes it: no terminal, decision points wait for a person."""
    from cascade.run.protocol_run import run
    from cascade.turns.settings import Settings

    return run(Discussion.load(repo / LEDGER, root=repo), Settings.from_env(), **kwargs)


def answer(repo, line: str) -> None:
    with open(repo / LEDGER, "a") as f:
        f.write(f"\n---\nName: Alice\n\n{line}\n---\n")


def test_a_person_modifies_the_panel_then_changes_the_mode(repo, cli, swarm, fake_llm):
    create(repo)
    result = step_run(repo)
    assert fake_llm.calls() == 1 and result.waiting
    assert result.waiting.startswith("Start the discussion with this panel? (before round 1;")
    code, out, _ = cli("status", LEDGER, "--json")
    view = json.loads(out)["discussions"][0]
    assert view["outcome"] == "WAITING" and view["waiting_for"] == result.waiting
    assert step_run(repo).waiting and fake_llm.calls() == 1  # nobody is asked twice
    answer(repo, "NEXT: modify add someone who runs the analytics")
    swarm.experts = 2
    assert step_run(repo).waiting
    panels = [t for n, s, r, t in swarm.seen if s == "Panel"]
    assert len(panels) == 2 and "modify add someone who runs the analytics" in panels[1]
    assert load(repo).state.run.setup.panel.aliases == ["db-engineer", "api-designer"]
    answer(repo, "NEXT: mode huge")  # no such mode: not an answer, and a note says so
    result = step_run(repo)
    assert result.waiting and any("names no mode" in n for n in result.notes)
    answer(repo, "NEXT: mode deep")
    swarm.experts = None
    assert step_run(repo).waiting
    panels = [t for n, s, r, t in swarm.seen if s == "Panel"]
    assert len(panels) == 3 and "deep mode: 3 to 4 experts" in panels[2]
    assert load(repo).state.run.terms.mode == "deep"
    answer(repo, "NEXT: start")
    swarm.recommend = {3: "synthesize"}
    result = step_run(repo)  # runs to round 1's next-action point, and waits there
    assert result.waiting and result.waiting.startswith("What next after this round? (round 1;")
    run = load(repo).state.run
    assert run.members == ["db-engineer", "api-designer", "sre", "data-scientist"]
    answer(repo, "NEXT: deep-dive the write buffer")
    assert step_run(repo).waiting  # round 2, then its next action
    framing = [t for n, s, r, t in swarm.seen if (s, r) == ("Moderator framing", 2)][0]
    assert "deep-dive: the write buffer" in framing
    answer(repo, "NEXT: follow")
    result = step_run(repo)  # round 3 (deep: at least three), recommending synthesis
    assert result.waiting and "round 3" in result.waiting
    answer(repo, "NEXT: follow")
    result = step_run(repo)
    assert result.outcome == "READY" and result.round == 3
    assert [c.provenance["step"] for c in ai_turns(load(repo))][-5:] == ["synthesis"] + [
        "vote"] * 4


def test_a_pause_writes_the_resume_context_and_run_resumes(repo, cli, swarm, fake_llm):
    create(repo, "lightweight")
    answers = iter(["start", "pause"])
    result = step_run(repo, ask=lambda step, run: next(answers))
    assert result.paused == 1 and result.outcome is None
    d = load(repo)
    resume = [c for c in d.comments if c.provenance.get("step") == "resume"]
    assert len(resume) == 1 and resume[0].origin == "tool"
    text = resume[0].body
    assert "## Current positions" in text and "## Quality trajectory" in text
    assert len(text) <= 3100
    calls = fake_llm.calls()
    code, out, err = cli("run", LEDGER, "--auto")
    assert code == 0, out + err
    d = load(repo)
    assert d.state.run.round == 2 and d.state.run.outcome == "READY"
    declare2 = [t for n, s, r, t in swarm.seen if (s, r) == ("Position declarations", 2)]
    assert declare2 and "Next: the peak write rate and whether a buffer absorbs it" in \
        declare2[0]  # the moderator's reopening gives the round its focus
    assert fake_llm.calls() > calls


def test_a_stopped_run_resumes_without_asking_anyone_twice(repo, cli, swarm, fake_llm,
                                                             monkeypatch):
    monkeypatch.setenv("CASCADE_MAX_CALLS", "6")
    code, out, err = discuss(cli, "lightweight", "--auto")
    assert code == 1 and "continue with cascade run" in err
    monkeypatch.delenv("CASCADE_MAX_CALLS")
    first = swarm.asked()
    code, out, err = cli("run", LEDGER, "--auto")
    assert code == 0, out + err
    asked = swarm.asked()
    assert len(asked) == len(set(asked))  # nobody asked twice for the same step and round
    ids = [c.provenance["msg"] for c in ai_turns(load(repo))]
    assert [int(i.split("-")[-1]) for i in ids] == list(range(1, len(ids) + 1))
    assert len(first) == 6


def test_an_unusable_panel_falls_back_to_the_registry(repo, cli, swarm):
    swarm.replies[("AI-Moderator", "Panel", 0)] = json.dumps({"comment": "Here.",
                                                             "panel": {"experts": "two"}})
    code, out, err = discuss(cli, "lightweight", "--auto")
    assert code == 0, out + err
    assert "the proposed panel could not be used" in out
    d = load(repo)
    members = d.state.run.members
    assert len(members) == 2 and all(d.personas.get(a).path.name == f"{a}.yml" for a in members)


def test_plan_makes_no_call(repo, cli, swarm, fake_llm):
    code, out, err = cli("plan", "--protocol", "swarm")
    assert code == 0, out + err
    assert "mode standard (default): 2-3 experts" in out
    assert "mode lightweight: 2 experts; fixed roles moderator, contrarian; rounds 1 to 2; " \
           "historian spoken by moderator" in out
    assert "Setup (once, before round 1):" in out
    assert "NEXT: start -- begin round 1 with this panel (recommended)" in out
    assert "NEXT: mode <lightweight|standard|deep> -- switch modes" in out
    # standard, three experts: 3 declarations, framing, 3 arguments, stress test, 3
    # responses, analogy, quality gate; the panel, the synthesis and 3 votes once
    assert "Calls: 13 per round in 7 waves, 5 once (setup and after the rounds); at most " \
           "44 in 3 rounds" in out
    code, out, _ = cli("plan", "--protocol", "swarm", "--mode", "lightweight")
    assert "Calls: 9 per round in 6 waves, 4 once" in out
    assert "analogy" not in out.split("Mode lightweight:")[1]
    code, out, err = cli("plan", "--protocol", "swarm", "--mode", "huge")
    assert code == 2 and "has no mode 'huge' (modes: lightweight, standard, deep)" in err
    assert discuss(cli, "lightweight", "--auto")[0] == 0
    before = fake_llm.calls()
    code, out, _ = cli("plan", LEDGER)
    assert "expert -> " not in out and "db-engineer -> openai/fake" in out
    assert "concluded, READY" in out
    assert fake_llm.calls() == before


def test_a_disagreement_budget_outside_three_to_six_is_noted(repo, cli, swarm):
    swarm.replies[("AI-Moderator", "Moderator framing", 1)] = json.dumps({
        "comment": "Everyone disagrees completely.", "budget": 9})
    code, out, _ = discuss(cli, "lightweight", "--auto")
    assert code == 0
    assert "AI-Moderator: budget 9 is outside the 3-6 asked for" in out
    frame = next(c for c in ai_turns(load(repo)) if step_of(c) == ("frame", 1))
    assert frame.provenance["budget"] == "9"


def _variant(old: str, new: str) -> str:
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "protocols/swarm.yml").read_text()
    assert old in text, old
    return text.replace(old, new, 1)


@pytest.mark.parametrize("old, new, message", [
    ("    roles: [moderator, contrarian]", "    roles: [moderator, judge]",
     "mode 'lightweight': roles must be a list of the protocol's fixed roles"),
    ("    stand_in: {historian: moderator}", "    stand_in: {historian: historian}",
     "mode 'lightweight': stand_in maps a role the mode lacks to one it has"),
    ("    redo: {modify: panel, mode: panel}", "    redo: {modify: declare}",
     "step 'start': redo 'modify' must name an earlier setup step (panel)"),
    ("      trigger: refs:responds_to", "      trigger: refs:blames",
     "a refs field's edge type is one of supports, counters"),
    ("      budget: {number: [0, 10], fallback: 5, aim: [3, 6]}",
     "      budget: {number: [10, 0]}", "field 'budget': number takes [low, high]"),
    ("  default: standard", "  default: huge", "modes default 'huge' is not one of the modes"),
    ("  - {id: expert, title: Expert, from: panel, tier: fast}",
     "  - {id: expert, title: Expert, from: crowd, tier: fast}",
     "role 'expert': give 'from: participants', 'from: panel' or 'persona: <alias>'"),
])
def test_a_broken_protocol_file_is_refused_with_its_line(repo, cli, old, new, message):
    folder = repo / ".cascade/protocols"
    folder.mkdir(parents=True)
    (folder / "swarm.yml").write_text(_variant(old, new))
    code, out, err = cli("plan", "--protocol", "swarm")
    assert code == 2, out + err
    assert ".cascade/protocols/swarm.yml:" in err and message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_a_topic_delivers_its_synthesis_and_a_document_ends_with_the_closing_vote(
        repo, cli, swarm, fake_llm):
    """Seed 001 is topic-driven: 'async function synthesizeDiscussion(discussionId) { ...
    Write(.../artifacts/synthesis.json, synthesis) ... return synthesis; }' -- a topic's
    discussion ends in its synthesis. PROTOCOLS.md: "A protocol with no verdict of its own
    (swarm, most roundtable strategies) ends, in the gate, with a closing vote of its voting
    participants on the document". A topic asks no closing vote (one that would fail, with
    findings no document can locate, is never asked): the synthesis is the outcome and
    `discuss` exits 0; a discussion of a document still ends with the vote."""
    swarm.replies[("AI-Api-Designer", "Closing vote", 2)] = "not json at all"
    swarm.replies[("AI-Db-Engineer", "Closing vote", 2)] = json.dumps({
        "comment": "Needs a benchmark.", "vote": "CHANGES", "findings": [
            {"id": "f1", "severity": "major", "where": "the write path",
             "what": "no load figures", "why": "the buffer question", "suggestion": "measure"}]})
    code, out, err = discuss(cli, "lightweight", "--auto")
    assert code == 0, out + err
    assert "the discussion concluded after round 2; its synthesis is the outcome" in out
    assert not [s for n, s, r, t in swarm.seen if s == "Closing vote"]
    d = load(repo)
    assert d.state.run.outcome == "READY"
    assert not [c for c in ai_turns(d) if c.provenance["step"] == "vote"]
    record = (repo / ARTIFACTS[0]).read_text()
    assert "## Closing vote" not in record and "Open findings" not in record
    assert "not located" not in record
    assert "## Synthesis" in record and "## Final positions" in record
    assert "| 2 | Concluded |" in record  # no vote was taken: not called a consensus
    code, out, _ = cli("status", LEDGER, "--json")
    assert json.loads(out)["discussions"][0]["outcome"] == "READY"
    code, out, _ = cli("plan", LEDGER)  # the topic's plan: the synthesis, no vote
    assert code == 0 and "Closing vote" not in out and "  1. Synthesis" in out
    code, out, _ = cli("plan", "--protocol", "swarm")  # a protocol's: says when it votes
    assert "  2. Closing vote" in out
    assert "(a topic's discussion has no document to vote on: no closing vote, its " \
           "synthesis is the outcome)" in out
    # the same discussion of a document: the experts vote on it, counted by the thresholds
    (repo / "docs").mkdir(exist_ok=True)
    (repo / "docs/event-store.md").write_text("# Event store\n\nUse Postgres.\n")
    code, out, err = cli("discuss", "Event store", "--protocol", "swarm", "--mode",
                         "lightweight", "--source", "docs/event-store.md", "--auto")
    assert code == 1, out + err  # a CHANGES vote and a failed one: never READY
    assert "round 2, Closing vote: AI-Db-Engineer            CHANGES" in out
    voted = Discussion.load(repo / "discussions/event-store.discussion.md", root=repo)
    assert [c for c in ai_turns(voted) if c.provenance["step"] == "vote"]
