"""Start-up order: the dashboard is painted first; the telemetry feed and the jobs poll start after."""

from __future__ import annotations

from collections.abc import Sequence

from zbench.jobs.api import JobInfo
from zbench.tui.app import ZbenchApp
from zbench.tui.feed import ListFeed
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
