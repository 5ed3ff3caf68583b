"""The TUI's results table at 80 columns: what a row is and its speed in sight, as `zbench
results` fits it (the same short headers and drop order); the rest a sideways scroll away."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable

from tests.rows import job_row, run_config, run_row
from zbench.store import Store
from zbench.tui.screens.results import ResultsScreen
from zbench.tui.services import LocalServices

from .conftest import make_app
from .helpers import run_and_press, screen_lines, settle


def _in_view(table: DataTable[object]) -> list[str]:
    """The headers whose whole column lies inside the table's visible width."""
    room, used, shown = table.size.width - table.styles.scrollbar_size_vertical, 0, []
    for column in table.ordered_columns:
        used += column.get_render_width(table)
        if used > room:
            break
        shown.append(str(column.label))
    return shown


async def test_samples_per_second_is_in_sight_at_80_columns() -> None:
    """At 80 columns the table showed Model to Precision: the speed, the figure the table is
    for, was a sideways scroll away."""
    app = make_app()
    async with run_and_press(app, "r", size=(80, 24)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, ResultsScreen)
        table = app.screen.query_one(DataTable)
        shown = _in_view(table)
        assert shown[:4] == ["Model", "FW", "Mode", "GPUs"]
        assert "smp/s" in shown and "GPU util %" not in shown
        text = "\n".join(screen_lines(app))
        assert "4,398.0" in text and "columns to the right" in text
        # Every column is still there, to the right, with its full header.
        labels = [str(c.label) for c in table.ordered_columns]
        assert "Mem-ctrl util %" in labels and "CPU mem GiB" in labels
        # Sorting takes the column under the cursor, wherever the fit put it.
        await pilot.press(*["right"] * labels.index("smp/s"), "s")
        await settle(pilot)
        assert app.screen.sort_by == "Samples/s"
        column = table.get_column_at(labels.index("smp/s"))
        assert [str(c) for c in column] == [
            "61.0",
            "140.0",
            "890.0",
            "1,890.0",
            "2,010.0",
            "2,259.0",
            "2,710.0",
            "4,398.0",
        ]


async def test_a_setup_column_that_tells_runs_apart_stays_in_sight(tmp_path: Path) -> None:
    """Two runs that differ only in image size: the Image size column is kept in view at 80
    columns, ahead of the review's figures that give way."""
    db = tmp_path / "z.db"
    store = Store(db)
    for size, speed in ((224, 1000.0), (160, 1900.0)):
        config = run_config(image_size=size)
        [job] = store.add_jobs([job_row(config=config, state="done")])
        store.add_run(run_row(job_id=job, config=config, samples_per_s=speed))
    app = make_app(services=LocalServices(db))  # type: ignore[arg-type]
    async with run_and_press(app, "r", size=(80, 24)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(DataTable)
        shown = _in_view(table)
        setup = [h for h in shown if "mage" in h]
        assert setup, shown
        cells = [str(c) for c in table.get_column_at(shown.index(setup[0]))]
        assert sorted(cells) == ["160", "224"]


async def test_the_table_fits_again_when_the_terminal_narrows() -> None:
    app = make_app()
    async with run_and_press(app, "r", size=(200, 40)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(DataTable)
        assert "Samples/s" in _in_view(table)  # wide: the full headers, in the review's order
        await pilot.resize_terminal(80, 24)
        await settle(pilot)
        shown = _in_view(table)
        assert shown[:4] == ["Model", "FW", "Mode", "GPUs"] and "smp/s" in shown
