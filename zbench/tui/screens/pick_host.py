"""Which host a launch goes to: a small list of the fleet's machines."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, Label, OptionList
from textual.widgets.option_list import Option

from ..format import escape


class PickHostScreen(ModalScreen[str | None]):
    """Dismisses with the chosen host's name, or None."""

    DEFAULT_CSS = """
    PickHostScreen { align: center middle; }
    PickHostScreen #dialog { width: 50; height: auto; border: round $accent; padding: 0 1; }
    PickHostScreen OptionList { height: auto; max-height: 16; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Close", id="pick_host.cancel"),
    ]

    def __init__(self, hosts: list[str], states: dict[str, str] | None = None) -> None:
        super().__init__()
        self.hosts = hosts
        self.states = states or {}

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label("Launch on which host? (enter picks)")
            yield OptionList(
                *(
                    Option(f"{escape(h)}  [$text-muted]{self.states.get(h, '')}[/]", id=h)
                    for h in self.hosts
                )
            )
        yield Footer()  # the dialog's keys: the screen's below do nothing while it is open

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
