"""SVG snapshots of every screen at 80x24 and 160x50, fed by replayed traces (2 GPUs with NVLink,
and 8 GPUs derived from them: see traces.py). Regenerate with the command in tests/tui/README.md."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest
from textual.pilot import Pilot

from zbench.telemetry.snapshot import HostSnapshot, Snapshot

from .conftest import make_app
from .helpers import press, settle
from .traces import eight_gpu, two_gpu

SIZES = pytest.mark.parametrize("size", [(80, 24), (160, 50)], ids=["80x24", "160x50"])


def keys(*pressed: str) -> Callable[[Pilot[object]], Awaitable[None]]:
    async def run_before(pilot: Pilot[object]) -> None:
        await settle(pilot)
        if pressed:
            await press(pilot, *pressed)

    return run_before


class TestDashboard:
    @SIZES
    def test_two_gpus_nvlink(self, snap_compare, size) -> None:
        assert snap_compare(make_app(two_gpu()), terminal_size=size, run_before=keys())

    @SIZES
    def test_eight_gpus(self, snap_compare, size) -> None:
        assert snap_compare(make_app(eight_gpu()), terminal_size=size, run_before=keys())

    def test_no_gpu(self, snap_compare) -> None:
        notice = "no NVIDIA driver: host-only mode"
        host = HostSnapshot(
            cpu_pct=12.0,
            per_core_pct=(10.0, 14.0, 80.0, 3.0),
            ram_used_bytes=8 << 30,
            ram_total_bytes=32 << 30,
        )
        app = make_app([Snapshot(t=1.0, seq=1, host=host, notice=notice)], notice=notice)
        assert snap_compare(app, terminal_size=(80, 24), run_before=keys())


class TestLaunch:
    @SIZES
    def test_launch_dialog(self, snap_compare, size) -> None:
        assert snap_compare(make_app(), terminal_size=size, run_before=keys("l"))


class TestJobDetail:
    @SIZES
    def test_running_job(self, snap_compare, size) -> None:
        assert snap_compare(make_app(two_gpu()), terminal_size=size, run_before=keys("enter"))


class TestResults:
    @SIZES
    def test_results_table_and_charts(self, snap_compare, size) -> None:
        assert snap_compare(make_app(), terminal_size=size, run_before=keys("r"))


class TestHelp:
    @SIZES
    def test_help(self, snap_compare, size) -> None:
        assert snap_compare(make_app(), terminal_size=size, run_before=keys("question_mark"))


class TestProcesses:
    @SIZES
    def test_process_table(self, snap_compare, size) -> None:
        from .fakes import NOW, FakeServices
        from .traces import with_processes

        app = make_app(with_processes(two_gpu(), NOW), services=FakeServices(runners={41230: 3}))
        assert snap_compare(app, terminal_size=size, run_before=keys("p"))


class TestAscii:
    def test_dashboard_in_a_non_utf8_locale(self, snap_compare, monkeypatch) -> None:
        monkeypatch.setenv("ZBENCH_ASCII", "1")
        assert snap_compare(make_app(two_gpu()), terminal_size=(80, 24), run_before=keys())


class TestHistory:
    @SIZES
    def test_charts(self, snap_compare, size) -> None:
        assert snap_compare(make_app(two_gpu()), terminal_size=size, run_before=keys("h"))

    def test_nvlink_links(self, snap_compare) -> None:
        assert snap_compare(make_app(two_gpu()), terminal_size=(80, 24), run_before=keys("h", "n"))
