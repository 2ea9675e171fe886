"""The UI's dialogs share one shape: their fields, then an OK button and Cancel. Escape or
Cancel dismisses with None; OK, ctrl+s (or Enter in a field, where ``submit_on_enter``)
dismisses with ``result()``."""
from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input


class Dialog(ModalScreen):
    BINDINGS = [Binding("escape", "cancel", "cancel"),
                Binding("ctrl+s", "ok", "save", priority=True)]
    ok_label = "Save"
    first: str | None = None  # the field focused first
    submit_on_enter = True

    def fields(self) -> ComposeResult:
        yield from ()

    def result(self) -> object:
        return None

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield from self.fields()
            with Horizontal(classes="buttons"):
                yield Button(self.ok_label, id="ok", variant="primary")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        if self.first:
            self.query_one(self.first).focus()

    def action_cancel(self) -> None:
        self.dismiss(None)

    def action_ok(self) -> None:
        self.dismiss(self.result())

    # The buttons call the actions (a handler @on decorates runs as this class's own method,
    # so a subclass overriding an action would be skipped by a click).
    @on(Button.Pressed, "#ok")
    def _ok(self) -> None:
        self.action_ok()

    @on(Button.Pressed, "#cancel")
    def _cancel(self) -> None:
        self.action_cancel()

    @on(Input.Submitted)
    def _submitted(self) -> None:
        if self.submit_on_enter:
            self.action_ok()
