"""``cascade ui [PATH]``: the terminal UI (Textual). A browser of every discussion below a
folder, a discussion's view (cascade.ui.discussion: its comments, open questions, decisions,
the consensus line and who is missing, with its actions -- comment and vote as the git user,
run what is due with the replies streaming in, advance, decide) and the persona manager. Works in 80x24 and over
SSH; NO_COLOR turns colour off (Textual reads it). ``q`` quits with exit 0.

Everything it reads comes from cascade.ui.model and everything it does goes through
cascade.ui.actions: the same functions as the commands.
"""
from __future__ import annotations

import time
from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import Button, DataTable, Footer, Header, Static
from textual.worker import get_current_worker

from cascade.ui import model
from cascade.ui.discussion import DiscussionScreen
from cascade.ui.model import FILTERS, vote_style
from cascade.ui.personas import PersonasScreen

LOAD_BATCH, LOAD_EVERY = 25, 0.2  # rows read before the browser shows them, at most (s)
HELP = """\
[b]Discussions[/b]  enter open · f filter (all, open, concluded) · g refresh · p personas
[b]A discussion[/b]  c comment (and vote) · r run what is due · a advance · d decide
              p personas · g refresh · escape back
[b]Personas[/b]     a add from a file · n new · x remove (the repository's own) · escape back
[b]Everywhere[/b]    ? this help · q quit

A decision point (a question the protocol asks a person) is answered with a comment:
a line NEXT: <choice>. Replies stream in below the discussion while a run goes on."""


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "close")]

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(HELP, id="help-text")
            yield Button("Close", id="close")

    @on(Button.Pressed, "#close")
    def close(self) -> None:
        self.dismiss(None)


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
        return r.title, r.protocol, r.where, Text(r.outcome, vote_style(r.outcome)), r.votes

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


class CascadeApp(App):
    """The browser (a folder) or one discussion (a ledger)."""

    TITLE = "cascade"
    CSS = """
    #filter, #summary { padding: 0 1; height: auto; max-height: 5; }
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
