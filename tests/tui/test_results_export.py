"""Results: filter, sort by the cursor's column, export exactly the shown rows (keys and palette)."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input

from zbench.tui.screens.results import ExportScreen, ResultsScreen

from .conftest import make_app
from .helpers import press, settle


async def test_filter_sort_and_export_markdown(zbench_home: Path) -> None:
    app = make_app()
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await press(pilot, "r")
        assert isinstance(app.screen, ResultsScreen)
        await press(pilot, "slash", *"torch train", "enter")
        await press(pilot, *["right"] * 7, "s", "s")  # samples/s, then reversed
        await press(pilot, "m")
    lines = (zbench_home / "zbench-results.md").read_text().splitlines()
    assert lines == [
        "md|resnet50|torch|2|4398.0",
        "md|resnet50|torch|1|2259.0",
        "md|vgg16|torch|1|890.0",
        "md|unet2d|torch|1|140.0",
    ]


async def test_export_to_a_chosen_path_as_csv(zbench_home: Path) -> None:
    app = make_app()
    target = zbench_home / "out" / "r.csv"
    target.parent.mkdir()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "r", "slash", *"tf", "enter", "e")
        assert isinstance(app.screen, ExportScreen)
        await press(pilot, "enter", "down", "enter")  # Markdown -> CSV
        path = app.screen.query_one("#path", Input)
        path.value = str(target)
        await press(pilot, "ctrl+s")
        assert isinstance(app.screen, ResultsScreen)
    assert target.read_text().splitlines() == [
        "csv|resnet50|tf|1|1890.0",
        "csv|resnet50|tf|2|2010.0",
        "csv|fasterrcnn|tf|1|61.0",
    ]


async def test_export_from_the_command_palette(zbench_home: Path) -> None:
    app = make_app()
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await press(pilot, "r", "ctrl+p", *"export: json")
        await pilot.pause(0.3)
        await press(pilot, "enter")
    assert len((zbench_home / "zbench-results.json").read_text().splitlines()) == 8
