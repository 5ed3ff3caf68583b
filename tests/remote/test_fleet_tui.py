"""The fleet TUI over real OpenSSH: two loopback hosts (``zb-a``, ``zb-b``, each its own
ZBENCH_HOME) streaming ``zbench monitor --json`` and listing their own jobs in one view."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable

import pytest
from sshkit import Sshd
from textual.pilot import Pilot
from textual.widgets import DataTable

from zbench.fleet.hosts import SshTransport
from zbench.jobs.remote import zbench_remote
from zbench.settings import HostEntry
from zbench.tui.fleet_app import FleetApp

pytestmark = pytest.mark.slow


def run_job_on(host: str) -> None:
    argv = ["run", "resnet50", "--device", "cpu", "--steps", "3", "--json"]
    proc = subprocess.run(zbench_remote(host, argv), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]


async def wait_for(pilot: Pilot[object], pred: Callable[[], bool], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        assert time.monotonic() < deadline, "timed out"
        await pilot.pause(0.2)


async def test_the_fleet_tui_shows_two_loopback_hosts_with_their_jobs(sshd: Sshd) -> None:
    run_job_on("zb-a")
    run_job_on("zb-b")
    run_job_on("zb-b")
    hosts = [HostEntry("zb-a"), HostEntry("zb-b")]
    app = FleetApp(["zb-a", "zb-b"], SshTransport(hosts), interval=0.5, jobs_interval=1.0)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(pilot, lambda: all(s.state == "live" for s in app.states.values()))
        for host in ("zb-a", "zb-b"):
            latest = app.fleet.section(host).telemetry.latest
            assert latest is not None and latest.host is not None
        table = app.fleet.query_one("#fleet-jobs", DataTable)
        await wait_for(pilot, lambda: table.row_count == 3)
        rows = sorted(
            tuple(str(c) for c in table.get_row_at(i)[:3]) for i in range(table.row_count)
        )
        assert rows == [("zb-a", "1", "done"), ("zb-b", "1", "done"), ("zb-b", "2", "done")]
