"""A dialog's footer lists the dialog's keys: not those of the screen under it, which do nothing
while the dialog is open (at 80x24 the launch dialog showed the dashboard's "c Cancel job",
"r Results" ... under it)."""

from __future__ import annotations

from typing import Any

import pytest
from textual.app import App
from textual.screen import ModalScreen, Screen

from zbench.tui.fleet_app import FleetApp
from zbench.tui.screens.confirm import ConfirmScreen
from zbench.tui.screens.help import HelpScreen
from zbench.tui.screens.launch import LaunchScreen
from zbench.tui.screens.pick_host import PickHostScreen
from zbench.tui.screens.results import ExportScreen

from .conftest import make_app
from .helpers import press, screen_lines, settle
from .test_fleet import CannedStream, FakeTransport


def footer_keys(app: App[Any], screen: Screen[Any]) -> list[str]:
    """The keys a Footer on ``screen`` would list, as it writes them ("^s Launch"): the shown
    bindings, one per action (``n,escape`` for one action shows ``n`` alone)."""
    keys: dict[str, str] = {}
    for active in screen.active_bindings.values():
        binding = active.binding
        if binding.show and binding.action not in keys:
            keys[binding.action] = f"{app.get_key_display(binding)} {binding.description}"
    return list(keys.values())


async def check_dialog_footer(
    app: App[Any], keys: tuple[str, ...], dialog: type[ModalScreen[Any]]
) -> None:
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        *before, last = keys
        await press(pilot, *before)
        below = footer_keys(app, app.screen)
        assert below, "the screen under the dialog shows keys of its own"
        await press(pilot, last)
        assert isinstance(app.screen, dialog)
        shown = footer_keys(app, app.screen)
        bottom = screen_lines(app)[-1]
        assert shown and all(key in bottom for key in shown), (shown, bottom)
        assert [key for key in below if key not in shown and key in bottom] == [], bottom


@pytest.mark.parametrize(
    ("keys", "dialog"),
    [
        (("l",), LaunchScreen),
        (("question_mark",), HelpScreen),
        (("c",), ConfirmScreen),  # cancel the selected (running) job?
        (("r", "e"), ExportScreen),  # over the results screen
    ],
    ids=["launch", "help", "confirm", "export"],
)
async def test_a_dialog_footer_lists_only_the_dialogs_keys(
    keys: tuple[str, ...], dialog: type[ModalScreen[Any]]
) -> None:
    await check_dialog_footer(make_app(), keys, dialog)


async def test_the_fleet_views_host_picker_lists_only_its_keys() -> None:
    app = FleetApp(
        ["alpha", "beta"], FakeTransport(), stream_factory=CannedStream, jobs_interval=None
    )
    await check_dialog_footer(app, ("l",), PickHostScreen)
