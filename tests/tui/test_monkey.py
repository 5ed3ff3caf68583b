"""Random keys on every screen, at a small, a usual and a large terminal: the app must keep running.

Every key any screen binds (from the help's own table), plus the keys a user moves and types with,
pressed in a seeded random order. Textual re-raises an exception from a handler, a worker or a
render when the test ends, so a key that crashes the app in some state fails here with its seed.
"""

from __future__ import annotations

import random

import pytest
from textual.binding import Binding

from zbench.tui.screens.help import sections

from .conftest import make_app
from .fakes import FakeServices
from .helpers import settle

QUIT = {"q", "ctrl+q", "ctrl+c"}  # the one way out: pressed, the run would end early
MOVES = ("up", "down", "left", "right", "tab", "shift+tab", "enter", "escape", "space", "pagedown")
TYPED = ("0", "1", "a", "backspace", "minus")


def bound_keys() -> list[str]:
    keys = {
        key.strip()
        for _, bindings in sections()
        for b in bindings
        if isinstance(b, Binding)
        for key in b.key.split(",")
    }
    return sorted(keys - QUIT)


@pytest.mark.parametrize(("size", "seed"), [((40, 12), 1), ((80, 24), 2), ((160, 50), 3)])
async def test_random_keys_never_crash_the_app(size: tuple[int, int], seed: int) -> None:
    keys = [*bound_keys(), *MOVES, *TYPED]
    assert {"l", "r", "p", "d", "question_mark", "ctrl+s"} <= set(keys)  # the table was read
    rng = random.Random(seed)
    services = FakeServices()  # canned jobs and results: every screen has rows to act on
    app = make_app(services=services)
    pressed: list[str] = []
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        for _ in range(80):
            key = rng.choice(keys)
            pressed.append(key)
            await pilot.press(key)
            await pilot.pause()
            assert app.is_running, f"stopped after {pressed}"
        await settle(pilot)
