"""`cascade ui`, driven for real: Textual's Pilot for the browser, the discussion view, a
comment, a decision, a run whose replies stream in over HTTP from the fake endpoint; tmux for
the command in a real 80x24 terminal."""
from __future__ import annotations

import json
import os
import shlex
import sys
import time

import pytest
from conftest import REPO, git
from textual.visual import RichVisual
from fakellm import streamed
from test_terminal import Tmux

from cascade import Discussion
from cascade.ui.app import BrowserScreen, CascadeApp
from cascade.ui.discussion_screen import DiscussionScreen

TOPIC = "Add user authentication"


@pytest.fixture
def anyio_backend():
    return "asyncio"

LEDGER = "discussions/add-user-authentication.discussion.md"


def reply(name: str, vote: str = "READY") -> str:
    return json.dumps({"comment": f"{name} thinks the session tokens need a 1h expiry and "
                                  "rotation on every login; the rest is fine as proposed.\n\n"
                                  f"Q: Who owns the key rotation for {name}?",
                       "vote": vote})


@pytest.fixture
def ui_repo(repo, fake_llm, monkeypatch, cli):
    git(repo, "config", "user.name", "Rob")
    git(repo, "config", "user.email", "rob@example.com")
    monkeypatch.setenv("CASCADE_MODEL", "openai/fake")
    monkeypatch.setenv("CASCADE_API_BASE", fake_llm.url)
    monkeypatch.setenv("CASCADE_BACKOFF", "0.05")
    assert cli("new", TOPIC, "--template", "feature")[0] == 0
    assert cli("new", "Rotate the signing keys", "--template", "feature")[0] == 0
    return repo


def text_of(app, selector: str) -> str:
    return plain(app.screen.query_one(selector))


def plain(widget) -> str:
    """A widget's text: a Text as it is, anything else (markdown, a table) as drawn."""
    shown = widget.render()
    return "\n".join(shown_lines(widget)) if isinstance(shown, RichVisual) else str(shown)


def shown_lines(widget) -> list[str]:
    """The lines a widget shows, as the terminal draws them at its width."""
    from textual.geometry import Region
    size = widget.size
    return [s.text.rstrip() for s in widget.render_lines(
        Region(0, 0, size.width, widget.virtual_size.height))]


async def settle(pilot) -> None:
    """Until a comment, decision or advance is done: they run off the screen's thread (they
    may wait for another writer of the ledger), then the screen shows what they said."""
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


@pytest.mark.anyio
async def test_the_browser_lists_filters_and_opens_a_discussion(ui_repo, cli):
    d = Discussion.load(ui_repo / "discussions/rotate-the-signing-keys.discussion.md")
    d.add_comment("Rob", "Done elsewhere.", None)
    d.advance("consensus_vote")
    for name in ("AI-Architect", "AI-Security", "AI-Pragmatist"):  # as their turns write it
        d.add_comment(name, "Not needed.", "REJECT", provenance={"model": "test"})
    d.record_outcome("REJECT")
    d.save()
    app = CascadeApp(ui_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, BrowserScreen)
        table = app.screen.query_one("DataTable")
        titles = [table.get_row_at(i)[0] for i in range(table.row_count)]
        assert titles == ["Add user authentication", "Rotate the signing keys"]  # at once
        await settle(pilot)  # each ledger read, off the screen's thread
        assert "2 of 2 discussions" in text_of(app, "#filter")
        assert "reading" not in text_of(app, "#filter")
        assert str(table.get_row_at(1)[3]) == "REJECT" and table.get_row_at(1)[1] == "phased"
        await pilot.press("f")  # open ones
        assert [table.get_row_at(i)[0] for i in range(table.row_count)] == [TOPIC]
        await pilot.press("f")  # concluded ones
        assert [table.get_row_at(i)[0] for i in range(table.row_count)] == [
            "Rotate the signing keys"]
        assert "REJECT" in str(table.get_row_at(0)[3])
        await pilot.press("f", "enter")  # all again; open the first
        await settle(pilot)
        await pilot.pause()
        assert isinstance(app.screen, DiscussionScreen)
        assert app.screen.path.name == "add-user-authentication.discussion.md"
        await pilot.press("escape")
        assert isinstance(app.screen, BrowserScreen)
        await pilot.press("q")
    assert app.return_code == 0


@pytest.mark.anyio
async def test_the_view_shows_comments_votes_questions_decisions_and_the_consensus_line(
        ui_repo, cli):
    assert cli("comment", LEDGER, "Q: Should sessions survive a restart?\n"
                                  "DECISION: We use JWT with a 1h expiry.", "--vote",
               "READY")[0] == 0
    app = CascadeApp(ui_repo / LEDGER)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, DiscussionScreen)
        summary = text_of(app, "#summary")
        assert TOPIC in summary and "Consensus: not reached" in summary
        entries = [plain(w).strip() for w in screen.query(".entry")]
        assert len(entries) == 1 and entries[0].startswith("Rob") and "READY" in entries[0]
        assert "Should sessions survive a restart?" in entries[0]
        side = text_of(app, "#side-text")
        assert "Should sessions survive a restart? (Rob)" in side
        assert "We use JWT with a 1h expiry. (Rob)" in side
        assert "Missing: AI-Architect" in side


@pytest.mark.anyio
async def test_a_comment_and_vote_are_written_as_the_git_user(ui_repo):
    app = CascadeApp(ui_repo / LEDGER)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("c")
        await pilot.pause()
        await pilot.press(*"Ship it with the expiry.")
        app.screen.query_one("#vote").value = "READY"
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, DiscussionScreen)
        assert "Ship it with the expiry." in plain(app.screen.query(".entry").last())
        await pilot.press("c")
        await pilot.pause()
        await pilot.press("escape")  # cancelled: nothing written
        await pilot.pause()
    d = Discussion.load(ui_repo / LEDGER)
    mine = [c for c in d.comments if c.author == "Rob"]
    assert len(mine) == 1 and mine[0].vote == "READY"
    assert mine[0].body.strip() == "Ship it with the expiry."


@pytest.mark.anyio
async def test_a_decision_is_recorded_and_a_bad_one_is_said_not_crashed(ui_repo):
    app = CascadeApp(ui_repo / LEDGER)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("d")
        await pilot.pause()
        await pilot.press("enter")  # no reason: refused, said in a notification
        await settle(pilot)
        assert any("needs a reason" in str(n.message) for n in app._notifications)
        await pilot.press("d")
        await pilot.pause()
        app.screen.query_one("#vote").value = "CHANGES"
        app.screen.query_one("#reason").focus()
        await pilot.press(*"Needs the threat model first.", "enter")
        await settle(pilot)
    d = Discussion.load(ui_repo / LEDGER)
    assert d.state.decision is not None and d.state.decision.vote == "CHANGES"


@pytest.mark.anyio
async def test_run_streams_the_replies_live_and_the_ledger_gets_whole_blocks(ui_repo, fake_llm):
    for name in ("AI-Architect", "AI-Security", "AI-Pragmatist"):
        fake_llm.script(f"YOUR ROLE: {name}", streamed(reply(name), 0.08))
    app = CascadeApp(ui_repo / LEDGER)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("r")
        partial = None
        seen = []
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            await pilot.pause(0.05)
            live = text_of(app, "#live")
            seen.append(live)
            for line in live.splitlines():  # a reply's comment, part of it, on screen
                name, _, shown = line.partition(": ")
                if name.startswith("AI-") and shown not in ("", "...") and \
                        "READY (" not in shown and not shown.endswith(f"for {name}?") and \
                        shown.lstrip(".").strip() in " ".join(
                            json.loads(reply(name))["comment"].split()):
                    partial = line
            if not app.screen.running:
                break
        assert partial is not None, f"no reply was seen streaming: {seen[-3:]}"
        assert not app.screen.running
        # The last refresh's removal of the entries it replaces is done by Textual on its next
        # turn: until then both are in the DOM (under load, the test can look in between).
        await settle(pilot)
        entries = [plain(w) for w in app.screen.query(".entry")]
        assert sum("thinks the session tokens" in e for e in entries) == 3
    assert all(r.body.get("stream") is True for r in fake_llm.chat_requests)
    d = Discussion.load(ui_repo / LEDGER)
    bodies = [c.body for c in d.comments if c.origin == "ai"]
    assert len(bodies) == 3 and all(b.startswith("AI-") and "Q: Who owns" in b for b in bodies)


@pytest.mark.anyio
async def test_advance_moves_the_phase(ui_repo):
    app = CascadeApp(ui_repo / LEDGER)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("a")
        await settle(pilot)
        assert "phase detailed_review" in text_of(app, "#summary")
    assert Discussion.load(ui_repo / LEDGER).phase == "detailed_review"


@pytest.mark.anyio
async def test_help_is_on_screen_and_no_color_is_respected(ui_repo, monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    app = CascadeApp(ui_repo)
    assert app.no_color
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("question_mark")
        await pilot.pause()
        assert "c comment (and vote)" in text_of(app, "#help-text")
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, BrowserScreen)


def test_without_a_terminal_or_with_a_bad_path_it_says_so_in_one_line(ui_repo, cli):
    code, out, err = cli("ui", "nowhere")
    assert code == 2 and err.strip().count("\n") == 0 and "no such file or folder" in err
    code, out, err = cli("ui")
    assert code == 2 and "needs a terminal" in err


def test_cascade_ui_in_a_real_terminal(ui_repo, fake_llm, tmp_path):
    tmux = Tmux(tmp_path)
    env = {"CASCADE_MODEL": "openai/fake", "CASCADE_API_BASE": fake_llm.url,
           "PYTHONPATH": str(REPO), "HOME": os.environ.get("HOME", ""), "TERM": "xterm-256color"}
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    try:
        tmux.start(f"cd {shlex.quote(str(ui_repo))} && env {exports} "
                   f"{shlex.quote(sys.executable)} -m cascade ui")
        tmux.run("resize-window", "-t", "t", "-x", "80", "-y", "24")
        for text in ("2 of 2 discussions", "Rotate the signing keys", "Add user authentication",
                     "q quit"):  # the rows, and the keys on screen
            tmux.wait_for(text, timeout=20)
        tmux.run("send-keys", "-t", "t", "Enter")
        screen = tmux.wait_for("Consensus: not reached")
        assert "Open questions" in screen
        tmux.run("send-keys", "-t", "t", "q")
        screen = tmux.wait_for("EXIT=")
        assert "EXIT=0" in screen
    finally:
        tmux.close()


@pytest.mark.anyio
async def test_a_decision_point_says_what_it_is_about_and_is_answered_from_a_list(ui_repo, cli,
                                                                                  fake_llm):
    """A step protocol's run stops where a person decides (swarm's panel); the view shows the
    question and what it is about (the proposed panel, a row a persona: role, tier, why), `n`
    offers the choices as a list (the recommended one highlighted, each with what it does),
    the answer is saved as NEXT: <choice> [words], and the next `r` goes on from it."""
    from swarm_script import Swarm

    Swarm(fake_llm)
    assert cli("new", "Event store for billing", "--protocol", "swarm",
               "--participants", "")[0] == 0
    path = ui_repo / "discussions/event-store-for-billing.discussion.md"
    app = CascadeApp(path)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert not app.screen.query_one("#about").display  # no question yet
        await pilot.press("r")
        while app.screen.running:
            await pilot.pause(0.05)
        summary = text_of(app, "#summary")
        assert "Waiting for a person: Start the discussion with this panel?" in summary
        about = text_of(app, "#about-text")
        assert app.screen.query_one("#about").display
        row = next(line for line in about.splitlines() if "AI-Db-Engineer" in line)
        assert "Expert" in row and "fast tier" in row and "Postgres, replication" in row
        assert "(@db-engineer)" in about
        assert "n: answer from the list of choices (start, modify, mode)" in about
        await pilot.press("n")
        await pilot.pause()
        choices = app.screen.query_one("#choices")
        offered = [str(choices.get_option_at_index(i).prompt) for i in range(choices.option_count)]
        assert offered == [
            "start -- begin round 1 with this panel (recommended)",
            "modify <what to change> -- the moderator proposes the panel again with your change",
            ("mode <lightweight|standard|deep> -- switch modes; the panel is proposed again "
             "for its size")]
        assert choices.highlighted == 0 and choices.has_focus
        assert "(@api-designer)" in text_of(app, "#told-text")  # what it is about, here too
        await pilot.press("enter", "ctrl+s")  # the recommended choice, no words of one's own
        await settle(pilot)
        assert not app.screen.query_one("#about").display  # answered
        calls = fake_llm.calls()
        await pilot.press("r")
        await pilot.pause(0.1)
        while app.screen.running:
            await pilot.pause(0.05)
        assert fake_llm.calls() > calls  # round 1 ran
    d = Discussion.load(path)
    assert [c.body.strip() for c in d.comments if c.author == "Rob"] == ["NEXT: start"]
    assert d.state.run.setup.done and any(c.provenance.get("step") == "declare"
                                          for c in d.comments)


@pytest.mark.anyio
async def test_an_answer_not_understood_is_said_with_the_choices(ui_repo, cli, fake_llm):
    """A comment whose NEXT: line is no choice (as the pre-filled box once saved it, typed
    before its NEXT:) is said at once, naming the choices, and stays said above the
    discussion; a choice's own words go with it."""
    from swarm_script import Swarm

    Swarm(fake_llm)
    assert cli("new", "Event store for billing", "--protocol", "swarm",
               "--participants", "")[0] == 0
    path = ui_repo / "discussions/event-store-for-billing.discussion.md"
    app = CascadeApp(path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("r")
        while app.screen.running:
            await pilot.pause(0.05)
        await pilot.press("c")
        await pilot.pause()
        assert app.screen.query_one("#text").text == ""  # nothing to type around
        await pilot.press(*"startNEXT:", "ctrl+s")
        await settle(pilot)
        said = [str(n.message) for n in app._notifications]
        assert any("not understood: 'startNEXT:' (Rob, line " in m and
                   "answer with one of the choices: start, modify, mode" in m for m in said)
        assert "not understood: 'startNEXT:'" in text_of(app, "#about-text")
        await pilot.press("n")
        await pilot.pause()
        await pilot.press("down", "enter", *"add a security expert", "enter")
        await settle(pilot)
    d = Discussion.load(path)
    assert [c.body.strip() for c in d.comments if c.author == "Rob"] == [
        "startNEXT:", "NEXT: modify add a security expert"]


@pytest.mark.anyio
async def test_the_persona_manager_adds_from_a_file_and_a_form_and_removes(ui_repo):
    from cascade.ui.persona_screen import PersonasScreen

    (ui_repo / "dba.yml").write_text("name: AI-DBA\nrole: Database Specialist\npersonality: "
                                     "You review migrations.\ntype: voting\n")
    app = CascadeApp(ui_repo)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press("p")
        await pilot.pause()
        assert isinstance(app.screen, PersonasScreen)
        table = app.screen.query_one("DataTable")
        aliases = [str(table.get_row_at(i)[0]) for i in range(table.row_count)]
        assert "architect" in aliases and "dba" not in aliases
        await pilot.press("a")
        await pilot.pause()
        await pilot.press(*"dba.yml", "enter")
        await pilot.pause()
        aliases = [str(table.get_row_at(i)[0]) for i in range(table.row_count)]
        assert "dba" in aliases
        await pilot.press("n")
        await pilot.pause()
        form = app.screen
        form.query_one("#alias").value = "ops"
        form.query_one("#role").value = "Operations"
        form.query_one("#text").text = "You run it at 3 a.m."
        form.query_one("#type").value = "background"
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert (ui_repo / ".cascade/personas/ops.yml").is_file()
        table.move_cursor(row=[str(table.get_row_at(i)[0])
                               for i in range(table.row_count)].index("architect"))
        await pilot.press("x")  # a bundled persona: refused, said
        await pilot.pause()
        assert any("is a bundled persona" in str(n.message) for n in app._notifications)
        table.move_cursor(row=[str(table.get_row_at(i)[0])
                               for i in range(table.row_count)].index("dba"))
        await pilot.press("x")
        await pilot.pause()
        assert not (ui_repo / ".cascade/personas/dba.yml").exists()
        await pilot.press("escape")
        assert isinstance(app.screen, BrowserScreen)
    from cascade.config.personas import load_personas

    ops = load_personas(ui_repo).get("ops")
    assert ops is not None and ops.name == "AI-Ops" and not ops.votes


@pytest.mark.anyio
async def test_while_its_run_writes_the_ledger_the_other_actions_are_refused(ui_repo, fake_llm):
    """They would wait for the run's end (the ledger's lock): the person is told to come back
    then, and no dialog opens."""
    import threading

    go = threading.Event()

    def held(request):
        go.wait(60)
        return reply("AI-Architect")

    fake_llm.default(held)
    app = CascadeApp(ui_repo / LEDGER)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("r")
        try:
            deadline = time.monotonic() + 60
            while not fake_llm.calls() and time.monotonic() < deadline:
                await pilot.pause(0.05)
            assert app.screen.running
            for key in ("c", "d", "a"):
                await pilot.press(key)
                await pilot.pause()
                assert isinstance(app.screen, DiscussionScreen)  # no dialog
        finally:
            go.set()
        await settle(pilot)
        refused = [n for n in app._notifications if "a run is going on" in str(n.message)]
        assert len(refused) == 3
    d = Discussion.load(ui_repo / LEDGER)
    assert not [c for c in d.comments if c.author == "Rob"]  # no comment, no decision
    assert len([e for e in d.events if e.kind == "PHASE-TRANSITION"]) == 1  # the run's own


@pytest.mark.anyio
async def test_an_action_waits_for_another_writer_without_freezing_the_screen(ui_repo,
                                                                               monkeypatch):
    from test_lock import child, release

    monkeypatch.setenv("CASCADE_LOCK_TIMEOUT", "60")  # a frozen screen would fail, not hang
    holder = child("posix", "hold", ui_repo / LEDGER)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        app = CascadeApp(ui_repo / LEDGER)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            await pilot.press("a")
            deadline = time.monotonic() + 60  # the advance waits in its worker, while the
            while not app.workers and time.monotonic() < deadline:  # screen goes on
                await pilot.pause(0.05)
            await pilot.press("g")
            await pilot.pause()
            assert "phase initial_feedback" in text_of(app, "#summary")  # not yet
            release(holder)
            await settle(pilot)
            assert "phase detailed_review" in text_of(app, "#summary")
            said = [str(n.message) for n in app._notifications]
            assert any(f"waiting for a test holder (pid {holder.pid})" in m for m in said), said
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()


@pytest.mark.anyio
async def test_the_browser_is_there_before_the_ledgers_are_read(ui_repo, cli, monkeypatch):
    """Each row shows its header's title at once; the rest comes as each ledger is read, off
    the screen's thread (held back here until the test lets it go)."""
    import threading

    from cascade.ui import view_data as model

    release, read = threading.Event(), model.row

    def slow_row(path, ledgers=None):
        release.wait(30)
        return read(path, ledgers)

    monkeypatch.setattr(model, "row", slow_row)
    app = CascadeApp(ui_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        table = app.screen.query_one("DataTable")
        assert [table.get_row_at(i)[0] for i in range(table.row_count)] == [
            "Add user authentication", "Rotate the signing keys"]
        assert [str(table.get_row_at(i)[3]) for i in range(2)] == ["...", "..."]
        assert "reading 2 more" in text_of(app, "#filter")
        release.set()
        await settle(pilot)
        assert [table.get_row_at(i)[1] for i in range(2)] == ["phased", "phased"]
        assert "reading" not in text_of(app, "#filter")
        await pilot.press("q")


@pytest.mark.anyio
async def test_the_rows_in_view_are_read_first_and_the_rest_as_one_scrolls(ui_repo, monkeypatch):
    """Past the first screenful a row is titled by its file's name until its ledger is read
    (nothing of it is read before the first frame); the table gets every row; and the rows
    the person scrolls to are read before the ones in between."""
    import threading

    from cascade.ui import view_data as model

    source = (ui_repo / LEDGER).read_text()
    for i in range(80):
        (ui_repo / f"discussions/t{i:03d}.discussion.md").write_text(
            source.replace("Title: Add user authentication", f"Title: Topic number {i}"))
    release, read, order = threading.Event(), model.row, []

    def slow_row(path, ledgers=None):
        order.append(path.name)
        release.wait(30)
        return read(path, ledgers)

    monkeypatch.setattr(model, "row", slow_row)
    app = CascadeApp(ui_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause(0.3)  # the batches after the first screenful are added
        table = app.screen.query_one("DataTable")
        assert table.row_count == 82
        titles = [str(table.get_row_at(i)[0]) for i in range(table.row_count)]
        assert titles[:3] == [TOPIC, "Rotate the signing keys", "Topic number 0"]
        assert titles[-1] == "t079"  # by its file's name: its ledger is not read yet
        table.move_cursor(row=81)  # the person goes to the bottom
        await pilot.pause(0.1)
        release.set()
        await settle(pilot)
        assert order[0] == "add-user-authentication.discussion.md"  # before the scroll
        assert "t079.discussion.md" in order[1:25]  # among the rows in view
        assert order.index("t079.discussion.md") < order.index("t030.discussion.md")
        assert sorted(order) == sorted(set(order)) and len(order) == 82  # each read once
        assert str(table.get_row_at(81)[0]) == "Topic number 79"
        assert "reading" not in text_of(app, "#filter")
        await pilot.press("q")


@pytest.mark.anyio
async def test_a_comment_is_rendered_as_markdown(ui_repo, cli):
    """Emphasis, headings and tables read as such in the comment pane; a marker stands out;
    the ledger's lines keep their line breaks."""
    body = ("# Storage plan\n\nUse **JWT**, not *cookies*.\nRotate keys weekly.\n\n"
            "| Option | Cost |\n|---|---|\n| JWT | low |\n\nQ: Who owns the rotation?")
    assert cli("comment", LEDGER, body, "--vote", "CHANGES")[0] == 0
    app = CascadeApp(ui_repo / LEDGER)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        entry = app.screen.query(".entry").last()
        lines = shown_lines(entry)
        text = "\n".join(lines)
        assert lines[0].strip().startswith("Rob") and "CHANGES" in lines[0]
        assert "Storage plan" in text and "# Storage plan" not in text  # a heading
        assert any(line.strip() == "Use JWT, not cookies." for line in lines)  # emphasis
        assert any(line.strip() == "Rotate keys weekly." for line in lines)  # its own line
        row = next(line for line in lines if "JWT" in line and "low" in line)  # a table row
        assert "|" not in row and "---" not in text
        assert any(line.strip() == "Q: Who owns the rotation?" for line in lines)


@pytest.mark.anyio
async def test_a_decision_not_in_force_looks_different_from_the_one_in_force(ui_repo, cli):
    assert cli("decide", LEDGER, "READY", "--reason", "Good enough for the pilot.")[0] == 0
    assert cli("decide", LEDGER, "CHANGES", "--reason", "The threat model first.")[0] == 0
    app = CascadeApp(ui_repo / LEDGER)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        side = app.screen.query_one("#side-text").render()
        plain = side.plain
        first = plain.index("Rob: READY")
        second = plain.index("Rob: CHANGES")
        assert "not in force (superseded by a later decision)" in plain[first:second]
        assert plain[second:].split("\n", 1)[0].endswith("in force")

        def style_at(at: int) -> str:
            return " ".join(str(s.style) for s in side.spans if s.start <= at < s.end)

        assert "dim" in style_at(first) and "green" not in style_at(first)
        assert "bold" in style_at(second) and "green" in style_at(second)


@pytest.mark.anyio
async def test_the_swarm_panel_fits_a_100_column_dialog(ui_repo, cli, fake_llm):
    """The proposed panel's table in the answer dialog of a 100-column terminal: every column
    keeps its place (a long reason wraps within its own column, never under the persona's),
    nothing is cut at the edge."""
    from swarm_script import Swarm

    Swarm(fake_llm)
    assert cli("new", "Event store for billing", "--protocol", "swarm",
               "--participants", "")[0] == 0
    app = CascadeApp(ui_repo / "discussions/event-store-for-billing.discussion.md")
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press("r")
        while app.screen.running:
            await pilot.pause(0.05)
        await pilot.press("n")
        await pilot.pause()
        told = app.screen.query_one("#told-text")
        assert told.size.width <= 100
        lines = shown_lines(told)
        header = lines[0]
        why_at = header.index("Why")
        rows = lines[2:lines.index(next(x for x in lines if x.startswith("Problem:")))]
        for line in rows:
            assert len(line) <= told.size.width
            assert line.startswith(("AI-", "(@")) or not line[:why_at].strip(), line
        sre = rows.index(next(x for x in rows if x.startswith("AI-Sre")))
        reason = " ".join(x[why_at:].strip() for x in rows[sre:sre + 3])
        assert "vs @db-engineer: Site Reliability Engineer vs Database Engineer" in reason


def test_a_persona_that_holds_two_roles_says_why():
    """Swarm's lightweight mode has no historian: the moderator speaks for it, and the
    panel's second row for the moderator says so (not "the protocol's fixed role" twice)."""
    from cascade.protocol.about import roster
    from cascade.protocol.loader import load_protocol
    from cascade.protocol.options import Options, specialize

    steps = specialize(load_protocol("swarm", None).steps, Options.of(mode="lightweight"))
    rows = {(r[0], r[1]): r[3] for r in roster(steps, [], None, {})}
    assert rows[("moderator (@moderator)", "Moderator")] == "the protocol's fixed role"
    assert rows[("moderator (@moderator)", "Historian")] == (
        "the moderator speaks for the historian too: lightweight mode has no historian of "
        "its own")
