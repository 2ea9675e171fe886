"""Propose / Challenge / Synthesize (seed 000) on the protocol engine, standalone: `cascade
discuss`, `run` and `plan` in a real repository, every model call over HTTP to the fake
endpoint, whose replies are scripted per persona, step and round."""
from __future__ import annotations

import json
import re

import pytest

from cascade import Discussion

LEDGER = "discussions/which-database-for-the-event-store.discussion.md"
RECORD = "discussions/which-database-for-the-event-store.record.md"
GRAPH = "discussions/which-database-for-the-event-store.argument-graph.json"
TOPIC = "Which database for the event store?"
ASK = re.compile(r"Reply as (AI-\w+) with")
STEP = re.compile(r"STEP: (\w+), round (\d+)")
POSITIONS = {
    "AI-Architect": "Use Postgres: durability, replication and mature operational tooling.",
    "AI-Security": "Use SQLite: a single file has fewer moving parts to secure and audit.",
    "AI-Pragmatist": "Ship on SQLite now and keep the storage behind one small interface.",
    "AI-Perfectionist": "Benchmark both under the real write load before choosing anything.",
}
SYNTHESIS = ("## Common ground\nBoth want durable, ordered storage.\n\n## Resolutions\nStart small."
             "\n\n## Consensus statement\nStart on SQLite behind an interface; move to Postgres "
             "past 1,000 writes a second.")


class Panel:
    """Scripted replies: ``verdicts[(name, round)]`` for the confirm step (default ACCEPT),
    ``replies[(name, step, round)]`` to override any reply; everything else is a position, a
    challenge or the synthesis. Records each request's (name, step, round, text)."""

    def __init__(self, fake) -> None:
        self.verdicts: dict[tuple[str, int], str] = {}
        self.replies: dict[tuple[str, str, int], str] = {}
        self.seen: list[tuple[str, str, int, str]] = []
        self.invite: str = json.dumps({"comment": "Security and delivery pull apart here.",
                                       "participants": ["security", "pragmatist"]})
        fake.default(self)

    def __call__(self, request) -> str:
        text = request.text
        name = ASK.search(text).group(1)
        if "Pick between" in text:  # auto-invite: the synthesizer picks the panel
            self.seen.append((name, "Invite", 0, text))
            return self.invite
        step, round_ = STEP.search(text).group(1), int(STEP.search(text).group(2))
        self.seen.append((name, step, round_, text))
        if (name, step, round_) in self.replies:
            return self.replies[(name, step, round_)]
        if step == "Synthesize":
            return json.dumps({"comment": SYNTHESIS, "diverged": "no"})
        if step == "Recommendation":
            return json.dumps({"comment": "Recommend SQLite with a migration trigger."})
        if step == "Confirm":
            verdict = self.verdicts.get((name, round_), "ACCEPT")
            return json.dumps({"comment": f"{verdict} in round {round_}.", "vote": verdict,
                               "findings": [] if verdict == "ACCEPT" else [
                                   {"severity": "major", "where": "-", "what": "a reason"}]})
        if step == "Challenge":
            return json.dumps({"comment": f"{name} answers: the divergence is about load.",
                               "shift": "minor"})
        return json.dumps({"comment": POSITIONS[name] + f" (round {round_})"})

    def asked(self, step: str | None = None) -> list[tuple[str, str, int]]:
        return [(n, s, r) for n, s, r, _ in self.seen if step is None or s == step]


@pytest.fixture
def panel(repo, fake_llm, monkeypatch):
    monkeypatch.setenv("CASCADE_MODEL", "openai/fake")
    monkeypatch.setenv("CASCADE_API_BASE", fake_llm.url)
    monkeypatch.setenv("CASCADE_BACKOFF", "0.05")
    return Panel(fake_llm)


def discuss(cli, *extra: str):
    return cli("discuss", TOPIC, "--participants", "architect,security", *extra)


def outcome_events(repo) -> list[tuple[str, str]]:
    return [(e.value.split()[0], e.fields.get("round")) for e in Discussion.load(repo / LEDGER).events
            if e.kind == "OUTCOME"]


def test_consensus_in_round_one(repo, cli, panel, fake_llm):
    code, out, err = discuss(cli)
    assert code == 0, out + err
    assert fake_llm.calls() == 7  # 3N + 1 with two participants
    pair = ("AI-Architect", "AI-Security")
    steps = [s for _, s, _ in panel.asked()]
    assert steps == ["Propose"] * 2 + ["Challenge"] * 2 + ["Synthesize"] + ["Confirm"] * 2
    assert sorted(panel.asked()) == sorted(
        [(n, s, 1) for s in ("Propose", "Challenge", "Confirm") for n in pair]
        + [("AI-Synthesizer", "Synthesize", 1)])
    d = Discussion.load(repo / LEDGER)
    assert outcome_events(repo) == [("READY", "1")]
    ids = [c.provenance["msg"] for c in d.comments if "msg" in c.provenance]
    assert ids == [f"r1-msg-{i:03d}" for i in range(1, 8)]  # gapless
    assert "Propose, round 1:" in out and "| AI-Architect | Use Postgres" in out  # the table
    assert "round 1, Synthesize: AI-Synthesizer: answered (" in out + err  # it takes no vote
    assert "Synthesizer no vote" not in out + err
    tables = [c for c in d.comments if c.origin == "tool"]
    assert [c.provenance["step"] for c in tables] == ["propose", "challenge"]
    record = (repo / RECORD).read_text()
    assert "| Consensus |" in record and "### Consensus statement" in record
    assert "| AI-Security | Use SQLite" in record and "| ACCEPT |" in record
    code, out, _ = cli("status", LEDGER, "--json")
    view = json.loads(out)["discussions"][0]
    assert (view["protocol"], view["round"], view["outcome"], view["waiting_for"]) == (
        "pcs", 1, "READY", None)
    assert view["artifacts"] == [RECORD, GRAPH]
    graph = json.loads((repo / GRAPH).read_text())
    assert [n["id"] for n in graph["nodes"]] == ids
    edges = sorted((e["from"], e["type"], e["to"]) for e in graph["edges"])
    stamped = sorted((c.provenance["msg"], *c.provenance["refs"].split(":"))
                     for c in d.comments if c.origin == "ai" and "refs" in c.provenance)
    assert edges == stamped  # every typed reference, from the turns' stamps
    assert [kind for _, kind, _ in edges].count("counters") == 2
    assert [kind for _, kind, _ in edges].count("responds_to") == 2
    assert "```mermaid" in record and "-- counters -->" in record
    assert view["consensus"]["reached"] is True


def test_blind_proposals_and_a_challenge_that_sees_them(repo, cli, panel):
    assert discuss(cli)[0] == 0
    for name, step, round_, text in panel.seen:
        others = [p for n, p in POSITIONS.items() if n != name]
        if step == "Propose":
            assert not any(p in text for p in others), f"{name} saw a peer's position"
            assert POSITIONS[name] not in text  # nor its own: nothing of this round yet
        if step == "Challenge":
            assert all(POSITIONS[n] in text for n in ("AI-Architect", "AI-Security"))
            other = "AI-Security" if name == "AI-Architect" else "AI-Architect"
            assert "The divergent position you answer" in text and other in text
    d = Discussion.load(repo / LEDGER)
    challenge = [c for c in d.comments if c.provenance.get("step") == "challenge"
                 and c.origin == "ai"]
    assert {c.provenance["refs"] for c in challenge} == {"counters:r1-msg-001",
                                                         "counters:r1-msg-002"}


def test_consensus_in_round_two_from_a_short_summary(repo, cli, panel, fake_llm):
    panel.verdicts[("AI-Security", 1)] = "REJECT"
    code, out, err = discuss(cli)
    assert code == 0, out + err
    assert fake_llm.calls() == 14
    d = Discussion.load(repo / LEDGER)
    assert [e.value for e in d.events if e.kind == "ROUND"] == ["2"]
    assert outcome_events(repo) == [("READY", "2")]
    round_two = [t for n, s, r, t in panel.seen if (s, r) == ("Propose", 2)]
    assert len(round_two) == 2
    for text in round_two:
        assert "Round 1:" in text and "AI-Security rejected it" in text
        summary = text.split("The earlier rounds, in short:", 1)[1].split("<<<end", 1)[0]
        assert len(summary) <= 1000 + 200  # the summary (≤ 1000) and its block's framing
    assert "| 2 | Consensus |" in (repo / RECORD).read_text()


def test_impasse_after_three_rounds_with_a_recommendation(repo, cli, panel, fake_llm):
    for r in (1, 2, 3):
        panel.verdicts[("AI-Security", r)] = "REJECT"
    code, out, err = discuss(cli)
    assert code == 1
    assert fake_llm.calls() == 3 * 7 + 1  # the recommendation, once
    assert outcome_events(repo) == [("IMPASSE", "3")]
    record = (repo / RECORD).read_text()
    assert "| 3 (max reached) | Impasse |" in record
    assert "## Divergent positions" in record and "Recommend SQLite with a migration" in record
    code, out, _ = cli("status", LEDGER, "--json")
    view = json.loads(out)["discussions"][0]
    assert view["outcome"] == "IMPASSE" and "cascade decide" in view["waiting_for"]
    assert view["consensus"]["reached"] is False


def test_a_stopped_run_resumes_without_asking_anyone_twice(repo, cli, panel, fake_llm,
                                                           monkeypatch):
    monkeypatch.setenv("CASCADE_MAX_CALLS", "3")
    code, out, err = discuss(cli)
    assert code == 1
    assert fake_llm.calls() == 3
    assert "continue with cascade run" in err
    monkeypatch.delenv("CASCADE_MAX_CALLS")
    code, out, err = cli("run", LEDGER)
    assert code == 0, out + err
    assert fake_llm.calls() == 7  # every turn once
    assert len(set(panel.asked())) == len(panel.asked())
    code, out, _ = cli("run", LEDGER)  # concluded: nothing to run
    assert code == 0 and "nothing to run" in out and fake_llm.calls() == 7


def test_plan_makes_no_call(repo, cli, panel, fake_llm):
    code, out, err = cli("plan", "--protocol", "pcs", "--participants",
                         "architect,security,pragmatist,perfectionist")
    assert code == 0, err
    assert "13 per round in 4 waves; at most 40 in 3 rounds" in out  # 3N + 1 with four, and the recommendation
    assert "synthesizer (strong): synthesizer -> openai/fake" in out
    assert fake_llm.calls() == 0
    panel.verdicts[("AI-Security", 1)] = "REJECT"
    monkey_calls = 7
    assert discuss(cli, "--rounds", "1")[0] == 1  # one round only: impasse at once
    assert fake_llm.calls() == monkey_calls + 1
    code, out, _ = cli("plan", LEDGER)
    assert "concluded, IMPASSE" in out and fake_llm.calls() == monkey_calls + 1


def test_malformed_replies_fail_closed(repo, cli, panel, fake_llm):
    # A confirmation without a verdict is a REJECT, never a READY (and a note says so).
    panel.replies[("AI-Architect", "Confirm", 1)] = json.dumps({"comment": "Fine, I suppose."})
    # The synthesizer answers garbage in round 2, twice (the repair too): the run stops there.
    panel.replies[("AI-Synthesizer", "Synthesize", 2)] = "I think we agree. No JSON today."
    code, out, err = discuss(cli)
    assert code == 1
    assert "vote: no value given; taken as REJECT" in out
    assert "AI-Synthesizer" in err and "unparseable reply twice" in err
    assert outcome_events(repo) == []
    d = Discussion.load(repo / LEDGER)
    assert d.state.result.reached is False
    del panel.replies[("AI-Synthesizer", "Synthesize", 2)]
    code, out, err = cli("run", LEDGER)
    assert code == 0, out + err
    assert outcome_events(repo) == [("READY", "2")]


def test_bad_input_exits_2(repo, cli, panel, fake_llm):
    assert cli("discuss", TOPIC, "--participants", "architect")[0] == 2  # pcs takes 2 to 4
    assert cli("discuss", TOPIC, "--participants", "architect,synthesizer")[0] == 2
    assert cli("discuss", TOPIC, "--mode", "deep", "--participants", "architect,security")[0] == 2
    assert cli("discuss", TOPIC, "--rounds", "4", "--participants", "architect,security")[0] == 2
    assert fake_llm.calls() == 0


def test_auto_invite_asks_the_synthesizer_and_records_why(repo, cli, panel, fake_llm):
    code, out, err = cli("discuss", "Threat model for session tokens and authentication",
                         "--auto-invite")
    assert code == 0, out + err
    assert fake_llm.calls() == 1 + 7  # the pick, then one round
    path = "discussions/threat-model-for-session-tokens-and-authentication.discussion.md"
    d = Discussion.load(repo / path)
    assert d.participants == ["security", "pragmatist"]
    assert ("Participants @security, @pragmatist: auto-invited by AI-Synthesizer: Security and "
            "delivery pull apart here.") in (repo / path).read_text()
    [(_, _, _, text)] = [x for x in panel.seen if x[1] == "Invite"]
    assert "Pick between 2 and 4 participants" in text and "synthesizer:" not in text


@pytest.mark.parametrize("pick", [
    json.dumps({"comment": "x", "participants": ["security"]}),  # too few
    json.dumps({"comment": "x", "participants": ["security", "synthesizer"]}),  # a fixed role
    json.dumps({"comment": "x", "participants": ["security", "nobody"]}),
    "no JSON at all",
])
def test_an_unusable_pick_falls_back_to_topic_words(repo, cli, panel, pick):
    panel.invite = pick
    code, out, err = cli("discuss", "Threat model for session tokens and authentication",
                         "--auto-invite")
    assert code == 0, out + err
    assert "picked by topic words" in out
    path = "discussions/threat-model-for-session-tokens-and-authentication.discussion.md"
    d = Discussion.load(repo / path)
    assert "security" in d.participants and len(d.participants) == 2
    assert "synthesizer" not in d.participants


def test_a_terminal_shows_one_live_line_per_participant(tmp_path):
    import io

    from cascade.config.personas import load_personas
    from cascade.turns.display import LiveProgress
    from cascade.turns.asking import Outcome

    registry = load_personas(None)
    stream = io.StringIO()
    progress = LiveProgress(stream)
    rows = []
    for step, aliases in (("Propose", ("architect", "security")), ("Synthesize", ("synthesizer",))):
        for alias in aliases:
            o = Outcome(registry.get(alias), tmp_path / "x.discussion.md")
            o.step, o.round, o.asks_vote = step, 1, step == "Propose"
            progress.start(o)
            rows.append(o)
    for o in rows:
        o.status, o.vote, o.seconds = "ok", "ACCEPT" if o.step == "Propose" else None, 1.0
        progress.finish(o)
    progress.close()
    lines = [" ".join(ln.split()) for ln in stream.getvalue().splitlines() if ln.strip()]
    assert any("round 1, Propose: AI-Architect ACCEPT (1.0s)" in ln for ln in lines)
    assert any("round 1, Propose: AI-Security ACCEPT (1.0s)" in ln for ln in lines)
    # a step that takes no vote says it answered, not that a vote is missing
    assert any("round 1, Synthesize: AI-Synthesizer answered (1.0s)" in ln for ln in lines)
    final = stream.getvalue().rsplit("\x1b[3F", 1)[-1]  # redrawn in place: the last frame
    assert final.count("\n") == 3  # one line per persona, each alone on its line


def test_status_text_says_where_the_protocol_stands(repo, cli, panel):
    for r in (1, 2, 3):
        panel.verdicts[("AI-Security", r)] = "REJECT"
    assert discuss(cli)[0] == 1
    code, out, _ = cli("status", LEDGER)
    assert code == 0
    assert "Protocol: pcs, round 3: concluded, IMPASSE" in out
    assert "Waiting for a person: impasse after 3 rounds: which way? cascade decide" in out
    assert f"Artifact: {RECORD}" in out
    assert "Participants (3 responded):" in out  # two participants and the synthesizer
    assert "  Cascade:" not in out  # the tables the tool wrote are nobody's response


def test_a_document_goes_in_fenced_and_redacted(repo, cli, panel, fake_llm):
    secret = "sk-proj-" + "Q7w2" * 12
    (repo / "docs").mkdir()
    (repo / "docs/0007-store.md").write_text(
        f"# Store events in SQLite\n\nWe use SQLite.\n\nOPENAI_API_KEY={secret}\n")
    code, out, err = cli("discuss", "Should we accept ADR 7?", "--participants",
                         "architect,security", "--source", "docs/0007-store.md")
    assert code == 0, out + err
    texts = [r.text for r in fake_llm.requests if r.is_chat]
    assert len(texts) == 7
    assert all("We use SQLite." in t for t in texts)  # every step sees the document
    assert not any(secret in t for t in texts)
    assert "redacted before sending: docs/0007-store.md:5" in out
    d = Discussion.load(repo / "discussions/should-we-accept-adr-7.discussion.md")
    assert d.source == "docs/0007-store.md"


def test_a_document_seen_in_part_is_never_accepted(repo, cli, panel, fake_llm, monkeypatch):
    monkeypatch.setenv("CASCADE_SOURCE_TOKENS", "200")
    (repo / "docs").mkdir()
    (repo / "docs/big.md").write_text("# Big\n\n" + "A long context paragraph. " * 400)
    code, out, err = cli("discuss", "Accept the big ADR?", "--participants",
                         "architect,security", "--source", "docs/big.md", "--rounds", "1")
    assert code == 1  # every participant answered ACCEPT, on part of the document
    assert "its votes will not count" in out
    d = Discussion.load(repo / "discussions/accept-the-big-adr.discussion.md")
    assert d.state.result.reached is False and d.state.run.outcome == "IMPASSE"


def test_a_bad_setting_writes_nothing(repo, cli, panel, monkeypatch):
    monkeypatch.setenv("CASCADE_SOURCE_TOKENS", "100")
    code, out, err = discuss(cli)
    assert code == 2 and "CASCADE_SOURCE_TOKENS" in err
    assert not (repo / LEDGER).exists()


def test_turn_on_a_step_protocol_runs_its_steps(repo, cli, panel, fake_llm, monkeypatch):
    monkeypatch.setenv("CASCADE_MAX_CALLS", "2")
    assert discuss(cli)[0] == 1  # stopped after the proposals
    monkeypatch.delenv("CASCADE_MAX_CALLS")
    code, out, err = cli("turn", LEDGER, "@security")
    assert code == 2 and "asks by its steps, not by name: cascade run" in err
    code, out, err = cli("turn", LEDGER)
    assert code == 0, out + err
    assert fake_llm.calls() == 7


def test_a_phase_protocol_names_a_registered_planner(repo, cli):
    (repo / ".cascade/protocols").mkdir(parents=True)
    (repo / ".cascade/protocols/mine.yml").write_text(
        "name: mine\nplanner: loudest\nroles:\n  - {id: participant, from: participants}\n"
        "steps:\n  - {id: talk, role: participant, fields: {vote: [READY, CHANGES, REJECT]}}\n")
    code, _, err = cli("plan", "--protocol", "mine")
    assert code == 2 and "mine.yml:2: unknown planner 'loudest' (known: respond)" in err


def test_cascade_model_strong_asks_the_synthesizer(repo, cli, panel, fake_llm, monkeypatch):
    monkeypatch.setenv("CASCADE_MODEL_STRONG", "openai/large")
    assert discuss(cli)[0] == 0
    asked = {(r.body["model"], "Reply as AI-Synthesizer" in r.text)
             for r in fake_llm.requests if r.is_chat}
    assert asked == {("fake", False), ("large", True)}


def test_rounds_fewer_than_the_cap_are_what_the_prompt_says(repo, cli, panel):
    assert discuss(cli, "--rounds", "2")[0] == 0
    assert all("round 1 of at most 2 (Propose / Challenge / Synthesize)" in text
               for _, _, _, text in panel.seen)


def test_a_reference_to_a_message_the_ledger_lacks_is_not_an_edge():
    from cascade.protocol.graph import argument_graph, mermaid
    from cascade.protocol.loader import load_protocol
    from cascade.protocol.runstate import Draft, Turn

    run = Draft(load_protocol("pcs", None).steps, ["architect", "security"],
              {"synthesizer": "synthesizer"})
    run.turns = [Turn("architect", "AI-Architect", "propose", 1, "r1-msg-001", 1, "A.", {},
                      [], 10, None),
                 Turn("security", "AI-Security", "challenge", 1, "r1-msg-002", 2, "B.", {},
                      [("counters", "r1-msg-001"), ("supports", "r9-msg-999")], 20, None)]
    graph = argument_graph(run)
    assert graph["edges"] == [{"from": "r1-msg-002", "to": "r1-msg-001", "type": "counters"}]
    assert "r1_msg_002 -- counters --> r1_msg_001" in mermaid(run)
    assert "r9" not in mermaid(run)
