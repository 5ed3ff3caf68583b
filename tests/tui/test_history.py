"""The history screen: per-GPU charts over a window, the per-link NVLink table, clocks and PCIe."""

from __future__ import annotations

from textual.widgets import DataTable, Static

from zbench.tui.screens.history import HistoryScreen
from zbench.tui.series import KEEP_S, Point, Series, column

from .conftest import make_app
from .helpers import press, run_and_press
from .traces import two_gpu


async def test_h_opens_history_and_keys_switch_gpu_window_and_links() -> None:
    snaps = two_gpu()
    app = make_app(snaps)
    async with run_and_press(app, "h", size=(160, 50)) as pilot:
        screen = app.screen
        assert isinstance(screen, HistoryScreen)
        assert screen.gpu == 0 and "GPU 0" in screen.sub_title and "last 1 min" in screen.sub_title
        assert len(app.telemetry.series[0].points) == len(snaps)
        clocks = str(screen.query_one("#clocks", Static).render())
        assert "PCIe" in clocks and "clock events: none" in clocks
        await press(pilot, "right_square_bracket")
        assert screen.gpu == 1 and "GPU 1" in screen.sub_title
        await press(pilot, "right_square_bracket")
        assert screen.gpu == 0
        await press(pilot, "w")
        assert "last 5 min" in screen.sub_title
        await press(pilot, "n")
        links = screen.query_one("#links", DataTable)
        assert links.display and links.row_count == len(
            snaps[-1].gpus[0].nvlink.per_link_tx_bytes_s
        )
        assert links.row_count > 0
        await press(pilot, "escape")
        assert not isinstance(app.screen, HistoryScreen)


def test_series_keeps_fifteen_minutes_and_windows_end_at_the_newest_point() -> None:
    s = Series()
    for i in range(2000):
        s.add(Point(float(i), float(i % 100), None, 50.0, 300.0, None, None))
    assert s.points[0].t == 1999 - KEEP_S
    assert [p.t for p in s.window(2)] == [1997.0, 1998.0, 1999.0]
    xs, ys = column(s.window(2), "util")
    assert xs == [-2.0, -1.0, 0.0] and ys == [97.0, 98.0, 99.0]
    assert column(s.window(2), "sm") == ([], [])  # never read: nothing drawn, never 0
