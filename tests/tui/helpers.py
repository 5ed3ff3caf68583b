from __future__ import annotations

import io
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from rich.console import Console
from textual.app import App
from textual.pilot import Pilot


async def settle(pilot: Pilot[Any]) -> None:
    """Let workers finish and their messages be handled."""
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def press(pilot: Pilot[Any], *keys: str) -> None:
    await pilot.press(*keys)
    await settle(pilot)


@asynccontextmanager
async def run_and_press(
    app: App[Any], *keys: str, size: tuple[int, int]
) -> AsyncIterator[Pilot[Any]]:
    """``app`` run at ``size``, settled, then ``keys`` pressed (each test's opening steps)."""
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        if keys:
            await press(pilot, *keys)
        yield pilot


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
