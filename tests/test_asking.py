"""Every decision point says what it is about before it asks, and an answer it cannot take
is said, never silently asked again: swarm's proposed panel (who, in which role, on which
tier, why), the next action's quality scores and what each choice does (``follow``: the
recommendation it follows), a roundtable's question, sides and recommendation at an
escalation; in the hook's blocked message, in ``cascade comment`` and on a real terminal
(tmux). Real repositories, the real hook, the fake endpoint over HTTP."""
from __future__ import annotations

import os
import shlex
import shutil
import sys

import pytest
import test_hook
from conftest import REPO, git
from inproc import cascade, commit
from roundtable_script import Table
from swarm_script import Swarm
from test_hook import DOC, LEDGER, RULES, install_plain
from test_terminal import Tmux

from cascade import Discussion

SWARM_RULES = RULES.replace("participants: [architect, security, pragmatist]",
                            "protocol: swarm\n    mode: lightweight")
loop_repo = test_hook.loop_repo  # the hook's tests' repository, as a fixture here too
DEBATE_RULES = RULES.replace("participants: [architect, security, pragmatist]",
                             "participants: [architect, security, pragmatist]\n"
                             "    protocol: roundtable\n    strategy: debate")


def gate_repo(repo, rules: str) -> None:
    (repo / ".ai-rules.yml").write_text(rules)
    git(repo, "commit", "-qam", "ADRs are discussed")
    install_plain(repo)
    git(repo, "add", DOC)


def answer(repo, text: str) -> None:
    with open(repo / LEDGER, "a") as f:
        f.write(f"\n---\nName: Alice\n\n{text}\n---\n")


def lines_after(out: str, head: str) -> list[str]:
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if head in line)
    return lines[start:]


def test_the_panel_is_shown_as_a_table_before_the_hook_asks_to_start(loop_repo, fake_llm):
    repo = loop_repo
    gate_repo(repo, SWARM_RULES)
    Swarm(fake_llm)
    blocked = commit(repo)
    assert blocked.returncode == 1
    told = lines_after(blocked.out, "waiting for a person: Start the discussion with this panel?")
    header = next(line for line in told if line.split() == ["Persona", "Role", "Model", "Why"])
    assert told.index(header) == 1  # right below the question
    rows = {line.split()[0]: line for line in told[2:6]}
    assert "Expert" in rows["AI-Db-Engineer"] and "fast tier" in rows["AI-Db-Engineer"]
    assert "Postgres, replication; vs @api-designer: Consistency vs. flexibility" \
        in rows["AI-Db-Engineer"]
    assert "(@api-designer)" in rows["AI-Api-Designer"]
    assert "Moderator" in rows["AI-Moderator"] and "strong tier" in rows["AI-Moderator"]
    assert "  NEXT: start -- begin round 1 with this panel (recommended)" in told
    assert ("  NEXT: modify <what to change> -- the moderator proposes the panel again with "
            "your change") in told


def test_the_next_action_shows_the_scores_and_what_follow_does(loop_repo, fake_llm):
    repo = loop_repo
    gate_repo(repo, SWARM_RULES)
    swarm = Swarm(fake_llm)
    swarm.recommend[1] = "deep-dive"
    swarm.overall[1] = 2
    commit(repo)
    answer(repo, "NEXT: start")
    blocked = commit(repo)
    assert blocked.returncode == 1
    told = lines_after(blocked.out, "waiting for a person: What next after this round?")
    text = "\n".join(told)
    assert "Quality gate (AI-Moderator, r1-msg-" in text and "Round 1 was weak." in text
    assert ("scores (1-5): genuine disagreement 4, evidence quality 3, steel manning 4, novel "
            "insights 3, position evolution 3, overall 2 -- flagged: overall below 3") in text
    assert "    recommendation: deep-dive" in told
    assert "    open questions: How many writes a second? (round 1)" in told
    assert "  NEXT: follow -- do what the quality gate recommends: deep-dive (recommended)" \
        in told
    assert "  NEXT: deep-dive <point> -- the next round digs into the point you name" in told
    assert "    insights: the peak load decides the buffer (novelty: high; source: r1-msg-009)" \
        in told
    assert any(line.startswith("    summary: Round 1: the panel agreed") for line in told)
    block = told[1:told.index("")]
    assert "  Position shifts: 1 -- AI-Db-Engineer minor (triggered by r1-msg-007)" in told
    assert len(block) == 15 and all(len(line) <= 160 for line in block)  # a line an item


def test_an_escalation_shows_the_question_the_sides_and_the_recommendation(loop_repo,
                                                                           fake_llm):
    repo = loop_repo
    gate_repo(repo, DEBATE_RULES)
    table = Table(fake_llm)
    table.actions[1] = "escalate"
    blocked = commit(repo)
    assert blocked.returncode == 1
    told = lines_after(blocked.out, "waiting for a person: The roundtable needs a person.")
    assert told[1].startswith("  Question (AI-Facilitator, r1-msg-001): Question 1: what "
                              "matters most now?")
    assert "    focus: focus 1" in told
    assert "  Synthesis (AI-Facilitator, r1-msg-005): Synthesis of round 1: they converge." \
        in told
    assert "    recommendation: Adopt the converged proposal." in told
    assert "  Sides: pro: AI-Architect, AI-Pragmatist; con: AI-Security" in told
    assert ("  NEXT: accept -- conclude on the facilitator's recommendation: Adopt the "
            "converged proposal. (recommended)") in told
    assert "  NEXT: continue [N] -- go on; no escalation for N rounds (default 1)" in told
    status = cascade(repo, "status", LEDGER)  # says it too
    assert "    Sides: pro: AI-Architect, AI-Pragmatist; con: AI-Security" in status.stdout
    assert ("    NEXT: accept -- conclude on the facilitator's recommendation: Adopt the "
            "converged proposal. (recommended)") in status.stdout


def test_an_answer_not_understood_is_said_with_the_choices(loop_repo, fake_llm):
    """As the UI once saved it (typed before a pre-filled NEXT:): the hook, `cascade comment`
    and `cascade run` say it names no choice, with the choices, instead of asking again in
    silence."""
    repo = loop_repo
    gate_repo(repo, SWARM_RULES)
    Swarm(fake_llm)
    commit(repo)
    answer(repo, "NEXT: synthesizeNEXT: ")
    blocked = commit(repo)
    assert blocked.returncode == 1
    assert ("  not understood: 'NEXT: synthesizeNEXT:' (Alice, line " in blocked.out
            and ") -- answer with one of the choices: start, modify, mode" in blocked.out)
    said = cascade(repo, "comment", LEDGER, "startNEXT:")
    assert said.returncode == 0, said.stderr
    lines = [line for line in said.stdout.splitlines() if "not understood" in line]
    assert len(lines) == 2 and lines[-1].startswith("cascade: not understood: 'startNEXT:'")
    assert lines[-1].endswith("-- answer with one of the choices: start, modify, mode")
    said = cascade(repo, "run", LEDGER)  # no terminal: --auto
    assert "note: not understood: 'startNEXT:'" in said.stdout
    assert "took the recommended choice start (--auto)" in said.stdout
    d = Discussion.load(repo / LEDGER, root=repo)
    assert d.state.run.setup.done
    assert [c.body.strip() for c in d.comments if c.origin is None] == [
        "NEXT: synthesizeNEXT:", "startNEXT:"]  # kept as written


@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
def test_on_a_terminal_each_question_says_what_it_is_about(repo, fake_llm, tmp_path):
    """`cascade discuss --protocol swarm` on a real terminal: the panel's table before the
    panel is confirmed; the scores and the choices before the next action; a typed answer
    that is no choice gets one line naming them and the question again."""
    swarm = Swarm(fake_llm)
    swarm.recommend[1] = "synthesize"
    tmux = Tmux(tmp_path)
    env = {"CASCADE_MODEL": "openai/fake", "CASCADE_API_BASE": fake_llm.url,
           "PYTHONPATH": str(REPO), "HOME": os.environ.get("HOME", "")}
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    try:
        tmux.start(f"cd {shlex.quote(str(repo))} && env {exports} {shlex.quote(sys.executable)}"
                   " -m cascade discuss 'Which database for the event store?' --protocol swarm"
                   " --mode lightweight")
        screen = tmux.wait_for("Confirm the panel [")
        lines = screen.splitlines()
        ask = next(i for i, line in enumerate(lines) if "Confirm the panel [" in line)
        table = next(i for i, line in enumerate(lines) if line.split()[:2] == ["Persona", "Role"])
        assert table < ask
        assert any("AI-Db-Engineer (@db-engineer)" in line and "fast tier" in line
                   for line in lines[table:ask])
        assert any("NEXT: start -- begin round 1 with this panel" in line
                   for line in lines[table:ask])
        tmux.run("send-keys", "-t", "t", "Enter")
        screen = tmux.wait_for("Next action [")
        assert "overall 4" in screen
        assert "NEXT: follow -- do what the quality gate recommends: synthesize" in screen
        tmux.run("send-keys", "-t", "t", "synthesizeNEXT:", "Enter")
        screen = tmux.wait_for("not understood: 'synthesizeNEXT:' -- answer with one of the "
                               "choices: follow, deep-dive, different-angle, constraint, "
                               "synthesize, pause")
        tmux.run("send-keys", "-t", "t", "NEXT: synthesize", "Enter")
        screen = tmux.wait_for("EXIT=")
        assert "EXIT=0" in screen, screen
    finally:
        tmux.close()
    d = Discussion.load(repo / "discussions/which-database-for-the-event-store.discussion.md",
                        root=repo)
    assert [c.body for c in d.comments if c.origin is None] == ["NEXT: start",
                                                               "NEXT: synthesize"]


@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
def test_on_a_terminal_the_proposed_participants_are_a_table(repo, fake_llm, tmp_path):
    """`cascade discuss` (pcs) proposes its participants -- its own pair -- who, in which
    role, on which tier, why (their role and expertise; where they come from above), before
    it asks."""
    from test_pcs import Panel

    Panel(fake_llm)
    tmux = Tmux(tmp_path)
    env = {"CASCADE_MODEL": "openai/fake", "CASCADE_API_BASE": fake_llm.url,
           "PYTHONPATH": str(REPO), "HOME": os.environ.get("HOME", "")}
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    try:
        tmux.start(f"cd {shlex.quote(str(repo))} && env {exports} {shlex.quote(sys.executable)}"
                   " -m cascade discuss 'Threat model for session tokens'")
        screen = tmux.wait_for("Enter to start")
        lines = screen.splitlines()
        head = next(i for i, line in enumerate(lines) if line.startswith("Proposed panel"))
        assert "the protocol's own panel, which --participants replaces" in lines[head]
        assert lines[head + 1].split() == ["Persona", "Role", "Model", "Why"]
        rows = lines[head + 3:head + 6]
        assert rows[0].split()[:4] == ["AI-Architect", "(@architect)", "Participant", "fast"]
        assert rows[1].split()[:2] == ["AI-Perfectionist", "(@perfectionist)"]
        assert rows[2].split()[:5] == ["AI-Synthesizer", "(@synthesizer)", "Synthesizer",
                                       "strong", "tier"]
        tmux.run("send-keys", "-t", "t", "Enter")
        assert "EXIT=0" in tmux.wait_for("EXIT=")
    finally:
        tmux.close()


def test_a_roundtable_says_its_question_and_who_argues_which_side(repo, cli, fake_llm,
                                                                  monkeypatch):
    """Off a terminal too: the sides of a debate when the run starts, and the facilitator's
    question above the answers it was asked."""
    monkeypatch.setenv("CASCADE_MODEL", "openai/fake")
    monkeypatch.setenv("CASCADE_API_BASE", fake_llm.url)
    Table(fake_llm)
    code, out, err = cli("discuss", "How do we version the public API?", "--protocol",
                         "roundtable", "--strategy", "debate", "--participants",
                         "architect,security,pragmatist")
    assert code == 0, out + err
    lines = out.splitlines()
    assert "Sides: pro: AI-Architect, AI-Pragmatist; con: AI-Security" in lines
    asked = lines.index("Question (AI-Facilitator, r1-msg-001): Question 1: what matters most now?")
    assert lines[asked + 1:asked + 3] == ["  focus: focus 1", "Answers, round 1:"]
    assert "Question (AI-Facilitator, r2-msg-" in out  # every round's question


def test_an_impasse_says_what_the_protocol_recommends(loop_repo, fake_llm):
    """pcs ends its last round without consensus: a person decides (`cascade decide`); the
    hook and `cascade status` say the synthesizer's recommendation with it."""
    from test_pcs import Panel

    repo = loop_repo
    gate_repo(repo, RULES.replace("participants: [architect, security, pragmatist]",
                                  "participants: [architect, security]\n    protocol: pcs"))
    panel = Panel(fake_llm)
    for r in (1, 2, 3):
        panel.verdicts[("AI-Architect", r)] = "REJECT"
    blocked = commit(repo)
    assert blocked.returncode == 1
    told = lines_after(blocked.out, ": IMPASSE: impasse after 3 rounds")
    assert told[1].startswith("  Recommendation (AI-Synthesizer, r3-msg-")
    assert told[1].endswith("): Recommend SQLite with a migration trigger.")
    status = cascade(repo, "status", LEDGER)
    lines = lines_after(status.stdout, "Waiting for a person: impasse after 3 rounds")
    assert lines[1].startswith("    Recommendation (AI-Synthesizer, r3-msg-")


def test_plan_and_explain_say_what_each_choice_does(loop_repo, fake_llm):
    """Before any run (`cascade plan`, `explain` of a document not reviewed yet) each choice
    is listed with what it does; once the ledger waits, `explain` shows the question as the
    hook does: the panel, then the choices."""
    repo = loop_repo
    plan = cascade(repo, "plan", "--protocol", "swarm", "--mode", "lightweight")
    assert plan.returncode == 0, plan.stderr
    lines = plan.stdout.splitlines()
    assert "2. Confirm the panel: a person answers 'Start the discussion with this panel?'" \
        in plan.stdout
    assert "       NEXT: start -- begin round 1 with this panel (recommended)" in lines
    assert "       NEXT: follow -- do what the quality gate recommends (recommended)" in lines
    assert ("       NEXT: pause -- stop here; a resume context is written and cascade run "
            "picks it up") in lines
    gate_repo(repo, SWARM_RULES)
    before = cascade(repo, "explain", DOC)
    assert before.returncode == 0, before.stderr
    assert "A person decides at Confirm the panel: Start the discussion with this panel?" \
        in before.stdout
    assert ("  NEXT: modify <what to change> -- the moderator proposes the panel again with "
            "your change") in before.stdout.splitlines()
    Swarm(fake_llm)
    assert commit(repo).returncode == 1
    waiting = cascade(repo, "explain", DOC).stdout.splitlines()
    at = waiting.index("Waiting for a person at Confirm the panel: Start the discussion with "
                       "this panel?")
    told = waiting[at + 1:]
    assert told[0].split() == ["Persona", "Role", "Model", "Why"]
    assert "  NEXT: start -- begin round 1 with this panel (recommended)" in told
    assert "A person decides at Next action: What next after this round?" in waiting


@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
@pytest.mark.parametrize("key", ["C-c", "C-d"])
def test_the_first_ctrl_c_at_a_question_stops_the_command(repo, fake_llm, tmp_path, key):
    """Ctrl-C at a decision point asked during a run (swarm's panel confirmed, the next action
    asked) stops `cascade discuss` at once: exit 130, one line, and the answer typed after it
    is never taken -- nothing is written for the question. Ctrl-D (the input ended) too, not
    a traceback."""
    Swarm(fake_llm)
    tmux = Tmux(tmp_path)
    env = {"CASCADE_MODEL": "openai/fake", "CASCADE_API_BASE": fake_llm.url,
           "PYTHONPATH": str(REPO), "HOME": os.environ.get("HOME", "")}
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    ledger = repo / "discussions/which-database-for-the-event-store.discussion.md"
    try:
        tmux.start(f"cd {shlex.quote(str(repo))} && env {exports} {shlex.quote(sys.executable)}"
                   " -m cascade discuss 'Which database for the event store?' --protocol swarm"
                   " --mode lightweight")
        tmux.wait_for("Confirm the panel [")
        tmux.run("send-keys", "-t", "t", "Enter")
        tmux.wait_for("Next action [")
        before = ledger.read_bytes()
        tmux.run("send-keys", "-t", "t", key)
        screen = tmux.wait_for("EXIT=", timeout=10)
        tmux.run("send-keys", "-t", "t", "NEXT: synthesize", "Enter")  # too late: not taken
        assert "EXIT=130" in screen, screen
        lines = screen.splitlines()
        assert lines[lines.index("EXIT=130") - 1] == "cascade: interrupted", screen
    finally:
        tmux.close()
    assert ledger.read_bytes() == before
