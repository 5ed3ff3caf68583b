"""Every key, per screen, read from the bindings themselves (so it cannot go stale)."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Label


def sections() -> list[tuple[str, list[BindingType]]]:
    from ..app import ZbenchApp
    from .confirm import ConfirmScreen
    from .dashboard import DashboardScreen
    from .job_detail import JobDetailScreen
    from .launch import LaunchScreen
    from .results import ExportScreen, ResultsScreen

    return [
        ("everywhere", [*ZbenchApp.BINDINGS, Binding("ctrl+p", "command_palette", "Commands")]),
        ("dashboard", DashboardScreen.BINDINGS),
        ("job detail", JobDetailScreen.BINDINGS),
        ("results", ResultsScreen.BINDINGS),
        ("export dialog", ExportScreen.BINDINGS),
        ("launch dialog", LaunchScreen.BINDINGS),
        ("confirm", ConfirmScreen.BINDINGS),
    ]


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "dismiss", "Close", id="help.close")
    ]

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label("Keys (ctrl+p opens the command palette; tab moves between fields)")
            yield DataTable(id="keys", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("where", "key", "does")
        for where, bindings in sections():
            for b in bindings:
                if isinstance(b, Binding):
                    key = b.key_display or b.key.replace("question_mark", "?")
                    table.add_row(where, key, b.description)
        table.focus()

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(result)
