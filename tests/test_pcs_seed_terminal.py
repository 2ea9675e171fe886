"""Propose / Challenge / Synthesize as the preset asks it of the person at the terminal: the
confirmation of the proposed panel advises ``--auto-invite`` for next time; each phase's
table stays within the preset's summary discipline (1,000 characters); and the larger goal
the discussion serves is its own input (``--objective``), kept in the ledger's header and
given to every turn -- standalone, every model call over HTTP to the fake endpoint."""
from __future__ import annotations

import json
import os
import shlex
import sys

import pytest
from conftest import REPO
from test_pcs import LEDGER, RECORD, TOPIC, Panel, discuss
from test_terminal import Tmux

from cascade import Discussion


@pytest.fixture
def panel(repo, fake_llm, monkeypatch):
    monkeypatch.setenv("CASCADE_MODEL", "openai/fake")
    monkeypatch.setenv("CASCADE_API_BASE", fake_llm.url)
    monkeypatch.setenv("CASCADE_BACKOFF", "0.05")
    return Panel(fake_llm)


@pytest.mark.skipif(not __import__("shutil").which("tmux"), reason="needs tmux")
def test_the_terminal_advises_auto_invite_for_next_time(repo, fake_llm, tmp_path):
    """The preset: "Otherwise -> Propose participant list, wait for user confirmation before
    proceeding, advice user to use "auto-invite" for next time if want to skip the
    confirmation step."""
    Panel(fake_llm)
    tmux = Tmux(tmp_path)
    env = {"CASCADE_MODEL": "openai/fake", "CASCADE_API_BASE": fake_llm.url,
           "PYTHONPATH": str(REPO), "HOME": os.environ.get("HOME", "")}
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    try:
        tmux.start(f"cd {shlex.quote(str(repo))} && env {exports} {shlex.quote(sys.executable)}"
                   f" -m cascade discuss {shlex.quote(TOPIC)}")
        screen = tmux.wait_for("Enter to start")
        lines = screen.splitlines()
        ask = next(i for i, line in enumerate(lines) if "Enter to start" in line)
        advice = [i for i, line in enumerate(lines) if "--auto-invite" in line]
        assert advice and advice[0] <= ask, screen  # said before the answer is typed
        assert "next time" in lines[advice[0]].lower() and "without this question" in lines[advice[0]]
        tmux.run("send-keys", "-t", "t", "Enter")
        assert "EXIT=0" in tmux.wait_for("EXIT=")
    finally:
        tmux.close()


def test_taken_without_a_terminal_the_output_names_auto_invite(repo, cli, panel):
    """Off a terminal the proposed panel is taken, and the output says how to choose it next
    time without a question."""
    code, out, err = cli("discuss", TOPIC, "--auto")
    assert code == 0, out + err
    assert "pass --auto-invite" in out


LONG = ("Use Postgres for the event store, because durability, replication, point-in-time "
        "recovery and a mature operational toolchain matter more here than the cost of running "
        "one more service, and we already run it for billing; the alternatives ")


def test_each_phase_table_is_at_most_1000_characters(repo, cli, panel):
    """The preset's Critical Rules: "Summary Discipline: Each phase summary max 1000 chars."
    The table after PROPOSE and after CHALLENGE (the preset's "Report summary of positions to
    user with table") is a phase summary: four long positions, long challenges, and each
    table still within 1,000 characters, every participant in it."""
    names = ("AI-Architect", "AI-Security", "AI-Pragmatist", "AI-Perfectionist")
    for name in names:
        panel.replies[(name, "Propose", 1)] = json.dumps({"comment": f"{name}: " + LONG * 2})
        panel.replies[(name, "Challenge", 1)] = json.dumps(
            {"comment": f"{name} answers: " + LONG * 2, "shift": "minor"})
    code, out, err = cli("discuss", TOPIC, "--participants",
                         "architect,security,pragmatist,perfectionist")
    assert code == 0, out + err
    d = Discussion.load(repo / LEDGER)
    tables = [c for c in d.comments if c.origin == "tool"]
    assert [c.provenance["step"] for c in tables] == ["propose", "challenge"]
    for c in tables:
        text = c.body.split("\n\n", 1)[1]  # below its title line
        assert len(text) <= 1000, (len(text), text)
        assert all(f"| {n} |" in text for n in names), text
        assert text in out  # on screen as in the ledger
    assert "**Agreed**" in tables[0].body and "**Divergent**" in tables[0].body


def test_a_short_table_is_written_whole(repo, cli, panel):
    assert discuss(cli)[0] == 0
    d = Discussion.load(repo / LEDGER)
    table = next(c for c in d.comments if c.origin == "tool").body
    assert "Use Postgres: durability, replication and mature operational tooling" in table


OBJECTIVE = "Keep the on-call load of a two-person team flat through next year"


def test_the_objective_is_its_own_input(repo, cli, panel):
    """The preset's PROPOSE task: "task: "State your position on: [topic]" objective: "[The
    larger goal this discussion serves]" ... autonomy_guidance: Your goal is OBJECTIVE
    COMPLETION, not just answering the question." -- the objective given apart from the
    topic, recorded in the ledger's header, given to every turn and kept in the record."""
    code, out, err = discuss(cli, "--objective", OBJECTIVE)
    assert code == 0, out + err
    d = Discussion.load(repo / LEDGER)
    assert d.objective == OBJECTIVE and d.title == TOPIC.rstrip()
    header = (repo / LEDGER).read_text().split("\n\n", 1)[0]
    assert f"<!-- Objective: {OBJECTIVE} -->" in header
    assert len(panel.seen) == 7
    for name, step, round_, text in panel.seen:
        assert "The larger goal this discussion serves:" in text.split(OBJECTIVE)[0], text
        assert OBJECTIVE in text, (name, step)
    record = (repo / RECORD).read_text()
    assert f"**Objective**: {OBJECTIVE}" in record
    code, out, _ = cli("status", LEDGER, "--json")
    assert json.loads(out)["discussions"][0]["objective"] == OBJECTIVE
    code, out, _ = cli("status", LEDGER)
    assert out.splitlines()[:2] == [f"Discussion: {TOPIC}", f"Objective: {OBJECTIVE}"]


def test_without_an_objective_the_prompts_name_none(repo, cli, panel):
    assert discuss(cli)[0] == 0
    assert Discussion.load(repo / LEDGER).objective == ""
    assert not any("The larger goal this discussion serves:" in text
                   for _, _, _, text in panel.seen)


@pytest.mark.parametrize("objective", ["", "   "])
def test_an_empty_objective_is_refused(repo, cli, panel, fake_llm, objective):
    code, out, err = discuss(cli, "--objective", objective)
    assert code == 2 and "--objective" in err and len(err.strip().splitlines()) == 1
    assert fake_llm.calls() == 0 and not (repo / LEDGER).exists()
