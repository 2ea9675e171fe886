"""The UI's persona manager: every persona (bundled and the repository's), add one from a file
or a form, remove a repository one -- through cascade.config.persona_files, as ``cascade
personas add/remove`` do, with the same checks and the same one-line refusals."""
from __future__ import annotations

from pathlib import Path

from rich.markup import escape
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Input, Label, Select, TextArea

from cascade.config import persona_files
from cascade.config.personas import load_personas
from cascade.base.errors import CascadeError, display_path
from cascade.base.resources import find_root, search_path
from cascade.ui.dialog import Dialog


class FromFileScreen(Dialog):
    ok_label = "Add"
    first = "#file"

    def fields(self) -> ComposeResult:
        yield Label("Add a persona from a YAML file:")
        yield Input(placeholder="path of the file", id="file")
        yield Input(placeholder="its alias (default: the file's name)", id="alias")

    def result(self) -> tuple[str, str]:
        file = self.query_one("#file", Input).value.strip()
        return file, self.query_one("#alias", Input).value.strip() or Path(file).stem


class NewPersonaScreen(Dialog):
    first = "#alias"
    submit_on_enter = False  # Enter moves on; ctrl+s or Save saves

    def fields(self) -> ComposeResult:
        yield Label("A new persona (ctrl+s saves):")
        yield Input(placeholder="alias, e.g. dba", id="alias")
        yield Input(placeholder="display name (default AI-<Alias>)", id="name")
        yield Input(placeholder="role, e.g. Database Specialist", id="role")
        yield TextArea("", id="text")
        yield Input(placeholder="expertise, comma-separated", id="expertise")
        yield Input(placeholder="questions it always asks, separated by ;", id="concerns")
        yield Select([("votes", "voting"), ("does not vote", "background")],
                     value="voting", id="type", allow_blank=False)

    def result(self) -> dict:
        value = lambda sel: self.query_one(sel, Input).value  # noqa: E731
        return {"alias": value("#alias"), "name": value("#name"), "role": value("#role"),
                "personality": self.query_one("#text", TextArea).text,
                "expertise": value("#expertise").split(","),
                "concerns": value("#concerns").split(";"),
                "type": str(self.query_one("#type", Select).value)}


class PersonasScreen(Screen):
    """Every persona, with the keys that add and remove them."""

    BINDINGS = [Binding("escape", "back", "back"), Binding("a", "from_file", "add from file"),
                Binding("n", "new", "new"), Binding("x", "remove", "remove")]

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        yield Label("Personas: bundled, and the repository's own (.cascade/personas/)",
                    id="filter")
        yield DataTable(id="personas", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("Alias", "Name", "Votes", "Role", "Where")
        self.refresh_rows()

    def refresh_rows(self) -> None:
        table = self.query_one(DataTable)
        table.clear()
        root = find_root()
        try:
            registry = load_personas(root)
        except CascadeError as exc:
            self.app.notify(escape(str(exc)), severity="error")
            return
        bundled = list(search_path("personas", root))[-1]  # the bundled folder comes last
        for p in registry:
            where = "bundled" if p.path.parent == bundled else display_path(p.path)
            table.add_row(p.alias, p.name, "yes" if p.votes else "no", p.role, where,
                          key=p.alias)

    def action_back(self) -> None:
        self.app.pop_screen()

    def _done(self, what: str, call) -> None:
        try:
            self.app.notify(escape(what.format(*call())), timeout=6)
        except CascadeError as exc:
            self.app.notify(escape(str(exc)), severity="error", timeout=10)
        except OSError as exc:
            self.app.notify(escape(f"{exc.filename}: {exc.strerror}"), severity="error")
        self.refresh_rows()

    def action_from_file(self) -> None:
        def add(result) -> None:
            if result is None:
                return
            file, alias = result

            def call():
                path = Path(file).expanduser()
                if not path.is_file():
                    raise CascadeError("no such file", path)
                target, note = persona_files.add(find_root(), alias,
                                                 path.read_text(encoding="utf-8"), path)
                return display_path(target), note
            self._done("Added {0} ({1})", call)
        self.app.push_screen(FromFileScreen(), add)

    def action_new(self) -> None:
        def add(result) -> None:
            if result is None:
                return

            def call():
                alias = result["alias"].strip()
                text = persona_files.from_answers(alias, result)
                target, note = persona_files.add(find_root(), alias, text)
                return display_path(target), note
            self._done("Added {0} ({1})", call)
        self.app.push_screen(NewPersonaScreen(), add)

    def action_remove(self) -> None:
        table = self.query_one(DataTable)
        if table.row_count == 0:
            return
        alias = str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)
        self._done("Removed {0}",
                   lambda: (display_path(persona_files.remove(find_root(), alias)),))
