"""One discussion in the terminal UI, with its actions. Everything it reads comes from
cascade.ui.view_data and everything it does goes through cascade.ui.actions (the same functions
as the commands); cascade.ui.app imports it only when a discussion is opened.
"""
from __future__ import annotations

from pathlib import Path

from rich.console import Group
from rich.markdown import Markdown
from rich.markup import escape
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, Label, Select, Static, TextArea

from cascade.base.errors import display_path
from cascade.turns.replies import streamed_comment
from cascade.ui import actions, view_data
from cascade.ui.answer import AnswerScreen, told
from cascade.ui.dialog import Dialog
from cascade.ui.view_data import markdown_of, vote_style
from cascade.ui.persona_screen import PersonasScreen

VOTE_CHOICES = [("no vote", ""), ("READY", "READY"), ("CHANGES", "CHANGES"),
                ("REJECT", "REJECT")]


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


class DiscussionScreen(Screen):
    """One discussion, its actions, and a live panel for replies as they arrive."""

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
            v = view_data.view(self.path)
        except Exception as exc:  # noqa: BLE001 - a broken ledger is said, never a crash
            self.query_one("#summary", Static).update(Text(f"cannot read: {exc}", "red"))
            return
        self.view = v
        self.app.sub_title = display_path(v.path)
        head = Text.assemble((v.title, "bold"), f"  {v.protocol}, {v.where}, {v.status}\n",
                             (v.consensus, "green" if "reached," in v.consensus else "yellow"))
        if v.gate:
            head.append(f"\n{v.gate}", "green" if v.gate_ok else "red")
        if v.waiting:
            head.append(f"\nWaiting for a person: {v.waiting}", "bold magenta")
        self.query_one("#summary", Static).update(head)
        asked = v.about  # what the open question is about, and how to answer it
        self.query_one("#about").display = asked is not None
        if asked is not None:
            lines = asked.unclear + ["n: answer from the list of choices ("
                                     + ", ".join(c.word for c in asked.choices) + ")"]
            self.query_one("#about-text", Static).update(
                Group(Text("\n".join(lines)), told(asked)))
        box = self.query_one("#comments", VerticalScroll)
        box.remove_children()
        box.mount_all([Static(self._entry(e), classes="entry") for e in v.entries]
                      or [Static("No comments yet: r runs the panel, c comments.")])
        box.scroll_end(animate=False)
        side = Text()
        side.append("Participants\n", "bold")
        side.append("".join(f" {line}\n" for line in v.participants or ["(none yet)"]))
        if v.missing:
            side.append("Missing: ", "bold")
            side.append(", ".join(v.missing) + "\n")
        side.append("\nOpen questions\n", "bold")
        side.append("".join(f" {q}\n" for q in v.questions or ["(none)"]))
        if v.findings:
            side.append("\nOpen findings\n", "bold")
            side.append("".join(f" {f}\n" for f in v.findings))
        side.append("\nDecisions\n", "bold")
        side.append("".join(f" {x}\n" for x in v.decisions or ([] if v.rulings else ["(none)"])))
        for said, in_force in v.rulings:  # a person's decision: the one in force stands out
            side.append(f" {said}\n", "bold green" if in_force else "dim")
        self.query_one("#side-text", Static).update(side)

    def _entry(self, e: view_data.Entry) -> Group:
        """A comment: who, its step, vote and line, then its body as markdown (links shown,
        not followed)."""
        head = Text.assemble((e.author, "bold"), (f"  ({e.label})" if e.label else "", "dim"),
                             (f"  {e.vote or 'no vote'}", vote_style(e.vote)),
                             (f"  line {e.line}", "dim"))
        return Group(head, Markdown(markdown_of(e.body), hyperlinks=False))

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
        for its end (cascade.ledger.lock); the person is told to come back then instead."""
        if self.running:
            self.app.notify("a run is going on: comment, decide or advance when it is done",
                            severity="warning")
        return self.running

    def _ask(self, dialog: Dialog, action) -> None:
        """``dialog`` shown; what it returns (unless cancelled) passed to ``action``."""
        def done(result) -> None:
            if result is not None:
                self._act(action, *result)
        self.app.push_screen(dialog, done)

    def action_comment(self) -> None:
        if not self._busy():
            self._ask(CommentScreen(), actions.comment)

    def action_answer(self) -> None:
        """The open decision point, answered from a list of its choices."""
        if self._busy():
            return
        view = getattr(self, "view", None)
        if view is None or view.about is None:
            self.app.notify("no question is waiting for an answer", severity="warning")
            return
        self._ask(AnswerScreen(view.about), actions.comment)

    def action_decide(self) -> None:
        if not self._busy():
            self._ask(DecideScreen(), actions.decide)

    def action_advance(self) -> None:
        if not self._busy():
            self._act(actions.advance)

    @work(thread=True, group="actions")
    def _act(self, action, *args) -> None:
        """A comment, decision or advance, off the screen's thread: another process may be
        writing the ledger, and the action waits for it (cascade.ledger.lock)."""
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
    """The run's progress (cascade.turns.asking.Progress), from its worker thread to the
    screen."""

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
