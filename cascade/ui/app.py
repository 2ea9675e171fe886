"""``cascade ui [PATH]``: the terminal UI (Textual, docs/ui.md): a browser of every discussion
below a folder, a discussion's view (cascade.ui.discussion_screen) and the persona manager
(cascade.ui.persona_screen), both imported when first opened.

The browser is there first: every ledger gets a row at once, the table filled in batches
after the first frame, each ledger read off the screen's thread, the rows in view first.
"""
from __future__ import annotations

import threading
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

from cascade.base.errors import display_path
from cascade.commands._common import find_ledgers
from cascade.ui import view_data
from cascade.ui.view_data import FILTERS, vote_style

LOAD_BATCH, LOAD_EVERY = 25, 0.2  # rows read before the browser shows them, at most (s)
ADD_BATCH, ADD_EVERY = 100, 0.05  # rows added to the table after the first screenful, every (s)
HELP = """\
[b]Discussions[/b]  enter open · f filter (all, open, concluded) · g refresh · p personas
[b]A discussion[/b]  c comment (and vote) · n answer the question · r run what is due
              a advance · d decide · p personas · g refresh · escape back
[b]Personas[/b]     a add from a file · n new · x remove (the repository's own) · escape back
[b]Everywhere[/b]    ? this help · q quit

A decision point (a question the protocol asks a person) is said above the discussion,
with what it is about; n answers it from a list of its choices (saved as a comment
NEXT: <choice>). Replies stream in below the discussion while a run goes on."""


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
        self.rows: list[view_data.Row] = []
        self.pending: list[int] = []  # rows kept by the filter, not in the table yet
        self.in_table: set[str] = set()
        self.top = 0  # the first row in view
        self.painted = threading.Event()  # the first frame is out: the reading may start

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        yield Static("", id="filter")
        yield DataTable(id="discussions", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        self.columns = table.add_columns("Discussion", "Protocol", "Where", "Outcome",
                                         "Votes R/C/X")  # the rows: when the screen shows
        self.watch(table, "scroll_y", self._scrolled)

    def _scrolled(self, value: float) -> None:
        self.top = int(value)

    def _first(self) -> int:
        """How many rows the first frame holds (and titles from their header): a screenful."""
        return max(self.app.size.height, 24)

    def action_refresh(self) -> None:
        """Every ledger's row at once, then each read off the screen's thread, the rows in
        view first: the browser is there before a thousand ledgers are parsed."""
        first = self._first()
        self.rows = [view_data.placeholder(p, titled=i < first)
                     for i, p in enumerate(find_ledgers(self.start))]
        self._fill()
        self.call_after_refresh(self.painted.set)
        self._load(self.rows)

    @work(thread=True, exclusive=True, group="rows")
    def _load(self, rows: list[view_data.Row]) -> None:
        worker = get_current_worker()
        self.painted.wait(2.0)  # this thread would hold up the first frame
        ledgers = view_data.reader(self.start)
        order = _Order(len(rows))
        batch: list[tuple[int, view_data.Row]] = []
        sent = time.monotonic()
        while (index := order.next(self.top if self.which == FILTERS[0] else None,
                                   self.app.size.height)) is not None:
            if worker.is_cancelled:
                return
            batch.append((index, view_data.row(rows[index].path, ledgers)))
            if len(batch) >= LOAD_BATCH or time.monotonic() - sent > LOAD_EVERY:
                self.app.call_from_thread(self._loaded, rows, batch)
                batch, sent = [], time.monotonic()
        if batch:
            self.app.call_from_thread(self._loaded, rows, batch)

    def _loaded(self, rows: list[view_data.Row],
                batch: list[tuple[int, view_data.Row]]) -> None:
        if rows is not self.rows:
            return  # a refresh since: its own rows are loading
        for index, row in batch:
            rows[index] = row
        if self.which != FILTERS[0]:  # which rows a filter keeps is known only now
            self._fill()
            return
        table = self.query_one(DataTable)
        for _, row in batch:
            if str(row.path) in self.in_table:  # else it is added as it is now, in turn
                for column, value in zip(self.columns, self._cells(row)):
                    table.update_cell(str(row.path), column, value)
        self._say()

    @staticmethod
    def _cells(r: view_data.Row) -> tuple:
        return r.title, r.protocol, r.where, Text(r.outcome, vote_style(r.outcome)), r.votes

    def _fill(self) -> None:
        """The rows the filter keeps: a screenful now, the rest a batch per frame (each row
        added is measured for the columns' widths: a thousand would hold up the first frame)."""
        self.query_one(DataTable).clear()
        self.in_table = set()
        self.pending = [i for i, r in enumerate(self.rows) if view_data.keep(r, self.which)]
        self._add(self.pending, self._first())
        self._say()

    def _add(self, pending: list[int], count: int) -> None:
        if pending is not self.pending:
            return  # filled again since
        table = self.query_one(DataTable)
        for index in pending[:count]:
            row = self.rows[index]
            table.add_row(*self._cells(row), key=str(row.path))
            self.in_table.add(str(row.path))
        self.pending = rest = pending[count:]
        if rest:  # the next batch a moment later: keys and scrolling go first
            self.set_timer(ADD_EVERY, lambda: self._add(rest, ADD_BATCH))

    def _say(self) -> None:
        shown = sum(1 for r in self.rows if view_data.keep(r, self.which))
        loading = sum(1 for r in self.rows if r.loading)
        self.query_one("#filter", Static).update(
            f"{shown} of {len(self.rows)} discussions below {display_path(self.start)}/ "
            f"-- showing {self.which} (f: filter)"
            + (f"; reading {loading} more" if loading else "") if self.rows else
            "No discussions found (looked for *.discussion.md below this folder).")

    def action_filter(self) -> None:
        self.which = FILTERS[(FILTERS.index(self.which) + 1) % len(FILTERS)]
        self._fill()

    def action_personas(self) -> None:
        self.app.push_screen(personas_screen())

    @on(DataTable.RowSelected)
    def _open(self, event: DataTable.RowSelected) -> None:
        self.app.push_screen(discussion_screen(Path(str(event.row_key.value))))

    def on_screen_resume(self) -> None:
        self.action_refresh()


class _Order:
    """Which ledger to read next: one in view not read yet, else the next one down."""

    def __init__(self, count: int) -> None:
        self.done = bytearray(count)
        self.ahead = 0

    def next(self, top: int | None, height: int) -> int | None:
        if top is not None:
            for index in range(max(0, top), min(top + height, len(self.done))):
                if not self.done[index]:
                    self.done[index] = 1
                    return index
        while self.ahead < len(self.done) and self.done[self.ahead]:
            self.ahead += 1
        if self.ahead == len(self.done):
            return None
        self.done[self.ahead] = 1
        return self.ahead


def discussion_screen(path: Path) -> Screen:
    """One discussion's screen; its module (and the run machinery behind its actions) is
    imported when a discussion is first opened."""
    from cascade.ui.discussion_screen import DiscussionScreen  # Textual: not the browser's path

    return DiscussionScreen(path)


def personas_screen() -> Screen:
    """The persona manager; its module is imported when it is first opened."""
    from cascade.ui.persona_screen import PersonasScreen  # Textual: not the browser's path

    return PersonasScreen()


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
    AnswerScreen #dialog { width: 100; }  /* a panel's table, each column its own width */
    ModalScreen { align: center middle; }
    #text { height: 8; }
    .buttons { height: auto; }
    """
    BINDINGS = [Binding("q", "quit", "quit"), Binding("question_mark", "help", "help")]

    def __init__(self, target: Path) -> None:
        super().__init__()
        self.target = target

    def on_mount(self) -> None:
        target = self.target
        self.push_screen(discussion_screen(target) if target.is_file() else BrowserScreen(target))

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def action_quit(self) -> None:
        if getattr(self.screen, "running", False):  # a discussion's run
            self.notify("a run is going on: q again when it is done", severity="warning")
            return
        self.exit(0)
