"""The answer to a decision point, picked from a list: what the question is about (as
cascade.protocol.about says it), its choices (the recommended one highlighted), and the
person's own words for a choice that takes them. Saved as the comment ``NEXT: <choice>
[words]``, which the protocol reads like any person's answer."""
from __future__ import annotations

from rich import box
from rich.console import Group
from rich.table import Column, Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from cascade.protocol.about import About
from cascade.ui.dialog import Dialog


def told(about: About) -> Group:
    """What a decision point is about, for a pane of any width: the panel as a table whose
    cells wrap within their columns (a 100-column dialog holds it), then the turns it shows."""
    parts: list = []
    if about.table:
        header, *rows = about.table
        persona, role, model, why = header  # the reasons take what the others leave
        table = Table(Column(persona, max_width=18), Column(role, no_wrap=True),
                      Column(model, no_wrap=True), Column(why, ratio=1),
                      box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, expand=True)
        for row in rows:
            table.add_row(*(Text(cell) for cell in row))  # model text: never markup
        parts.append(table)
    if about.context:
        parts.append(Text("\n".join(about.context)))
    return Group(*parts)


class AnswerScreen(Dialog):
    """A decision point's choices as a list; dismisses with the comment that answers it."""

    ok_label = "Answer"
    first = "#choices"

    def __init__(self, about: About) -> None:
        super().__init__()
        self.about = about

    def fields(self) -> ComposeResult:
        about = self.about
        yield Label(about.step.question, id="question")
        if about.told():
            with VerticalScroll(id="told"):
                yield Static(told(about), id="told-text")
        options = [Option(Text(about.offer(c)), id=c.word) for c in about.choices]
        yield OptionList(*options, id="choices")
        yield Input(placeholder="your words for the choice, if it takes any", id="words")

    def on_mount(self) -> None:
        super().on_mount()
        choices = self.query_one("#choices", OptionList)
        words = [c.word for c in self.about.choices]
        if self.about.recommended in words:
            choices.highlighted = words.index(self.about.recommended)

    @on(OptionList.OptionSelected)
    def _chosen(self) -> None:
        self.query_one("#words", Input).focus()  # then Enter (or ctrl+s) answers

    def result(self) -> tuple[str, None] | None:
        choices = self.query_one("#choices", OptionList)
        if choices.highlighted is None:
            return None
        word = self.about.choices[choices.highlighted].word
        words = " ".join(self.query_one("#words", Input).value.split())
        return f"NEXT: {word} {words}".strip(), None
