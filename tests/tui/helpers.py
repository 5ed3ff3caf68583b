from __future__ import annotations

import io
from typing import Any

from rich.console import Console
from textual.app import App
from textual.pilot import Pilot


async def settle(pilot: Pilot[object]) -> None:
    """Let workers finish and their messages be handled."""
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def press(pilot: Pilot[object], *keys: str) -> None:
    await pilot.press(*keys)
    await settle(pilot)


def screen_lines(app: App[Any]) -> list[str]:
    """The terminal's lines as the user sees them: the top screen drawn over the screens below it
    (a modal dialog leaves the screen under it in sight), as ``App.export_screenshot`` draws them."""
    width, height = app.size
    console = Console(
        width=width,
        height=height,
        file=io.StringIO(),
        force_terminal=True,
        color_system="truecolor",
        record=True,
        legacy_windows=False,
        safe_box=False,
    )
    console.print(
        app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
    )
    return console.export_text().splitlines()
