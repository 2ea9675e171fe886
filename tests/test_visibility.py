"""What each role is shown, pinned by message id, for every protocol: in round 1, in later
rounds, and after a run stopped in the middle of a wave (the budget ran out, or one persona's
endpoint answered HTTP 500) and resumed with ``cascade run PATH --auto``.

Every request the fake endpoint received is read back (tests/visibility.py ``visible``: the
ids of the turns its prompt shows, the marks of the texts it carried, its summary's rounds)
and compared with what the visibility definitions give for the turns written before its wave
(``expected``). The tables below are each protocol's steps as its YAML declares them."""
from __future__ import annotations

import json

import pytest
from fakellm import http_error
from visibility import Marking, Protocol, Runs, Step, View, check, step

TOPIC = "Which database for the event store?"
LEDGER = "discussions/which-database-for-the-event-store.discussion.md"


@pytest.fixture
def env(repo, fake_llm, monkeypatch):
    monkeypatch.setenv("CASCADE_MODEL", "openai/fake")
    monkeypatch.setenv("CASCADE_API_BASE", fake_llm.url)
    monkeypatch.setenv("CASCADE_BACKOFF", "0.05")
    monkeypatch.setenv("CASCADE_RETRIES", "0")
    return Runs(fake_llm, repo, LEDGER)


def stop(monkeypatch, script, how) -> set:
    """Stop the first run mid-wave: ``how`` is a call budget (CASCADE_MAX_CALLS) or the
    (persona, step, round) whose request fails with HTTP 500. Returns what is asked again."""
    if isinstance(how, int):
        monkeypatch.setenv("CASCADE_MAX_CALLS", str(how))
        return set()
    script.replies[how] = http_error(500)
    return {how}


def resume(runs, cli, monkeypatch, script, how, ledger: str = LEDGER):
    monkeypatch.delenv("CASCADE_MAX_CALLS", raising=False)
    if not isinstance(how, int):
        del script.replies[how]
    code, out, err = runs(cli, "run", ledger, "--auto")
    assert code in (0, 1), out + err
    return code, out, err


# --- pcs ----------------------------------------------------------------------------------

PCS = Protocol({
    "Propose": step("propose", "blind"),
    "Challenge": step("challenge", "all", target="propose"),  # answers the most opposing
    "Synthesize": step("synthesize", "all"),
    "Confirm": step("confirm", "key_points"),  # the round's earlier turns, the synthesis last
    "Recommendation": step("recommend", "all"),
}, synthesis=("synthesize",))


@pytest.fixture
def pcs(env, fake_llm):
    from test_pcs import Panel

    panel = Panel(fake_llm)
    Marking(fake_llm, panel)
    return panel


def pcs_discuss(runs, cli):
    return runs(cli, "discuss", TOPIC, "--participants", "architect,security,pragmatist")


def test_pcs_three_rounds_and_the_recommendation(env, cli, pcs):
    for r in (1, 2, 3):
        pcs.verdicts[("AI-Security", r)] = "REJECT"
    assert pcs_discuss(env, cli)[0] == 1  # impasse
    done = check(env, PCS)
    for title in ("Propose", "Challenge", "Synthesize", "Confirm"):
        assert done.rounds(title) == {1, 2, 3}, title
    assert done.rounds("Recommendation") == {3}


@pytest.mark.parametrize("how, wave", [
    (11, "Propose"),  # a round is 3N + 1 = 10 calls: round 2's first proposal only
    (15, "Challenge"),  # two of round 2's three challenges
    (18, "Confirm"),  # one of round 2's three confirmations
    (("AI-Pragmatist", "Propose", 2), "Propose"),
    (("AI-Architect", "Confirm", 2), "Confirm"),
])
def test_pcs_resumed_mid_wave(env, cli, pcs, monkeypatch, how, wave):
    pcs.verdicts[("AI-Security", 1)] = "REJECT"
    retried = stop(monkeypatch, pcs, how)
    assert pcs_discuss(env, cli)[0] == 1
    assert resume(env, cli, monkeypatch, pcs, how)[0] == 0
    done = check(env, PCS, retried)
    assert (wave, 2) in done.resumed
    assert done.rounds("Confirm") == {1, 2}


# --- swarm --------------------------------------------------------------------------------

SWARM = Protocol({
    "Panel": step("panel", "blind", setup=True),
    "Position declarations": step("declare", "blind"),
    "Moderator framing": step("frame", "all"),
    "Arguments": step("argue", "all"),
    "Contrarian stress test": step("stress", "all"),
    "Responses": step("respond", "all"),
    "Cross-domain analogy": step("analogy", "all"),
    "Quality gate": step("quality", "all"),
    "Synthesis": step("synthesis", "history", after=True),
    "Closing vote": step("vote", "synthesis", after=True),
}, synthesis=("synthesis",))
SWARM_LIGHT = Protocol({t: s for t, s in SWARM.steps.items() if t != "Cross-domain analogy"},
                       synthesis=("synthesis",))
SWARM_ROUND = ("Position declarations", "Moderator framing", "Arguments",
               "Contrarian stress test", "Responses", "Cross-domain analogy", "Quality gate")


@pytest.fixture
def swarm(env, fake_llm):
    from swarm_script import Swarm

    script = Swarm(fake_llm)
    Marking(fake_llm, script)
    return script


def document(runs) -> str:
    """A document for the discussion: one of a document ends with the closing vote (a
    topic's has none), whose view is pinned too."""
    (runs.repo / "docs").mkdir(exist_ok=True)
    (runs.repo / "docs/proposal.md").write_text("# Proposal\n\nThe proposal.\n")
    return "docs/proposal.md"


def swarm_discuss(runs, cli):
    # standard: every fixed role (moderator, historian, contrarian, cross-domain), three
    # experts, three rounds ("continue" until the last), on a document: the closing vote
    return runs(cli, "discuss", TOPIC, "--protocol", "swarm", "--mode", "standard", "--auto",
                "--source", document(runs))


def test_swarm_every_role_over_three_rounds(env, cli, swarm):
    assert swarm_discuss(env, cli)[0] == 0
    done = check(env, SWARM)
    for title in SWARM_ROUND:
        assert done.rounds(title) == {1, 2, 3}, title
    assert done.rounds("Synthesis") == done.rounds("Closing vote") == {3}


def test_swarm_lightweight_the_moderator_writes_the_synthesis(env, cli, swarm):
    """lightweight: the moderator stands in for the historian -- its synthesis (history:
    every turn but its own in this step) is shown its own framings and quality gates."""
    assert env(cli, "discuss", TOPIC, "--protocol", "swarm", "--mode", "lightweight",
               "--auto")[0] == 0
    done = check(env, SWARM_LIGHT)
    assert ("AI-Moderator", "Synthesis", 2, 0) in done.cases
    assert done.rounds("Moderator framing") == done.rounds("Quality gate") == {1, 2}


@pytest.mark.parametrize("how, wave, round_", [
    (15, "Position declarations", 2),  # the panel, round 1 (13 calls), one declaration
    (19, "Arguments", 2),  # ... three declarations, the framing, one argument
    (23, "Responses", 2),  # ... the stress test, one response
    (42, "Closing vote", 3),  # the panel, three rounds, the synthesis, one vote
    (("AI-Sre", "Position declarations", 2), "Position declarations", 2),
    (("AI-Api-Designer", "Responses", 1), "Responses", 1),
])
def test_swarm_resumed_mid_wave(env, cli, swarm, monkeypatch, how, wave, round_):
    retried = stop(monkeypatch, swarm, how)
    assert swarm_discuss(env, cli)[0] == 1
    assert resume(env, cli, monkeypatch, swarm, how)[0] == 0
    done = check(env, SWARM, retried)
    assert (wave, round_) in done.resumed
    assert done.rounds("Closing vote") == {3}


# --- roundtable ---------------------------------------------------------------------------

RT_TOPIC = "How do we version the public API?"
RT_LEDGER = "discussions/how-do-we-version-the-public-api.discussion.md"


def roundtable(sequential: bool = False) -> Protocol:
    return Protocol({
        "Question": step("question", "synthesis"),
        # the answers see the question and the last synthesis: no summary
        "Answers": step("answer", "question", summary=False, sequential=sequential),
        "Synthesis": step("synthesis", "all"),
        "Closing vote": step("vote", "synthesis", after=True),
    }, synthesis=("synthesis",), question="question")


ROUNDTABLE = {"standard": roundtable(), "debate": roundtable(),
              "six-hats": roundtable(sequential=True)}  # participation: sequential


@pytest.fixture
def table(env, fake_llm):
    from roundtable_script import Table

    env.ledger = RT_LEDGER
    script = Table(fake_llm)
    Marking(fake_llm, script)
    return script


def rt_discuss(runs, cli, strategy):
    return runs(cli, "discuss", RT_TOPIC, "--protocol", "roundtable", "--strategy", strategy,
                "--participants", "architect,security,pragmatist", "--auto",
                "--source", document(runs))


@pytest.mark.parametrize("strategy, rounds", [("standard", 3), ("debate", 3), ("six-hats", 7)])
def test_roundtable_every_round(env, cli, table, strategy, rounds):
    if strategy == "standard":  # one phase: three rounds when the facilitator goes on
        table.actions = {1: "continue", 2: "continue"}
    assert rt_discuss(env, cli, strategy)[0] == 0
    done = check(env, ROUNDTABLE[strategy])
    for title in ("Question", "Answers", "Synthesis"):
        assert done.rounds(title) == set(range(1, rounds + 1)), title
    assert done.rounds("Closing vote") == {rounds}


@pytest.mark.parametrize("strategy, how", [
    ("standard", 8),  # round 1 (5 calls), round 2's question and two of its answers
    ("standard", ("AI-Security", "Answers", 2)),
    ("six-hats", 7),  # round 2's question and its first answer
    ("six-hats", ("AI-Security", "Answers", 2)),  # the second of round 2's answers
    ("debate", ("AI-Pragmatist", "Answers", 1)),
])
def test_roundtable_resumed_mid_wave(env, cli, table, monkeypatch, strategy, how):
    retried = stop(monkeypatch, table, how)
    cut = how[2] if isinstance(how, tuple) else 2
    if strategy == "standard":  # one phase: a round 2 to cut when the facilitator goes on
        table.actions = {1: "continue"}
    assert rt_discuss(env, cli, strategy)[0] == 1
    # a round cut short is not written (rounds.append: round); its replies are cached
    assert {int(m.split("-")[0][1:]) for m in env.written[0]} <= set(range(1, cut))
    assert resume(env, cli, monkeypatch, table, how, RT_LEDGER)[0] == 0
    done = check(env, ROUNDTABLE[strategy], retried)
    assert ("Answers", cut) in done.resumed


# --- council ------------------------------------------------------------------------------

CO_TOPIC = "Should we rewrite the billing service?"
CO_LEDGER = "discussions/should-we-rewrite-the-billing-service.discussion.md"
VERDICT = step("verdict", "history", after=True)
COUNCIL = {
    # parallel: openings blind, rebuttals see the last round (their own too), finals blind
    "parallel": Protocol({"Advice": Step("advise", {1: View("blind"), 2: View("prior"),
                                                    3: View("blind")}),
                          "Verdict": VERDICT}),
    # sequential: also the earlier advisors of the round (blind's view: the summary too);
    # later rounds see every earlier round's turns
    "sequential": Protocol({"Advice": Step("advise", {
        1: View("blind", sequential=True), 2: View("thread", sequential=True),
        3: View("thread", sequential=True)}), "Verdict": VERDICT}),
    # debate: openings blind, cross-rebuttals see the others' last round, finals blind
    "debate": Protocol({"Advice": Step("advise", {1: View("blind"), 2: View("previous"),
                                                  3: View("blind")}),
                        "Verdict": VERDICT}),
    "dp": Protocol({
        "Ideation": step("ideate", "group", summary=False),
        "Assessment": step("assess", "group", summary=False),
        "Merge": step("merge", "all", summary=False, sees=("assess",), after=True),
    }, groups={"AI-D-Freethinker": "d", "AI-D-Arbiter": "d", "AI-P-Freethinker": "p",
               "AI-P-Arbiter": "p"}),
}
COUNCIL_ARGS = {"parallel": ("--flow", "parallel", "--rounds", "3"),
                "sequential": ("--flow", "sequential", "--rounds", "3"),
                "debate": ("--flow", "debate"),  # three rounds
                "dp": ("--mode", "dp", "--rounds", "3")}


@pytest.fixture
def council(env, fake_llm):
    from council_script import Council

    env.ledger = CO_LEDGER
    script = Council(fake_llm)
    Marking(fake_llm, script)
    return script


def co_discuss(runs, cli, flow):
    return runs(cli, "discuss", CO_TOPIC, "--protocol", "council", *COUNCIL_ARGS[flow], "--auto")


@pytest.mark.parametrize("flow, steps, rounds", [
    ("parallel", ("Advice",), 3),
    ("sequential", ("Advice",), 3),
    ("debate", ("Advice",), 3),
    ("dp", ("Ideation", "Assessment"), 3),
])
def test_council_every_round(env, cli, council, flow, steps, rounds):
    assert co_discuss(env, cli, flow)[0] == 0
    done = check(env, COUNCIL[flow])
    for title in steps:
        assert done.rounds(title) == set(range(1, rounds + 1)), title
    assert done.rounds("Merge" if flow == "dp" else "Verdict") == {rounds}


@pytest.mark.parametrize("flow, how, wave", [
    ("parallel", 4, ("Advice", 2)),  # round 1 (3 calls), one of round 2's
    ("parallel", ("AI-Visionary", "Advice", 2), ("Advice", 2)),
    ("sequential", 1, ("Advice", 1)),  # the first advisor of round 1
    ("sequential", 5, ("Advice", 2)),  # round 1, the first two of round 2
    ("sequential", ("AI-Visionary", "Advice", 2), ("Advice", 2)),
    ("debate", 4, ("Advice", 2)),  # one cross-rebuttal
    ("debate", 8, ("Advice", 3)),  # two final positions
    ("debate", ("AI-Skeptic", "Advice", 2), ("Advice", 2)),
    ("dp", 5, ("Ideation", 2)),  # round 1 (4 calls), one of round 2's freethinkers
    ("dp", 7, ("Assessment", 2)),  # ... both freethinkers, one arbiter
    ("dp", ("AI-P-Arbiter", "Assessment", 2), ("Assessment", 2)),
    ("dp", ("AI-D-Freethinker", "Ideation", 3), ("Ideation", 3)),
])
def test_council_resumed_mid_wave(env, cli, council, monkeypatch, flow, how, wave):
    retried = stop(monkeypatch, council, how)
    assert co_discuss(env, cli, flow)[0] != 0
    assert resume(env, cli, monkeypatch, council, how, CO_LEDGER)[0] == 0
    done = check(env, COUNCIL[flow], retried)
    assert wave in done.resumed


# --- a repository's variant: what the bundled protocols never combine ---------------------

VARIANT_STEP = """  - id: review
    title: Review
    role: [d-arbiter, d-freethinker, meta]
    visibility: group
    words: 100
after:
"""
VARIANT_FLOW = """  debate:
    title: Debate
    rounds: [2, 3]
"""
RECAP = """  recap:
    title: Recap
    rounds: [2, 2]
    phases:
      - {id: open, title: Opening, at: first, visibility: blind, words: [200, 400]}
      - {id: recap, title: Recap, at: last, visibility: history, words: [150, 250]}
"""
VARIANT = {
    # a flow whose last phase shows history: every turn but the advisor's own advice
    "recap": Protocol({"Advice": Step("advise", {1: View("blind"), 2: View("history")}),
                       "Verdict": VERDICT}),
    # a group step spoken by two roles of one group and by a role of none
    "review": Protocol({**COUNCIL["dp"].steps,
                        "Review": step("review", "group", summary=False)},
                       groups=COUNCIL["dp"].groups),
}


@pytest.fixture
def variant(council, repo):
    from conftest import REPO

    text = (REPO / "protocols/council.yml").read_text()
    assert text.count("after:\n") == 1 and text.count(VARIANT_FLOW) == 1
    folder = repo / ".cascade/protocols"
    folder.mkdir(parents=True)
    (folder / "council.yml").write_text(text.replace("after:\n", VARIANT_STEP).replace(
        VARIANT_FLOW, RECAP + VARIANT_FLOW))
    for name in ("AI-D-Arbiter", "AI-D-Freethinker", "AI-Meta-Arbiter"):
        for r in (1, 2):
            council.replies[(name, "Review", r)] = json.dumps(
                {"comment": f"{name} reviews round {r}."})
    return council


@pytest.mark.parametrize("args, table, how, wave", [
    (("--flow", "recap"), "recap", None, None),
    (("--flow", "recap"), "recap", 4, ("Advice", 2)),  # round 1, one recap
    (("--mode", "dp", "--rounds", "2"), "review", None, None),
    (("--mode", "dp", "--rounds", "2"), "review", 5, ("Review", 1)),  # one review of three
    (("--mode", "dp", "--rounds", "2"), "review", 12, ("Review", 2)),
])
def test_a_variant_s_phase_and_group_views(env, cli, variant, monkeypatch, args, table, how,
                                           wave):
    """A phase may set any visibility (history here); a group step may be spoken by two
    roles of one group -- each sees the other's turn once written -- and by a role of no
    group, which sees nothing, and whose turns no group sees."""
    if how is not None:
        monkeypatch.setenv("CASCADE_MAX_CALLS", str(how))
    code, out, err = env(cli, "discuss", CO_TOPIC, "--protocol", "council", *args, "--auto")
    if how is not None:
        assert code != 0
        monkeypatch.delenv("CASCADE_MAX_CALLS")
        code, out, err = env(cli, "run", CO_LEDGER, "--auto")
    assert code == 0, out + err
    done = check(env, VARIANT[table])
    assert done.rounds("Advice" if table == "recap" else "Review") == {1, 2}
    if wave is not None:
        assert wave in done.resumed


# --- the tables are the protocol files' data ----------------------------------------------

MEMBERS = ("participant", "expert", "advisor")  # the roles a strategy's participation and
# a flow's phases apply to, in the rounds' steps but a confirmation


@pytest.mark.parametrize("name, table, mode, variant", [
    ("pcs", PCS, None, None),
    ("swarm", SWARM, "standard", None),
    ("swarm", SWARM_LIGHT, "lightweight", None),
    *[("roundtable", ROUNDTABLE[s], None, ("strategies", s)) for s in ROUNDTABLE],
    *[("council", COUNCIL[f], "personality", ("flows", f))
      for f in ("parallel", "sequential", "debate")],
    ("council", COUNCIL["dp"], "dp", None),
])
def test_the_tables_say_what_the_protocol_files_say(name, table, mode, variant):
    """Each table above is its protocol file's steps as the mode and strategy (or flow) run
    them: the step ids, titles, visibilities (a phase's, where it sets one), sees and
    participation -- and every step the mode runs is in it."""
    import yaml
    from conftest import REPO

    data = yaml.safe_load((REPO / "protocols" / f"{name}.yml").read_text())
    declared = {s.get("title"): (key, s) for key in ("setup", "steps", "after")
                for s in data.get(key) or [] if s["role"] != "person"}
    members = {r["id"] for r in data["roles"] if "from" in r}
    roles = {r["id"] for r in data["roles"]}
    if mode is not None:
        spec = data["modes"][mode]
        roles = (set() if spec.get("experts") == 0 else members) | set(spec["roles"]) | set(
            spec.get("stand_in") or ())
    runs = {s["id"] for _, s in declared.values()
            if set(s["role"] if isinstance(s["role"], list) else [s["role"]]) & roles}
    assert {s.id for s in table.steps.values()} == runs
    strategy = data[variant[0]][variant[1]] if variant else {}
    phases = strategy.get("phases", [])
    for title, s in table.steps.items():
        key, raw = declared[title]
        assert raw["id"] == s.id and s.setup == (key == "setup") and s.after == (key == "after")
        assert s.target == (data["steps"][0]["id"] if raw.get("target") else None)
        member = raw["role"] in MEMBERS and key == "steps" and not raw.get("confirm")
        for round_, v in s.views.items():
            place = {1: "first", 2: "middle", 3: "last"}.get(round_)
            phase = next((p for p in phases if p.get("at") in (None, place)), {})
            own = raw.get("visibility", "all")
            assert v.kind == (phase.get("visibility") or own if member else own), (title, round_)
            assert v.sequential == (member and strategy.get("participation") == "sequential")
            assert v.sees == tuple(raw.get("sees", ()))
            # the summary of the earlier rounds: not for a roundtable's answers (the question
            # and the last synthesis only), a group (only what crossed), a step that sees
            # named steps only
            assert v.summary == (own not in ("question", "group") and not v.sees), title
