from __future__ import annotations

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
