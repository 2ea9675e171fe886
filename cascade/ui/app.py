"""``cascade ui [PATH]``: the terminal UI (Textual). A browser of every discussion below a
(Over 400 lines: the screens of one Textual app, and their bindings.)
folder, a discussion's view (its comments, open questions, decisions, the consensus line and
who is missing) with its actions -- comment and vote as the git user, run what is due with
the replies streaming in, advance, decide -- and the persona manager. Works in 80x24 and over
SSH; NO_COLOR turns colour off (Textual reads it). ``q`` quits with exit 0.

Everything it reads comes from cascade.ui.model and everything it does goes through
cascade.ui.actions: the same functions as the commands.
"""
from __future__ import annotations

import time
from pathlib import Path

from rich.markup import escape
from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import (
    Button,
    DataTable,
    Footer,
    Header,
    Input,
    Label,
    Select,
    Static,
    TextArea,
)
from textual.worker import get_current_worker

from cascade.turns.replies import streamed_comment
from cascade.ui import actions, model
from cascade.ui.answer import AnswerScreen
from cascade.ui.dialog import Dialog
from cascade.ui.model import FILTERS, MARKERS
from cascade.ui.personas import PersonasScreen

LOAD_BATCH, LOAD_EVERY = 25, 0.2  # rows read before the browser shows them, at most (s)
VOTE_CHOICES = [("no vote", ""), ("READY", "READY"), ("CHANGES", "CHANGES"),
                ("REJECT", "REJECT")]
HELP = """\
[b]Discussions[/b]  enter open · f filter (all, open, concluded) · g refresh · p personas
[b]A discussion[/b]  c comment (and vote) · n answer the question · r run what is due
              a advance · d decide · p personas · g refresh · escape back
[b]Personas[/b]     a add from a file · n new · x remove (the repository's own) · escape back
[b]Everywhere[/b]    ? this help · q quit

A decision point (a question the protocol asks a person) is said above the discussion,
with what it is about; n answers it from a list of its choices (saved as a comment
NEXT: <choice>). Replies stream in below the discussion while a run goes on."""


def _vote_style(vote: str | None) -> str:
    return {"READY": "green", "CHANGES": "yellow", "REJECT": "red"}.get(vote or "", "dim")


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "close")]

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(HELP, id="help-text")
            yield Button("Close", id="close")

    @on(Button.Pressed, "#close")
    def close(self) -> None:
        self.dismiss(None)


class CommentScreen(Dialog):
    """A person's comment and vote."""

    first = "#text"

    def fields(self) -> ComposeResult:
        yield Label("Your comment (ctrl+s saves; n answers a question from a list):")
        yield TextArea("", id="text")
        yield Select(VOTE_CHOICES, value="", id="vote", allow_blank=False)

    def result(self) -> tuple[str, str | None]:
        vote = self.query_one("#vote", Select).value
        return self.query_one("#text", TextArea).text, str(vote) if vote else None


class DecideScreen(Dialog):
    """A person's decision, overriding the panel (``cascade decide``)."""

    ok_label = "Decide"
    first = "#reason"

    def fields(self) -> ComposeResult:
        yield Label("Decide for the document's staged revision (overrides the panel):")
        yield Select(VOTE_CHOICES[1:], value="READY", id="vote", allow_blank=False)
        yield Input(placeholder="the reason (required)", id="reason")

    def result(self) -> tuple[str, str]:
        return str(self.query_one("#vote", Select).value), self.query_one("#reason", Input).value


class BrowserScreen(Screen):
    """Every discussion below the folder."""

    BINDINGS = [Binding("f", "filter", "filter"), Binding("g", "refresh", "refresh", show=False),
                Binding("p", "personas", "personas")]

    def __init__(self, start: Path) -> None:
        super().__init__()
        self.start = start
        self.which = FILTERS[0]
        self.rows: list[model.Row] = []

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        yield Static("", id="filter")
        yield DataTable(id="discussions", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        self.columns = table.add_columns("Discussion", "Protocol", "Where", "Outcome",
                                         "Votes R/C/X")  # the rows: when the screen shows

    def action_refresh(self) -> None:
        """Every ledger's row at once, by the title its header names; then each read, top
        first, off the screen's thread: the browser is there before a thousand ledgers are
        parsed."""
        self.rows = [model.placeholder(p) for p in model.ledgers(self.start)]
        self._fill()
        self._load(self.rows)

    @work(thread=True, exclusive=True, group="rows")
    def _load(self, rows: list[model.Row]) -> None:
        worker = get_current_worker()
        root = model.top(self.start)
        batch: list[tuple[int, model.Row]] = []
        sent = time.monotonic()
        for index, placeholder in enumerate(rows):
            if worker.is_cancelled:
                return
            batch.append((index, model.row(placeholder.path, root)))
            if len(batch) >= LOAD_BATCH or time.monotonic() - sent > LOAD_EVERY:
                self.app.call_from_thread(self._loaded, rows, batch)
                batch, sent = [], time.monotonic()
        if batch:
            self.app.call_from_thread(self._loaded, rows, batch)

    def _loaded(self, rows: list[model.Row], batch: list[tuple[int, model.Row]]) -> None:
        if rows is not self.rows:
            return  # a refresh since: its own rows are loading
        for index, row in batch:
            rows[index] = row
        if self.which != FILTERS[0]:  # which rows a filter keeps is known only now
            self._fill()
            return
        table = self.query_one(DataTable)
        for _, row in batch:
            for column, value in zip(self.columns, self._cells(row)):
                table.update_cell(str(row.path), column, value)
        self._say()

    @staticmethod
    def _cells(r: model.Row) -> tuple:
        return r.title, r.protocol, r.where, Text(r.outcome, _vote_style(r.outcome)), r.votes

    def _fill(self) -> None:
        table = self.query_one(DataTable)
        table.clear()
        for r in self.rows:
            if model.keep(r, self.which):
                table.add_row(*self._cells(r), key=str(r.path))
        self._say()

    def _say(self) -> None:
        shown = sum(1 for r in self.rows if model.keep(r, self.which))
        loading = sum(1 for r in self.rows if r.loading)
        self.query_one("#filter", Static).update(
            f"{shown} of {len(self.rows)} discussions below {model.shown(self.start)}/ "
            f"-- showing {self.which} (f: filter)"
            + (f"; reading {loading} more" if loading else "") if self.rows else
            "No discussions found (looked for *.discussion.md below this folder).")

    def action_filter(self) -> None:
        self.which = FILTERS[(FILTERS.index(self.which) + 1) % len(FILTERS)]
        self._fill()

    def action_personas(self) -> None:
        self.app.push_screen(PersonasScreen())

    @on(DataTable.RowSelected)
    def _open(self, event: DataTable.RowSelected) -> None:
        self.app.push_screen(DiscussionScreen(Path(str(event.row_key.value))))

    def on_screen_resume(self) -> None:
        self.action_refresh()


class DiscussionScreen(Screen):
    """One discussion: its comments, its questions, decisions and consensus line; its
    actions; a live panel for replies as they arrive."""

    BINDINGS = [Binding("escape", "back", "back"), Binding("c", "comment", "comment"),
                Binding("n", "answer", "answer"),
                Binding("r", "run", "run"), Binding("a", "advance", "advance"),
                Binding("d", "decide", "decide"), Binding("g", "refresh", "refresh", show=False),
                Binding("p", "personas", "personas")]

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self.running = False
        self.live: dict[int, str] = {}  # a reply's text so far, by its outcome's id
        self.said: dict[int, str] = {}  # instead of the text: its result, or a retry
        self.names: dict[int, str] = {}

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        yield Static("", id="summary")
        with VerticalScroll(id="about"):
            yield Static("", id="about-text")
        with Horizontal(id="body"):
            yield VerticalScroll(id="comments")
            yield VerticalScroll(Static("", id="side-text"), id="side")
        yield Static("", id="live")
        yield Footer()

    def on_mount(self) -> None:
        self.action_refresh()

    def action_refresh(self) -> None:
        try:
            v = model.view(self.path)
        except Exception as exc:  # noqa: BLE001 - a broken ledger is said, never a crash
            self.query_one("#summary", Static).update(Text(f"cannot read: {exc}", "red"))
            return
        self.view = v
        self.app.sub_title = f"{model.shown(v.path)}"
        head = Text.assemble((v.title, "bold"), f"  {v.protocol}, {v.where}, {v.status}\n",
                             (v.consensus, "green" if "reached," in v.consensus else "yellow"))
        if v.waiting:
            head.append(f"\nWaiting for a person: {v.waiting}", "bold magenta")
        self.query_one("#summary", Static).update(head)
        told = v.about  # what the open question is about, and how to answer it
        self.query_one("#about").display = told is not None
        if told is not None:
            lines = told.unclear + ["n: answer from the list of choices ("
                                    + ", ".join(c.word for c in told.choices) + ")"] + told.told()
            self.query_one("#about-text", Static).update(Text("\n".join(lines)))
        box = self.query_one("#comments", VerticalScroll)
        box.remove_children()
        box.mount_all([Static(self._entry(e), classes="entry") for e in v.entries]
                      or [Static("No comments yet: r runs the panel, c comments.")])
        box.scroll_end(animate=False)
        side = Text()
        side.append("Participants\n", "bold")
        for line in v.participants or ["(none yet)"]:
            side.append(f" {line}\n")
        if v.missing:
            side.append("Missing: ", "bold")
            side.append(", ".join(v.missing) + "\n")
        side.append("\nOpen questions\n", "bold")
        for q in v.questions or ["(none)"]:
            side.append(f" {q}\n")
        side.append("\nDecisions\n", "bold")
        for x in v.decisions or ["(none)"]:
            side.append(f" {x}\n")
        self.query_one("#side-text", Static).update(side)

    def _entry(self, e: model.Entry) -> Text:
        out = Text()
        out.append(e.author, "bold")
        if e.label:
            out.append(f"  ({e.label})", "dim")
        out.append(f"  {e.vote or 'no vote'}", _vote_style(e.vote))
        out.append(f"  line {e.line}\n", "dim")
        for line in e.body.splitlines():
            marked = line.lstrip().startswith(MARKERS)
            out.append(line + "\n", "bold cyan" if marked else "")
        return out

    def action_back(self) -> None:
        if not self.running:
            self.app.pop_screen()

    def action_personas(self) -> None:
        self.app.push_screen(PersonasScreen())

    def _said(self, code: int, text: str) -> None:
        self.app.notify(escape(text or "done"), severity="information" if code == 0 else "error",
                        timeout=8)
        self.action_refresh()

    def _busy(self) -> bool:
        """This screen's run is writing the ledger: a comment, decision or advance would wait
        for its end (cascade.loop.lock); the person is told to come back then instead."""
        if self.running:
            self.app.notify("a run is going on: comment, decide or advance when it is done",
                            severity="warning")
        return self.running

    def action_comment(self) -> None:
        if self._busy():
            return

        def done(result) -> None:
            if result is not None:
                self._act(actions.comment, *result)
        self.app.push_screen(CommentScreen(), done)

    def action_answer(self) -> None:
        """The open decision point, answered from a list of its choices."""
        if self._busy():
            return
        view = getattr(self, "view", None)
        if view is None or view.about is None:
            self.app.notify("no question is waiting for an answer", severity="warning")
            return

        def done(result) -> None:
            if result is not None:
                self._act(actions.comment, *result)
        self.app.push_screen(AnswerScreen(view.about), done)

    def action_decide(self) -> None:
        if self._busy():
            return

        def done(result) -> None:
            if result is not None:
                self._act(actions.decide, *result)
        self.app.push_screen(DecideScreen(), done)

    def action_advance(self) -> None:
        if not self._busy():
            self._act(actions.advance)

    @work(thread=True, group="actions")
    def _act(self, action, *args) -> None:
        """A comment, decision or advance, off the screen's thread: another process may be
        writing the ledger, and the action waits for it (cascade.loop.lock)."""
        code, text = action(self.path, *args)
        self.app.call_from_thread(self._said, code, text)

    def action_run(self) -> None:
        if self.running:
            self.app.notify("a run is going on", severity="warning")
            return
        self.running = True
        self.live, self.said, self.names = {}, {}, {}
        self.query_one("#live", Static).update(Text("Starting...", "italic"))
        self._run()

    @work(thread=True, exclusive=True)
    def _run(self) -> None:
        try:
            said, code = actions.run_next(self.path, _LiveProgress(self)), 0
        except Exception as exc:  # noqa: BLE001 - a CascadeError (bad input) or worse: said
            said, code = str(exc), 2
        self.app.call_from_thread(self._finished, code, said)

    def _finished(self, code: int, said: str) -> None:
        self.running = False
        self.query_one("#live", Static).update("")
        self._said(code, said)

    def show_live(self) -> None:
        text = Text()
        for key, name in self.names.items():
            reply = " ".join(streamed_comment(self.live.get(key, "")).split())
            text.append(f"{name}: ", "bold")
            room = max(10, self.size.width - len(name) - 6)
            shown = self.said.get(key) or (
                ("..." + reply[-room:] if len(reply) > room else reply) if reply else "...")
            text.append(shown + "\n")
        self.query_one("#live", Static).update(text)


class _LiveProgress:
    """The run's progress, from its worker thread to the screen: who was asked, their reply
    as it streams in, and when each is done."""

    wants_stream = True

    def __init__(self, screen: DiscussionScreen) -> None:
        self.screen = screen

    def _call(self, fn, *args) -> None:
        self.screen.app.call_from_thread(fn, *args)

    def start(self, outcome) -> None:
        def show() -> None:
            step = getattr(outcome, "step", "")
            self.screen.names[id(outcome)] = outcome.persona.name + (f" ({step})" if step else "")
            self.screen.show_live()
        self._call(show)

    def stream(self, outcome, text: str) -> None:
        def show() -> None:
            self.screen.said.pop(id(outcome), None)
            self.screen.live[id(outcome)] = self.screen.live.get(id(outcome), "") + text
            self.screen.show_live()
        self._call(show)

    def retry(self, outcome, model: str, reason: str, wait: float) -> None:
        def show() -> None:
            self.screen.live[id(outcome)] = ""
            self.screen.said[id(outcome)] = f"retrying in {wait:.0f}s: {reason}"
            self.screen.show_live()
        self._call(show)

    def finish(self, outcome) -> None:
        def show() -> None:
            self.screen.said[id(outcome)] = (
                f"{outcome.vote or 'no vote'} ({outcome.seconds:.1f}s)" if outcome.ok
                else f"failed: {outcome.error}")
            self.screen.show_live()
            self.screen.action_refresh()
        self._call(show)

    def settle(self) -> None: ...

    def close(self) -> None: ...


class CascadeApp(App):
    """The browser (a folder) or one discussion (a ledger)."""

    TITLE = "cascade"
    CSS = """
    #filter, #summary { padding: 0 1; height: auto; max-height: 5; }
    #about { height: auto; max-height: 10; padding: 0 1; border-top: solid $primary-darken-2; }
    #choices { height: auto; max-height: 8; }
    #told { height: auto; max-height: 8; }
    #body { height: 1fr; }
    #comments { width: 2fr; }
    #side { width: 1fr; min-width: 24; border-left: solid $primary-darken-2; padding: 0 1; }
    .entry { padding: 0 1 1 1; }
    #live { height: auto; max-height: 6; padding: 0 1; background: $boost; }
    #dialog { width: 76; max-width: 100%; height: auto; max-height: 22; padding: 1 2;
              background: $panel; border: thick $primary; }
    ModalScreen { align: center middle; }
    #text { height: 8; }
    .buttons { height: auto; }
    """
    BINDINGS = [Binding("q", "quit", "quit"), Binding("question_mark", "help", "help")]

    def __init__(self, target: Path) -> None:
        super().__init__()
        self.target = target

    def on_mount(self) -> None:
        if self.target.is_file():
            self.push_screen(DiscussionScreen(self.target))
        else:
            self.push_screen(BrowserScreen(self.target))

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def action_quit(self) -> None:
        screen = self.screen
        if isinstance(screen, DiscussionScreen) and screen.running:
            self.notify("a run is going on: q again when it is done", severity="warning")
            return
        self.exit(0)
