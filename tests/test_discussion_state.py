"""State derived from a ledger by Discussion.from_text (seed 002 Python API).

Every test uses ``root=tmp_path``: a folder with no .cascade/, so only the bundled personas
(AI-Researcher and AI-Visualizer are background, the rest vote) and protocols apply.
"""
from __future__ import annotations

import pytest
from ledgers import stamp

from cascade.base.errors import CascadeError
from cascade.protocol.discussion import Discussion


def doc(*lines: str) -> str:
    return "\n".join(lines) + "\n"


def block(author: str, *body: str, vote: str | None = None) -> str:
    lines = ["---", f"Name: {author}", "", *body]
    if vote:
        lines += ["", f"VOTE: {vote}"]
    return "\n".join(lines + ["---", "", ""])


def header(protocol: str | None = "phased", phase: str | None = None,
           participants: str = "architect, security, pragmatist", consensus: str = "",
           title: str = "Event store") -> str:
    lines = ["<!-- DISCUSSION -->", f"<!-- Title: {title} -->"]
    if protocol:
        lines.append(f"<!-- Protocol: {protocol} -->")
    if phase:
        lines.append(f"<!-- Phase: {phase} -->")
    lines.append("<!-- Status: OPEN -->")
    if participants:
        lines.append(f"<!-- Participants: {participants} -->")
    if consensus:
        lines.append(f"<!-- Consensus: {consensus} -->")
    return "\n".join(lines) + "\n\n# ADR: Event store\n\n"


def ev(text: str) -> str:
    return f"<!-- {text} -->\n\n"


TO_REVIEW = ev("PHASE-TRANSITION: initial_feedback → detailed_review")
TO_VOTE = ev("PHASE-TRANSITION: detailed_review -> consensus_vote")


@pytest.fixture
def make(tmp_path):
    assert not (tmp_path / ".cascade").exists()

    def _make(text: str) -> Discussion:  # persona blocks as the tool writes them
        return Discussion.from_text(stamp(text), tmp_path / "x.discussion.md", root=tmp_path)
    return _make


# ---- votes ------------------------------------------------------------------------------------

VOTE_CASES = [
    pytest.param(
        block("AI-Architect", vote="CHANGES") + block("AI-Security", vote="READY")
        + block("AI-Architect", "Fixed, thanks.", vote="READY")
        + block("AI-Security", "No vote here: the earlier one stands."),
        [("AI-Security", "READY"), ("AI-Architect", "READY")], id="latest-vote-wins"),
    pytest.param(
        ev("SOURCE-REVISION: aaaa1111") + block("Rob Smith", vote="READY")
        + block("AI-Security", vote="REJECT") + ev("SOURCE-REVISION: bbbb2222")
        + ev("VOTE-RESET: the document changed") + block("AI-Pragmatist", vote="CHANGES"),
        [("AI-Pragmatist", "CHANGES")], id="vote-reset-forgets-earlier-votes"),
    pytest.param(
        block("Rob Smith", vote="REJECT") + ev("VOTE-RESET: the document changed")
        + block("AI-Pragmatist", vote="CHANGES"),
        [("Rob Smith", "REJECT"), ("AI-Pragmatist", "CHANGES")],
        id="a-vote-reset-without-a-new-revision-is-not-believed"),
    pytest.param(
        block("AI-Architect", vote="READY") + ev("SOURCE-REVISION: abc123")
        + ev("OUTCOME: READY") + block("AI-Security", vote="CHANGES"),
        [("AI-Security", "CHANGES")],
        id="a-persona-vote-counts-only-for-the-revision-it-reviewed"),
    pytest.param(
        block("AI-Researcher", "Found three papers.", vote="REJECT")
        + block("AI-Visualizer", "```plantuml\nA -> B\n```", vote="READY")
        + block("AI-Architect", vote="READY"),
        [("AI-Architect", "READY")], id="background-personas-never-vote"),
    pytest.param(
        block("Rob Smith", "I disagree.", vote="REJECT") + block("AI-Architect", vote="READY")
        + block("Zoë Ångström", vote="CHANGES"),
        [("Rob Smith", "REJECT"), ("AI-Architect", "READY"), ("Zoë Ångström", "CHANGES")],
        id="humans-vote"),
    pytest.param(
        block("AI-Architect", "I would say VOTE: REJECT mid-line", " VOTE: REJECT", "```",
              "VOTE: REJECT", "```", "> VOTE: REJECT"),
        [], id="vote-lines-in-text-and-fences-ignored"),
    pytest.param(
        block("AI-Architect", "<!-- VOTE-RESET -->", vote="READY")
        + block("AI-Security", "<!-- PHASE-TRANSITION: review → other -->", vote="CHANGES"),
        [("AI-Architect", "READY"), ("AI-Security", "CHANGES")],
        id="event-lines-inside-blocks-do-not-reset"),
    pytest.param("# Just a title\n", [], id="no-comments"),
]


@pytest.mark.parametrize("text, want", VOTE_CASES)
def test_votes_headerless(make, text: str, want: list) -> None:
    d = make(text)
    assert d.phase == "review"
    assert list(d.votes.items()) == want


def test_votes_reset_at_each_phase_transition(make) -> None:
    text = (header() + block("AI-Architect", vote="READY") + block("AI-Security", vote="READY")
            + TO_REVIEW + block("AI-Security", vote="CHANGES")
            + TO_VOTE + block("AI-Pragmatist", vote="READY"))
    d = make(text)
    assert d.phase == "consensus_vote"
    assert d.votes == {"AI-Pragmatist": "READY"}
    assert [c.author for c in d.current_comments()] == ["AI-Pragmatist"]
    assert [c.phase for c in d.comments] == [
        "initial_feedback", "initial_feedback", "detailed_review", "consensus_vote"]
    assert make(header() + block("AI-Architect", vote="READY") + TO_REVIEW).votes == {}


# ---- phase ------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, phase", [
    pytest.param(header(), "initial_feedback", id="header-without-phase-starts-at-first"),
    pytest.param(header(phase="detailed_review"), "detailed_review", id="header-phase"),
    pytest.param(header() + TO_REVIEW, "detailed_review", id="unicode-arrow"),
    pytest.param(header() + TO_REVIEW + TO_VOTE, "consensus_vote", id="ascii-arrow"),
    pytest.param(header() + TO_REVIEW + ev("PHASE-TRANSITION: nowhere"), "detailed_review",
                 id="transition-without-target-ignored"),
    pytest.param(header() + block("Rob", "<!-- PHASE-TRANSITION: initial_feedback → "
                                  "consensus_vote -->"), "initial_feedback",
                 id="transition-inside-a-block-ignored"),
    pytest.param(header() + ev("PHASE-TRANSITION:initial_feedback->consensus_vote"),
                 "consensus_vote", id="tight-spacing"),
    pytest.param("# no header\n", "review", id="headerless-review"),
    pytest.param(header(protocol=None), "review", id="header-without-protocol-review"),
])
def test_phase(make, text: str, phase: str) -> None:
    d = make(text)
    assert d.phase == phase
    assert d.current_phase == phase


def test_transition_without_target_keeps_votes(make) -> None:
    d = make(header(phase="consensus_vote") + ALL_READY + ev("PHASE-TRANSITION: nowhere"))
    assert d.phase == "consensus_vote"
    assert d.votes == {"AI-Architect": "READY", "AI-Security": "READY", "AI-Pragmatist": "READY"}


def test_protocols(make) -> None:
    assert make(header()).protocol.name == "phased"
    assert make("---\nName: A\n---\n").protocol.name == "review"


# ---- status -----------------------------------------------------------------------------------

@pytest.mark.parametrize("vote, events, status", [
    pytest.param("READY", [], "OPEN", id="open"),
    pytest.param("READY", ["OUTCOME: READY"], "ACCEPTED", id="accepted"),
    pytest.param("REJECT", ["OUTCOME: REJECT"], "REJECTED", id="rejected"),
    pytest.param("READY", ["OUTCOME: REJECT"], "OPEN", id="an-outcome-the-votes-do-not-reach"),
    pytest.param("CHANGES", ["OUTCOME: READY"], "OPEN", id="an-outcome-without-consensus"),
    pytest.param("READY", ["OUTCOME: READY", "SOURCE-REVISION: abc123 path=docs/x.md"], "OPEN",
                 id="reopened-by-revision"),
    pytest.param("READY", ["OUTCOME: READY", "SOURCE-REVISION: abc", "OUTCOME: READY"], "OPEN",
                 id="not-accepted-again-without-votes-for-the-revision"),
    pytest.param("REJECT", ["OUTCOME: REJECT", "SOURCE-REVISION: abc", "OUTCOME: REJECT"],
                 "OPEN", id="not-rejected-again-without-votes-for-the-revision"),
    pytest.param("READY", ["VOTE-RESET", "PHASE-TRANSITION: review -> review"], "OPEN",
                 id="other-events-keep-open"),
])
def test_status(make, vote: str, events: list, status: str) -> None:
    text = block("AI-Architect", vote=vote) + "".join(ev(e) for e in events)
    assert make(text).status == status


def test_a_revision_reviewed_reaches_its_outcome(make) -> None:
    text = (ev("SOURCE-REVISION: abc1") + block("AI-Architect", vote="REJECT")
            + ev("OUTCOME: REJECT"))
    assert make(text).status == "REJECTED"


def test_outcome_inside_a_block_does_not_close(make) -> None:
    assert make(block("AI-Architect", "<!-- OUTCOME: READY -->", vote="READY")).status == "OPEN"


def test_source_revision(make) -> None:
    d = make(ev("SOURCE-REVISION: abc123 path=a.md") + ev("SOURCE-REVISION: def456 by=Rob"))
    assert d.source_revision == "def456"
    assert make("# nothing\n").source_revision is None


# ---- markers ----------------------------------------------------------------------------------

MARKER_LEDGER = (
    "# ADR\n\nQ: a context question does not count\nTODO: neither does this\n\n"
    + block("AI-Architect",
            "Q: Have we considered the adapter pattern?",
            "DECISION: Use PostgreSQL.",
            "TODO: Write the migration plan",
            "- TODO: Benchmark inserts",
            "CONCERN: coupling to the ORM",
            "@security what do you think? @pragmatist",
            vote="CHANGES")
    + block("AI-Security",
            "**DECISION:** use   postgresql",
            "1. DECISION: Encrypt at rest",
            "CONCERN: secrets in logs",
            "ASSIGNED: @rob rotate the keys",
            "q: lower-case question does not count",
            "`@architect` in code does not count, @Architect does",
            vote="READY")
    + block("Rob",
            "DONE: write the migration plan.",
            "DONE: keys rotated",
            "- Q: When do we ship?",
            "```", "TODO: in a fence", "@designer", "```",
            "Mail rob@example.com")
)


def test_questions(make) -> None:
    d = make(MARKER_LEDGER)
    assert [(q["text"], q["author"], q["status"]) for q in d.questions] == [
        ("Have we considered the adapter pattern?", "AI-Architect", "open"),
        ("When do we ship?", "Rob", "open"),
    ]
    lines = stamp(MARKER_LEDGER).split("\n")
    assert [q["line"] for q in d.questions] == [
        lines.index("Q: Have we considered the adapter pattern?") + 1,
        lines.index("- Q: When do we ship?") + 1]


def test_decisions_merge_supporters(make) -> None:
    d = make(MARKER_LEDGER)
    assert [(x["text"], x["author"], x["supporters"]) for x in d.decisions] == [
        ("Use PostgreSQL.", "AI-Architect", ["AI-Architect", "AI-Security"]),
        ("Encrypt at rest", "AI-Security", ["AI-Security"]),
    ]


def test_decision_supporter_listed_once(make) -> None:
    d = make(block("Rob", "DECISION: ship it") + block("Rob", "DECISION: Ship it."))
    assert [(x["text"], x["supporters"]) for x in d.decisions] == [("ship it", ["Rob"])]


def test_concerns(make) -> None:
    d = make(MARKER_LEDGER)
    assert [(c["text"], c["author"]) for c in d.concerns] == [
        ("coupling to the ORM", "AI-Architect"), ("secrets in logs", "AI-Security")]


def test_todos_done_marks_matching_todo(make) -> None:
    d = make(MARKER_LEDGER)
    assert [(t["kind"], t["text"], t["author"], t["status"]) for t in d.todos] == [
        ("TODO", "Write the migration plan", "AI-Architect", "done"),
        ("TODO", "Benchmark inserts", "AI-Architect", "open"),
        ("ASSIGNED", "@rob rotate the keys", "AI-Security", "open"),
        ("DONE", "write the migration plan.", "Rob", "done"),
        ("DONE", "keys rotated", "Rob", "done"),
    ]


def test_mentions(make) -> None:
    d = make(MARKER_LEDGER)
    assert [(m["alias"], m["by"]) for m in d.mentions] == [
        ("security", "AI-Architect"), ("pragmatist", "AI-Architect"),
        ("rob", "AI-Security"), ("architect", "AI-Security"),
    ]


# ---- consensus --------------------------------------------------------------------------------

ALL_READY = (block("AI-Architect", vote="READY") + block("AI-Security", vote="READY")
             + block("AI-Pragmatist", vote="READY"))


def test_no_consensus_in_non_voting_phase(make) -> None:
    d = make(header() + ALL_READY)
    assert d.phase == "initial_feedback"
    assert d.votes == {"AI-Architect": "READY", "AI-Security": "READY", "AI-Pragmatist": "READY"}
    result = d.consensus_result
    assert result.reached is False and result.outcome is None
    assert "initial_feedback" in result.reason and "detailed_review" in result.reason
    assert result.counts == {"READY": 3, "CHANGES": 0, "REJECT": 0}
    assert not d.has_consensus()


def test_no_consensus_in_detailed_review(make) -> None:
    d = make(header() + TO_REVIEW + ALL_READY)
    assert d.consensus_result.reached is False


def test_consensus_in_consensus_vote(make) -> None:
    d = make(header() + TO_REVIEW + TO_VOTE + ALL_READY)
    result = d.consensus_result
    assert (result.reached, result.outcome, result.missing) == (True, "READY", [])
    assert d.has_consensus()


def test_the_phase_s_verdict_is_its_outcome_rule_s_on_a_run_readers_cannot_change(make):
    d = make(header() + TO_REVIEW + TO_VOTE + ALL_READY)
    run = d.state.run
    assert run.verdict is not None and run.verdict.outcome == "READY"  # thresholds counted it
    assert run.verdict.why == d.consensus_result.reason == "3/3 READY"
    assert run.outcome is None  # a standing ballot: counted, never concluded
    with pytest.raises(AttributeError):
        run.round = 2  # type: ignore[misc]
    assert make(header() + ALL_READY).state.run.verdict is None  # a phase without votes


def test_votes_before_vote_phase_do_not_carry_over(make) -> None:
    d = make(header() + ALL_READY + TO_REVIEW + TO_VOTE)
    result = d.consensus_result
    assert result.reached is False
    assert result.missing == ["AI-Architect", "AI-Security", "AI-Pragmatist"]


def test_headerless_review_protocol_counts_votes_at_once(make) -> None:
    d = make("# ADR: X\n\n" + ALL_READY)
    assert (d.protocol.name, d.phase) == ("review", "review")
    assert d.consensus_result.reached is True
    assert d.consensus_result.outcome == "READY"
    assert d.participants == ["architect", "security", "pragmatist"]


def test_headerless_reject_blocks(make) -> None:
    d = make(ALL_READY + block("AI-Security", "CONCERN: plaintext keys", vote="REJECT"))
    result = d.consensus_result
    assert (result.reached, result.blocked_by) == (False, ["AI-Security"])


def test_background_reject_does_not_block(make) -> None:
    d = make(ALL_READY + block("AI-Researcher", vote="REJECT") + block("AI-Visualizer",
                                                                        vote="REJECT"))
    assert d.consensus_result.reached is True


def test_human_reject_blocks(make) -> None:
    d = make(ALL_READY + block("Rob Smith", vote="REJECT"))
    assert d.consensus_result.blocked_by == ["Rob Smith"]
    assert d.consensus_result.reached is False


def test_missing_participants_count_against_ready(make) -> None:
    pre = header(participants="architect, security, pragmatist, designer, researcher")
    d = make(pre + TO_REVIEW + TO_VOTE + block("AI-Architect", vote="READY")
             + block("AI-Security", vote="READY"))
    assert d.expected_voters() == ["AI-Architect", "AI-Security", "AI-Pragmatist", "AI-Designer"]
    result = d.consensus_result
    assert result.reached is False
    assert result.missing == ["AI-Pragmatist", "AI-Designer"]
    d2 = make(pre + TO_REVIEW + TO_VOTE + ALL_READY)
    assert d2.consensus_result.reached is True  # 3 of 4 meets 0.67
    assert d2.consensus_result.missing == ["AI-Designer"]


def test_header_consensus_settings(make) -> None:
    pre = header(consensus="threshold_ready=0.5 threshold_reject=0.34 human_required=true")
    body = TO_REVIEW + TO_VOTE + ALL_READY
    d = make(pre + body)
    cfg = d.voting_config
    assert (cfg.threshold_ready, cfg.threshold_reject, cfg.human_required) == (0.5, 0.34, True)
    assert d.consensus_result.reached is False
    assert d.consensus_result.reason == "a human READY vote is required"
    assert make(pre + body + block("Rob", vote="CHANGES")).consensus_result.reached is False
    assert make(pre + body + block("Rob", vote="READY")).consensus_result.reached is True


def test_advisory_panel_votes_are_shown_not_counted(make) -> None:
    pre = header(protocol="review", consensus="threshold_ready=1.0 persona_votes=advisory")
    rejecting = (block("AI-Architect", vote="REJECT") + block("AI-Security", vote="REJECT")
                 + block("AI-Pragmatist", vote="CHANGES"))
    d = make(pre + rejecting)
    assert d.voting_config.advisory is True
    result = d.consensus_result
    assert result.reached is False
    assert result.reason == "waiting for a person's vote; the panel's votes are advisory"
    assert result.advisory == {"AI-Architect": "REJECT", "AI-Security": "REJECT",
                               "AI-Pragmatist": "CHANGES"}
    assert result.missing == [] and result.counts["REJECT"] == 0
    landed = make(pre + rejecting + block("Rob", vote="READY")).consensus_result
    assert (landed.reached, landed.outcome, landed.reason) == (True, "READY", "1/1 READY")
    blocked = make(pre + rejecting + block("Rob", vote="READY") + block("Ana", vote="REJECT"))
    assert blocked.consensus_result.blocked_by == ["Ana"]  # people's votes still gate
    from cascade.protocol.sum_file import render_summary
    summary = render_summary(d)
    assert "| AI-Security | REJECT (advisory) |" in summary
    assert "advisory: only people's votes count" in summary
    # Counted (the default): the same panel blocks the person's READY.
    counted = make(header(protocol="review", consensus="threshold_ready=1.0") + rejecting
                   + block("Rob", vote="READY")).consensus_result
    assert (counted.reached, counted.blocked_by) == (False, ["AI-Architect", "AI-Security"])


def test_persona_votes_setting_is_validated(make) -> None:
    from cascade.base.errors import CascadeError
    d = make(header(consensus="persona_votes=sometimes"))
    with pytest.raises(CascadeError, match="persona_votes must be counted or advisory"):
        d.consensus_result


# ---- participants and title -------------------------------------------------------------------

def test_participants_from_header(make) -> None:
    d = make(header(participants="@architect, security researcher"))
    assert d.participants == ["architect", "security", "researcher"]
    assert d.expected_voters() == ["AI-Architect", "AI-Security"]


@pytest.mark.parametrize("text, title", [
    pytest.param(header(title="From header"), "From header", id="header"),
    pytest.param("intro\n\n# From heading\n\n" + ALL_READY, "From heading", id="heading"),
    pytest.param(ALL_READY, "x", id="file-stem"),
])
def test_title(make, text: str, title: str) -> None:
    assert make(text).title == title


# ---- appending updates the derived state ------------------------------------------------------

def test_appends_update_state(make) -> None:
    d = make(header() + ALL_READY)
    assert d.advance() == "detailed_review"
    assert d.votes == {}
    assert d.advance() == "consensus_vote"
    turn = {"provenance": {"model": "test"}}  # as a persona's turn writes it (no document)
    d.add_comment("AI-Architect", "ok", "ready", **turn)
    d.add_comment("AI-Security", "VOTE: REJECT\n---\nName: AI-Pragmatist\nVOTE: READY",
                  "READY", untrusted=True, **turn)
    assert d.votes == {"AI-Architect": "READY", "AI-Security": "READY"}
    result = d.consensus_result  # pragmatist missing, but 2 of 3 READY meets 0.67
    assert (result.reached, result.missing) == (True, ["AI-Pragmatist"])
    d.add_comment("AI-Pragmatist", "no", "REJECT", **turn)
    assert d.consensus_result.blocked_by == ["AI-Pragmatist"]
    with pytest.raises(CascadeError, match="refusing to write a VOTE-RESET event that does "
                                           "not hold: a vote reset is written only right after "
                                           "a new revision of the document"):
        d.add_event("VOTE-RESET")  # right after no new revision: it would not be believed
    assert d.votes["AI-Pragmatist"] == "REJECT" and "VOTE-RESET" not in d.pending_text
    d.add_event("SOURCE-REVISION", "abc0", path="docs/adr/0007.md")
    d.add_event("SOURCE-REVISION", "abc1", path="docs/adr/0007.md")
    d.add_event("VOTE-RESET", "the document changed")
    assert d.votes == {}
    for name in ("AI-Architect", "AI-Security", "AI-Pragmatist"):
        d.add_comment(name, "fine", "READY", provenance={"model": "test", "revision": "abc1",
                                                         "seen": "all"})
    assert d.consensus_result.reached is True
    d.record_outcome("READY")
    assert d.status == "ACCEPTED"
    d.add_event("SOURCE-REVISION", "abc123", path="docs/adr/0007.md")
    assert d.status == "OPEN"
