"""The swarm discussion as seed 001 describes it, point by point: each test quotes the seed's
words it checks, and drives `cascade discuss --protocol swarm` in a real repository, every
model call over HTTP to the fake endpoint (tests/swarm_script.py)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from swarm_script import Swarm
from test_swarm import ARTIFACTS, ai_turns, discuss, load, step_of

PROTOCOL = Path(__file__).resolve().parent.parent / "protocols/swarm.yml"


@pytest.fixture
def swarm(repo, fake_llm, monkeypatch):
    monkeypatch.setenv("CASCADE_MODEL", "openai/fake")
    monkeypatch.setenv("CASCADE_API_BASE", fake_llm.url)
    monkeypatch.setenv("CASCADE_BACKOFF", "0.05")
    return Swarm(fake_llm)


def test_a_missing_shift_is_recorded_as_absent_not_as_major(repo, cli, swarm):
    """Seed 001: 'You MUST include a position update: { "positionShift": "none" | "minor" |
    "major", ... }'. A reply that gives none did not say it moved: the shift is recorded as
    absent (a note says so), never as the cautious-looking "major"."""
    swarm.replies[("AI-Sre", "Responses", 1)] = json.dumps({
        "comment": "I answer the stress test.", "currentPosition": "Postgres"})
    code, out, _ = discuss(cli, "standard", "--auto")
    assert code == 0
    assert "AI-Sre: positionShift: no value given; recorded as absent" in out
    d = load(repo)
    respond = next(c for c in ai_turns(d) if c.author == "AI-Sre" and step_of(c) == ("respond", 1))
    assert "positionShift" not in respond.provenance
    evolution = (repo / ARTIFACTS[4]).read_text()
    assert f"Round 1, shift not stated ({respond.provenance['msg']})" in evolution
    assert f"major shift ({respond.provenance['msg']})" not in evolution
    progress = (repo / ARTIFACTS[5]).read_text()
    assert "**Key takeaway**: position shifts: 1 minor, 1 none, 1 not stated" in progress


def test_plan_gives_the_seed_s_calls_per_round_beside_ours_and_why(repo, cli):
    """Seed 001's table of modes: '| Standard | 2-3 dynamic + 4 fixed | 2-3 | 5-8 | ...' and
    '| Lightweight | 2 dynamic + 2 fixed (Moderator, Contrarian) | 1-2 | 3-5 | ...'. Our count
    is higher: the plan says both figures and why they differ."""
    code, out, err = cli("plan", "--protocol", "swarm")
    assert code == 0, out + err
    line = next(x for x in out.splitlines() if "the seed counts" in x)
    assert line.startswith("  the seed counts 5-8 calls a round in standard mode; here 13: ")
    assert "three times (declaration, argument, response)" in line
    code, out, _ = cli("plan", "--protocol", "swarm", "--mode", "lightweight")
    assert "the seed counts 3-5 calls a round in lightweight mode; here 9: " in out
    code, out, _ = cli("plan", "--protocol", "swarm", "--mode", "deep")
    assert "the seed counts 8-12 calls a round in deep mode; here 16: " in out


def test_a_mode_s_seed_figure_is_checked_when_the_protocol_loads(repo, cli):
    """A mode's seed figure is data: a malformed one is one line naming file and line."""
    folder = repo / ".cascade/protocols"
    folder.mkdir(parents=True)
    (folder / "swarm.yml").write_text(PROTOCOL.read_text().replace("calls: [5, 8]",
                                                                   "calls: [8, 5]", 1))
    code, _, err = cli("plan", "--protocol", "swarm")
    assert code == 2 and ".cascade/protocols/swarm.yml:" in err
    assert "mode 'standard': seed takes calls: [low, high]" in err
    assert len(err.strip().splitlines()) == 1


def prompt(swarm, step: str, round_: int, name: str | None = None) -> str:
    return next(t for n, s, r, t in swarm.seen
                if (s, r) == (step, round_) and name in (None, n))


def test_the_framing_gets_the_tension_map_and_the_stress_test_the_argument_graph(repo, cli,
                                                                                 swarm):
    """Seed 001, the moderator's opening: '【Tension Map】 ${JSON.stringify(manifest.tensionMap,
    null, 2)}' ... 'Direct questions to specific experts based on the tension map'; the
    contrarian: '【Argument Graph】 ${JSON.stringify(argumentGraph, null, 2)}'; the historian's
    synthesis: '【Full Argument Graph】 ${JSON.stringify(fullArgumentGraph, null, 2)}'."""
    assert discuss(cli, "standard", "--auto")[0] == 0
    framing = prompt(swarm, "Moderator framing", 1)
    assert ": tension map>>>" in framing
    assert "- @db-engineer vs @api-designer: Consistency vs. flexibility -- strict schemas " \
           "against loose coupling" in framing
    d = load(repo)
    argue = [c for c in ai_turns(d) if step_of(c) == ("argue", 1)]
    stress = prompt(swarm, "Contrarian stress test", 1)
    assert ": argument graph>>>" in stress
    for c in argue:  # every argument's citation, as an edge
        kind, target = c.provenance["refs"].split(",")[0].split(":")
        assert f"- {c.provenance['msg']} ({c.author}) {kind} {target} (" in stress
    synthesis = prompt(swarm, "Synthesis", 3)
    respond = next(c for c in ai_turns(d) if step_of(c) == ("respond", 2))
    assert (f"- {respond.provenance['msg']} ({respond.author}) responds to "
            f"{respond.provenance['refs'].split(':')[1]} (AI-Contrarian)") in synthesis
    # the experts argue without it: shown only where the step says so
    assert ": argument graph>>>" not in prompt(swarm, "Arguments", 1)


def test_a_deep_dive_names_the_most_contested_point_and_the_framing_hears_of_it(repo, cli,
                                                                                swarm):
    """Seed 001: '{ label: "Deep dive", description: synthesis.activeDisagreements?.[0]?.point
    || "Most contested topic" }', and the next round's moderator gets the earlier rounds:
    '【Previous Discussion】 ${previousRoundsSummary}' -- the active disagreements included."""
    swarm.recommend = {1: "deep-dive"}
    swarm.replies[("AI-Moderator", "Quality gate", 1)] = json.dumps({
        "comment": "Sharp round.", "recommendation": "deep-dive",
        "scores": {"genuineDisagreement": 4, "evidenceQuality": 4, "steelManning": 4,
                   "novelInsights": 4, "positionEvolution": 4, "overall": 4},
        "disagreements": ["Choreography vs orchestration", "buffer or not"]})
    assert discuss(cli, "standard", "--auto")[0] == 0
    framing = prompt(swarm, "Moderator framing", 2)
    assert "follow the recommendation: deep-dive: Choreography vs orchestration" in framing
    assert ": active disagreements after round 1>>>" in framing
    assert "- Choreography vs orchestration\n> - buffer or not" in framing
    d = load(repo)
    notes = [e.fields.get("note") for e in d.events if e.kind == "ROUND"]
    assert "follow the recommendation: deep-dive: Choreography vs orchestration" in notes
    assert ": active disagreements" not in prompt(swarm, "Moderator framing", 1)


def test_a_person_s_deep_dive_without_a_point_digs_into_the_most_contested_one(repo, swarm):
    """Seed 001: 'Deep dive' -- 'synthesis.activeDisagreements?.[0]?.point'. A person who
    answers ``NEXT: deep-dive`` and names no point gets the gate's first disagreement."""
    from test_swarm import create, step_run

    create(repo, "standard")
    answers = iter(["start", "deep-dive", "synthesize"])
    step_run(repo, ask=lambda step, run: next(answers))
    framing = prompt(swarm, "Moderator framing", 2)
    assert "deep-dive: buffer or not" in framing


def test_arguments_come_in_the_seed_s_shape_and_its_references_are_read(repo, cli, swarm):
    """Seed 001, buildExpertPrompt's output format: '"proposals": ["Concrete proposals"],
    "references": [ { "targetId": "message-id", "relation": "supports|counters|extends|
    questions", "comment": "Why" } ], "counterpoints": [...], "questions": [...]'; and the
    round record's '"references": [ { "targetId": "r2-msg-001", "type": "counters" } ]'."""
    swarm.replies[("AI-Sre", "Arguments", 1)] = json.dumps({
        "comment": "The load is the crux.", "position": "a buffer first",
        "proposals": ["a write buffer in front of Postgres"],
        "references": [{"targetId": "r1-msg-002", "type": "questions"},
                       {"targetId": "r1-msg-005", "relation": "extends",
                        "comment": "the framing misses replay"},
                       {"targetId": "r1-msg-003", "relation": "blames"}],
        "counterpoints": ["r1-msg-002 ignores the peak load"],
        "questions": ["Who owns the replay tooling?"]})
    code, out, _ = discuss(cli, "standard", "--auto")
    assert code == 0
    asked = prompt(swarm, "Arguments", 1, "AI-Sre")
    assert '"references": [{"targetId": "<message id shown above>", "relation": "supports" | ' \
           '"counters" | "extends" | "questions", "comment": "<why>"}, ...]' in asked
    assert '"proposals": ["<text>", ...]' in asked and '"counterpoints": ["<text>", ...]' in asked
    assert "relation 'blames' is not one of supports, counters, extends, questions" in out
    d = load(repo)
    argue = next(c for c in ai_turns(d) if c.author == "AI-Sre" and step_of(c) == ("argue", 1))
    assert argue.provenance["refs"] == "questions:r1-msg-002,extends:r1-msg-005"
    assert argue.provenance["references"] == ("questions r1-msg-002 | extends r1-msg-005: the "
                                              "framing misses replay")
    assert argue.provenance["proposals"] == "a write buffer in front of Postgres"
    assert argue.provenance["counterpoints"] == "r1-msg-002 ignores the peak load"
    assert argue.provenance["questions"] == "Who owns the replay tooling?"
    assert "- extends r1-msg-005: the framing misses replay" in argue.body
    graph = json.loads((repo / ARTIFACTS[1]).read_text())
    assert {"from": argue.provenance["msg"], "to": "r1-msg-005", "type": "extends"} \
        in graph["edges"]
    # the others are shown the proposals, counterpoints and questions
    stress = prompt(swarm, "Contrarian stress test", 1)
    assert "proposals: a write buffer in front of Postgres" in stress
    assert "questions: Who owns the replay tooling?" in stress


def test_the_quality_gate_gives_insights_with_novelty_and_source_and_a_short_summary(
        repo, cli, swarm):
    """Seed 001, the round record's synthesis: '"summary": "Saga pattern consensus emerged
    ..."' and '"insights": [ { "insight": "Compensation chain failure is a real risk at
    scale", "novelty": "high", "source": "r2-msg-005" } ]'; the progress report's 'Summary
    of what happened (200-300 characters)'."""
    swarm.replies[("AI-Moderator", "Quality gate", 2)] = json.dumps({
        "comment": "A thin round.", "recommendation": "continue", "summary": "Too short.",
        "scores": {"genuineDisagreement": 3, "evidenceQuality": 3, "steelManning": 3,
                   "novelInsights": 3, "positionEvolution": 3, "overall": 3},
        "insights": [{"insight": "replay needs its own store", "novelty": "sky-high",
                      "source": "r2-msg-020"}, "backups double the write load"]})
    code, out, _ = discuss(cli, "standard", "--auto")
    assert code == 0
    asked = prompt(swarm, "Quality gate", 1)
    assert '"summary": "<text, 200 to 300 characters>"' in asked
    assert '"insights": [{"insight": "<text>", "novelty": "high" | "medium" | "low", ' \
           '"source": "<message id shown above>"}, ...]' in asked
    d = load(repo)
    q1, q2 = (next(c for c in ai_turns(d) if step_of(c) == ("quality", r)) for r in (1, 2))
    assert 200 <= len(q1.provenance["summary"]) <= 300
    assert q1.provenance["insights"] == "the peak load decides the buffer -- high -- r1-msg-013"
    assert "- the peak load decides the buffer (novelty: high; source: r1-msg-013)" in q1.body
    # an unknown novelty is the cautious one; a bare string is an insight with none given
    assert q2.provenance["insights"] == ("replay needs its own store -- low -- r2-msg-020 | "
                                         "backups double the write load -- low -- -")
    assert "AI-Moderator: summary: 10 characters; 200 to 300 asked for" in out
    assert "AI-Moderator: insights: 3 missing or invalid value(s)" in out
    # the historian sees every round: each gate's insight once (rounds 1 and 3), as listed
    assert prompt(swarm, "Synthesis", 3).count("the peak load decides the buffer") == 2
    assert "(novelty: high; source: r1-msg-013)" in prompt(swarm, "Synthesis", 3)


def test_the_synthesis_is_data_in_the_seed_s_shape_and_its_markdown_renders_it(repo, cli,
                                                                               swarm):
    """Seed 001, synthesizeDiscussion: '"executiveSummary": "Summary of the entire discussion
    (500-800 characters)"', '"insights": [ { "title", "description", "confidence":
    "high/medium/low", ..., "supportingEvidence": [{ "messageId": "r1-msg-003", ... }] } ]',
    '"minorityReport"', '"openQuestions"', '"recommendations"', '"metaObservations"'; then
    'Write(.../artifacts/synthesis.json, synthesis)' and 'Write(.../artifacts/synthesis.md,
    formatSynthesisAsMarkdown(synthesis))'."""
    code, _, _ = discuss(cli, "standard", "--auto")
    assert code == 0
    asked = prompt(swarm, "Synthesis", 3)
    assert '"executiveSummary": "<text, 500 to 800 characters>"' in asked
    assert '"evidence": ["<message id shown above>", ...]' in asked
    data = json.loads((repo / ARTIFACTS[6]).read_text())
    d = load(repo)
    synth = next(c for c in ai_turns(d) if c.provenance["step"] == "synthesis")
    cited = synth.provenance["refs"].replace("supports:", "").split(",")
    assert 500 <= len(data["executiveSummary"]) <= 800
    assert data["insights"] == [{"title": "A write buffer helps",
                                 "description": "It absorbs the peaks the contrarian named.",
                                 "confidence": "medium", "confidenceReason": "one benchmark",
                                 "evidence": cited}]
    assert data["minorityReport"][0]["advocate"] == "sre"
    assert data["minorityReport"][0]["stillValid"] == "true"
    assert data["openQuestions"][0] == {"question": "Peak write rate",
                                        "whyOpen": "no measurement yet", "suggestedApproach": ""}
    assert data["recommendations"][0]["risk"] == "a week's work"
    assert data["metaObservations"].startswith("The panel converged early")
    assert data["account"].startswith("## Resolved by argument")
    # the markdown renders the same data
    md = (repo / ARTIFACTS[2]).read_text()
    assert "### Executive summary\n\n" + data["executiveSummary"] in md
    assert ("- A write buffer helps (description: It absorbs the peaks the contrarian named.; "
            "confidence: medium; confidence reason: one benchmark; evidence: "
            + ", ".join(cited) + ")") in md
    assert "### Minority report\n\n- Keep one moving part (advocate: sre;" in md
    assert "### Meta observations\n\nThe panel converged early" in md
    assert md.count("A write buffer helps") == 1  # the account comes without the tool's lists


def test_a_short_executive_summary_is_noted(repo, cli, swarm):
    """Seed 001: '"executiveSummary": "Summary of the entire discussion (500-800
    characters)"': a shorter one is kept, with a note saying so."""
    swarm.replies[("AI-Moderator", "Synthesis", 2)] = json.dumps({
        "comment": "Short.", "executiveSummary": "Buffer it.", "supports": ["r1-msg-002"]})
    code, out, _ = discuss(cli, "lightweight", "--auto")
    assert code == 0
    assert "AI-Moderator: executiveSummary: 10 characters; 500 to 800 asked for" in out
    data = json.loads((repo / ARTIFACTS[6]).read_text())
    assert data["executiveSummary"] == "Buffer it." and data["insights"] == []


def test_a_pause_s_context_is_the_historian_s_and_a_resume_opens_with_the_moderator(
        repo, cli, swarm, fake_llm):
    """Seed 001, checkpointDiscussion: 'const resumeContext = await Task({ ... name:
    "historian", ... Generate the context needed to resume this discussion later'; and
    resumeDiscussion: 'const reopening = await Task({ ... name: "moderator", ... 【Previous
    Context】 ${context} ... Propose the next round's topic and framing.'"""
    from test_swarm import LEDGER, create, step_run

    create(repo, "standard")
    answers = iter(["start", "pause"])
    result = step_run(repo, ask=lambda step, run: next(answers))
    assert result.paused == 1
    assert swarm.asked()[-1] == ("AI-Historian", "Resume context", 1)
    checkpoint = prompt(swarm, "Resume context", 1)
    assert "between 250 and 450 words" in checkpoint and "quality\ntrajectory" in checkpoint
    d = load(repo)
    context = next(c for c in ai_turns(d) if c.provenance["step"] == "checkpoint")
    assert context.author == "AI-Historian" and context.provenance["round"] == "1"
    assert any(c.provenance.get("step") == "resume" for c in d.comments)  # the tool's, too
    code, out, err = cli("run", LEDGER, "--auto")
    assert code == 0, out + err
    round2 = [(n, s) for n, s, r in swarm.asked() if r == 2]
    assert round2[0] == ("AI-Moderator", "Reopening")  # before anyone declares
    reopening = prompt(swarm, "Reopening", 2)
    assert "AI-Historian keeps the notes of round 1." in reopening  # the historian's context
    assert ": resume context after round 1>>>" in reopening and "## Current positions" in \
        reopening  # and the tool's, from the ledger
    assert ": tension map>>>" in reopening
    framing = prompt(swarm, "Moderator framing", 2)
    assert "the peak write rate and whether a buffer absorbs it" in framing
    d = load(repo)
    assert d.state.run.outcome == "READY"
    reopen = next(c for c in ai_turns(d) if c.provenance["step"] == "reopen")
    assert reopen.provenance["focus"] == "the peak write rate and whether a buffer absorbs it"
    # only a resumed pause reopens: no other round does
    assert [r for n, s, r in swarm.asked() if s == "Reopening"] == [2]


SEED_GATE = {  # the quality gate's reply as seed 001's Synthesis Task shapes it
    "comment": "A weak round: too much agreement.",
    "qualityScore": {"genuineDisagreement": 2, "evidenceQuality": 3, "steelManning": 4,
                     "novelInsights": 2, "positionEvolution": 3, "overall": 2},
    "summary": ("Round 1: the panel agreed to avoid 2PC and split on whether a write buffer "
                "belongs in front of Postgres; the contrarian's load argument moved the "
                "database engineer a little, while the others held their positions."),
    "agreements": [{"point": "Distributed 2PC should be avoided",
                    "supporters": ["db-engineer", "api-designer"], "strength": "strong"}],
    "activeDisagreements": [{"point": "Orchestration vs choreography", "positions": [
        {"stance": "Orchestration", "advocates": ["db-engineer"]},
        {"stance": "Choreography", "advocates": ["api-designer", "sre"]}]}],
    "openQuestions": ["What is the peak write rate?"],
    "recommendation": "continue", "recommendationReason": "sharpen the contrarian"}


def test_the_quality_gate_reads_the_seed_s_quality_score_and_its_shapes(repo, cli, swarm):
    """Seed 001's quality gate: '"qualityScore": { "genuineDisagreement": 1-5, ...
    "overall": 1-5 }', '"agreements": [{ "point": "...", "supporters": ["expert-ids"],
    "strength": "strong|moderate|weak" }]', '"activeDisagreements": [{ "point": "...",
    "positions": [{"stance": "...", "advocates": ["expert-ids"]}] }]'. A reply in the seed's
    shape is read as given -- not as all 1s -- and its supporters, strength and advocates are
    kept; the project's own "scores" is read as before (the other rounds)."""
    swarm.replies[("AI-Moderator", "Quality gate", 1)] = json.dumps(SEED_GATE)
    code, out, _ = discuss(cli, "standard", "--auto")
    assert code == 0
    assert "scores: genuineDisagreement" not in out  # no score was taken as the lowest
    d = load(repo)
    gates = [c for c in ai_turns(d) if c.provenance["step"] == "quality"]
    stamp = gates[0].provenance
    assert stamp["scores"] == ("genuineDisagreement:2,evidenceQuality:3,steelManning:4,"
                               "novelInsights:2,positionEvolution:3,overall:2")
    assert stamp["flagged"] == "yes"  # overall 2 < 3: flagged, as the seed asks
    assert gates[1].provenance["scores"].endswith("overall:4")  # "scores": the project's
    assert "- Distributed 2PC should be avoided (supporters: db-engineer, api-designer; " \
           "strength: strong)" in gates[0].body
    assert "- Orchestration vs choreography (positions: Orchestration (advocates: " \
           "db-engineer); Choreography (advocates: api-designer, sre))" in gates[0].body
    # the next round's moderator hears of the disagreement with its advocates
    framing = prompt(swarm, "Moderator framing", 2)
    assert "Choreography (advocates: api-designer, sre)" in framing
    asked = prompt(swarm, "Quality gate", 1)
    assert '"supporters": ["<persona id>", ...], "strength": "strong" | "moderate" | ' \
           '"weak"' in asked
    assert '"advocates": ["<persona id>", ...]' in asked


def test_the_quality_gate_is_shown_the_argument_graph(repo, cli, swarm):
    """Seed 001's quality gate: 'Evaluate this round's discussion quality and synthesize.
    【All Messages】 ... 【Argument Graph】 ${JSON.stringify(argumentGraph, null, 2)}'."""
    assert discuss(cli, "lightweight", "--auto")[0] == 0
    d = load(repo)
    asked = prompt(swarm, "Quality gate", 1)
    assert ": argument graph>>>" in asked
    stress = next(c for c in ai_turns(d) if step_of(c) == ("stress", 1))
    target = stress.provenance["refs"].split(",")[0].split(":")[1]
    assert f"- {stress.provenance['msg']} (AI-Contrarian) counters {target} (" in asked


def test_the_next_action_question_shows_the_position_shift_count(repo, swarm):
    """Seed 001, Step 9: 'question: `Round ${roundNum} complete.\\n\\n` + `**Quality Score:**
    ${synthesis.qualityScore?.overall || "N/A"}/5\\n` + `**Position Shifts:**
    ${positionShifts.length}\\n`'. The question says how many positions moved, whose, and
    what triggered them."""
    from test_swarm import create, step_run

    from cascade.protocol.about import about

    create(repo, "standard")
    told: list[str] = []
    answers = iter(["start", "follow", "synthesize"])

    def ask(step, run):
        if step.id == "next":
            told.extend(about(run).lines())
        return next(answers)

    step_run(repo, ask=ask)
    d = load(repo)
    moved = next(c for c in ai_turns(d) if step_of(c) == ("respond", 1)
                 and c.provenance.get("positionShift") == "minor")
    trigger = moved.provenance["refs"].split(":")[1]
    assert f"  Position shifts: 1 -- AI-Db-Engineer minor (triggered by {trigger})" in told
    assert any(line.startswith("    scores (1-5): ") and "overall 4" in line for line in told)


def test_the_analogy_prompt_lists_the_seed_s_fields(repo, cli, swarm):
    """Seed 001, Step 6: 'Fields to consider: biology, physics, economics, law, military
    strategy, urban planning, game theory, ecology.' and '3. Explain the analogy in detail:
    what maps to what, and what doesn't map'."""
    assert discuss(cli, "standard", "--auto")[0] == 0
    asked = " ".join(prompt(swarm, "Cross-domain analogy", 1).split())
    assert ("fields to consider: biology, physics, economics, law, military strategy, urban "
            "planning, game theory, ecology") in asked
    assert "what corresponds to what and what does not" in asked


def test_synthesis_json_carries_agreements_unresolved_debates_and_position_evolution(
        repo, cli, swarm):
    """Seed 001, synthesizeDiscussion's output format: '"agreements": [ { "point":
    "Agreement point", "supporters": ["..."], "strength": "strong|moderate|weak" } ]',
    '"unresolvedDebates": [ { "topic": "Point of contention", "positions": [ { "stance":
    "Position A", "advocates": ["..."], "arguments": ["..."] }, ... ], "whyUnresolved": "..." }
    ]', '"positionEvolution": [ { "expert": "expert-id", "journey": ["Initial position",
    "After round 1", "Final position"], "keyTurningPoints": ["message-ids that caused
    shifts"] } ]' -- then 'Write(.../artifacts/synthesis.json, synthesis)'."""
    base = json.loads(swarm.reply("AI-Historian", "Synthesis", 3, ""))
    base.update({
        "agreements": [{"point": "Avoid 2PC", "supporters": ["db-engineer", "sre"],
                        "strength": "strong"}],
        "unresolvedDebates": [{"topic": "A write buffer", "positions": [
            {"stance": "Buffer", "advocates": ["db-engineer"],
             "arguments": ["absorbs the peaks", "cheap to add"]},
            {"stance": "No buffer", "advocates": ["sre"], "arguments": ["one more part"]}],
            "whyUnresolved": "no load profile yet"}],
        "positionEvolution": [{"expert": "db-engineer",
                               "journey": ["Postgres", "Postgres with a write buffer"],
                               "keyTurningPoints": ["r1-msg-007", "the contrarian"]}]})
    swarm.replies[("AI-Historian", "Synthesis", 3)] = json.dumps(base)
    assert discuss(cli, "standard", "--auto")[0] == 0
    data = json.loads((repo / ARTIFACTS[6]).read_text())
    assert data["agreements"] == [{"point": "Avoid 2PC", "supporters": ["db-engineer", "sre"],
                                   "strength": "strong"}]
    assert data["unresolvedDebates"] == [{"topic": "A write buffer", "positions": [
        {"stance": "Buffer", "advocates": ["db-engineer"],
         "arguments": ["absorbs the peaks", "cheap to add"]},
        {"stance": "No buffer", "advocates": ["sre"], "arguments": ["one more part"]}],
        "whyUnresolved": "no load profile yet"}]
    assert data["positionEvolution"] == [{"expert": "db-engineer",
                                          "journey": ["Postgres", "Postgres with a write buffer"],
                                          "keyTurningPoints": ["r1-msg-007"]}]  # ids only
    md = (repo / ARTIFACTS[2]).read_text()
    assert "### Unresolved debates\n\n- A write buffer (positions: Buffer (advocates: " \
           "db-engineer, arguments: absorbs the peaks, cheap to add)" in md
    asked = prompt(swarm, "Synthesis", 3)
    assert '"unresolvedDebates": [{"topic": "<text>", "positions": [{"stance": "<text>", ' \
           '"advocates": ["<persona id>", ...], "arguments": ["<text>", ...]}, ...], ' \
           '"whyUnresolved": "<text>"}, ...]' in asked


def test_a_synthesis_without_position_evolution_gets_the_ledger_s(repo, cli, swarm):
    """Seed 001: '"positionEvolution": [ { "expert": "expert-id", "journey": [...],
    "keyTurningPoints": ["message-ids that caused shifts"] } ]'. A historian who gives none
    leaves synthesis.json no poorer: each expert's journey is the ledger's -- the declared
    position, then each position a shift moved it to, and the messages that triggered them."""
    assert discuss(cli, "lightweight", "--auto")[0] == 0
    d = load(repo)
    data = json.loads((repo / ARTIFACTS[6]).read_text())
    triggers = [c.provenance["refs"].split(":")[1] for c in ai_turns(d)
                if c.author == "AI-Db-Engineer" and c.provenance["step"] == "respond"]
    assert data["positionEvolution"][0] == {
        "expert": "db-engineer",
        "journey": ["AI-Db-Engineer prefers option 2 (round 1)",
                    "Postgres with a write buffer", "Postgres with a write buffer"],
        "keyTurningPoints": triggers}
    assert data["positionEvolution"][1]["journey"] == [
        "AI-Api-Designer prefers option 0 (round 1)"]
