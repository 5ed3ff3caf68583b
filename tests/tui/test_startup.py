"""Start-up order: the dashboard is painted first; the telemetry feed and the jobs poll start after."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import pytest

from zbench.jobs.api import JobInfo
from zbench.telemetry.snapshot import Snapshot
from zbench.tui.app import ZbenchApp
from zbench.tui.feed import ListFeed
from zbench.tui.screens.dashboard import DashboardScreen
from zbench.tui.widgets.gpu_panel import GpuPanel

from .fakes import NOW, FakeServices
from .helpers import settle
from .traces import two_gpu


async def test_workers_start_after_the_first_frame() -> None:
    events: list[str] = []

    class Recording(FakeServices):
        def list_jobs(self) -> Sequence[JobInfo]:
            events.append("jobs")
            return super().list_jobs()

    class Recorded(ZbenchApp):
        def on_mount(self) -> None:  # runs before ZbenchApp.on_mount
            self.call_after_refresh(lambda: events.append("frame"))

    def open_feed() -> ListFeed:
        events.append("feed")
        return ListFeed(two_gpu(), notice="replaying a recorded trace")

    app = Recorded(Recording(), feed_factory=open_feed, interval=None, clock=lambda: NOW)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert events[0] == "frame" and sorted(events[1:]) == ["feed", "jobs"]
        # Once open, the feed fills the placeholder: a panel per GPU, the jobs in the table.
        assert [p.index for p in app.screen.query(GpuPanel)] == [0, 1]
        assert app.focused_job_id is not None


class EndlessFeed:
    """A new snapshot on every drain: the dashboard redraws on each tick until the app is gone."""

    notice = None

    def __init__(self) -> None:
        self.base, self.seq = two_gpu(10), 1000

    def drain(self) -> list[Snapshot]:
        self.seq += 1
        return [replace(self.base[self.seq % 10], seq=self.seq)]

    def close(self) -> None:
        pass


async def test_the_dashboard_exits_cleanly_while_telemetry_keeps_coming(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An exit prunes the screens (children first) while the app's timers still tick; a redraw
    then met GPU panels whose children were gone (NoMatches). Once the app is exiting, no tick or
    jobs poll reaches a screen."""
    drawn_while_exiting: list[str] = []
    app = ZbenchApp(FakeServices(), feed_factory=EndlessFeed, interval=0.01, clock=lambda: NOW)
    for name in ("refresh_telemetry", "refresh_jobs"):
        draw = getattr(DashboardScreen, name)

        def spy(screen: DashboardScreen, *args: Any, _draw: Any = draw, _name: str = name) -> Any:
            if not app.is_running:
                drawn_while_exiting.append(_name)
            return _draw(screen, *args)

        monkeypatch.setattr(DashboardScreen, name, spy)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert [p.index for p in app.screen.query(GpuPanel)] == [0, 1]
        await pilot.pause(0.1)
    assert drawn_while_exiting == []
