"""The host panel's cores fold onto full lines, and the dashboard counts those lines. Textual wraps
at spaces, so a 128-core host's run of cells went whole to a line of its own below its label: the
panel took a row more than the dashboard's layout counted (a 256-core host two more), and the jobs
table shrank below the rows the layout keeps for it."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.content import Content
from textual.widgets import Static

from zbench.telemetry.snapshot import HostSnapshot
from zbench.tui.screens.dashboard import MIN_JOBS_ROWS
from zbench.tui.widgets.host_panel import HostPanel, core_lines, cores_text, per_cell

from .conftest import make_app
from .helpers import settle
from .traces import eight_gpu, two_gpu


def _host(cores: int) -> HostSnapshot:
    # Every level, so runs of one style meet the folds in varied places.
    return HostSnapshot(cpu_pct=50.0, per_core_pct=tuple(float(i * 7 % 101) for i in range(cores)))


class _One(App[None]):
    def compose(self) -> ComposeResult:
        yield HostPanel(id="host")


@pytest.mark.parametrize("cores", [0, 8, 64, 106, 107, 128, 256])
async def test_the_panel_is_as_tall_as_full_height_says(cores: int) -> None:
    app = _One()
    async with app.run_test(size=(120, 30)) as pilot:
        panel = app.query_one(HostPanel)
        for width in (58, 80, 117, 120, 160):
            panel.styles.width = width
            panel.show(_host(cores), [50.0])
            await pilot.pause()
            await pilot.pause()
            assert panel.region.height == HostPanel.full_height(width, cores), (width, cores)
            # No cell is lost to the folds: the row holds its label and one cell per core.
            row = str(panel.query_one("#cores", Static).render()).replace("\n", "")
            assert len(row) == (len(f"{cores} cores ") + cores if cores else len("per-core n/a"))


def test_the_cells_fold_onto_full_lines_after_the_label() -> None:
    plain = Content.from_markup(cores_text(_host(20), room=8, used=3)).plain
    assert [len(line) for line in plain.split("\n")] == [5, 8, 7]  # 5 fill the label's line
    assert core_lines(20, 8, 3) == 3
    plain = Content.from_markup(cores_text(_host(20), room=8, used=8)).plain
    assert [len(line) for line in plain.split("\n")] == [0, 8, 8, 4]  # the label fills a line
    assert core_lines(20, 8, 8) == 4
    assert core_lines(5, 8, 3) == 1 and "\n" not in cores_text(_host(128))  # unfolded


@pytest.mark.parametrize("cores", [16, 128, 256])
async def test_the_dashboard_keeps_the_jobs_rows_with_a_many_core_host(cores: int) -> None:
    snaps = [
        dataclasses.replace(s, host=dataclasses.replace(s.host, per_core_pct=(50.0,) * cores))
        for s in two_gpu()
    ]
    for height in range(21, 27):  # where the full panels begin to fit
        app = make_app(snaps)
        async with app.run_test(size=(120, height)) as pilot:
            await settle(pilot)
            screen: Any = app.screen
            host = screen.query_one("#host").region.height
            if screen.has_class("-compact"):
                continue
            assert host == HostPanel.full_height(120, cores)
            assert screen.query_one("#jobs").region.height >= MIN_JOBS_ROWS, (cores, height)


@pytest.mark.parametrize("cores", [16, 64, 128, 256])
async def test_the_compact_host_line_shows_every_core_in_its_width(cores: int) -> None:
    """Eight GPUs at 80x24 take the compact rows; the host's one line of cells was cut with an
    ellipsis past 70 cores, and a busy core past there was out of sight. Now a cell shows the
    busiest of its neighbours where the cores do not fit, and the line says so."""
    busy = (5.0,) * (cores - 1) + (100.0,)  # only the last core is busy
    snaps = [
        dataclasses.replace(s, host=dataclasses.replace(s.host, per_core_pct=busy))
        for s in eight_gpu()
    ]
    app = make_app(snaps)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert app.screen.has_class("-compact")
        line = app.screen.query_one("#host #compact", Static)
        first = str(line.render()).split("\n")[0]
        assert len(first) <= line.size.width and "\u2026" not in first
        group = per_cell(cores, line.size.width - len("CPU  50% "))
        assert first.endswith(f" max of {group}") == (group > 1)
        assert first.count("\u2588") == 1  # the busy core's full cell, wherever it falls
        cells = first[len("CPU  50% ") :].removesuffix(f" max of {group}")
        assert len(cells) == -(-cores // group)


def test_a_cell_shows_the_fewest_cores_that_fit() -> None:
    assert per_cell(70, 70) == 1 and per_cell(0, 70) == 1
    assert per_cell(128, 73) == 2  # 64 cells and " max of 2" fill 73 columns
    assert per_cell(128, 72) == 3 and per_cell(140, 79) == 2 and per_cell(140, 78) == 3
    plain = Content.from_markup(cores_text(_host(10), group=4)).plain
    assert len(plain) == 3  # 4 + 4 + 2 cores
