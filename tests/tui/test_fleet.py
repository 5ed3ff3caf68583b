"""The fleet view (``zbench --hosts``): two hosts streaming ``zbench monitor --json`` (a local
``--replay`` subprocess per host stands in for ssh), a dropped host shown lost then live again, every
host's jobs with their host, launching on a chosen host, and one SVG snapshot."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Static

from zbench.fleet.gather import HostsError
from zbench.fleet.hosts import resolve_hosts
from zbench.fleet.stream import HostStatus, HostStream
from zbench.settings import HostEntry, SettingsError, parse_hosts_table
from zbench.tui.fleet_app import FleetApp, launch_commands
from zbench.tui.screens.fleet import FleetScreen
from zbench.tui.screens.launch import LaunchScreen
from zbench.tui.screens.pick_host import PickHostScreen
from zbench.tui.widgets.gpu_panel import GpuPanel

from .helpers import press, screen_lines, settle
from .traces import FIXTURES, two_gpu

ROOT = Path(__file__).resolve().parents[2]
JOBS = {
    "alpha": [
        {
            "id": 1,
            "state": "done",
            "workload": "resnet50",
            "framework": "torch",
            "mode": "train",
            "samples_per_s": 2311.5,
            "started": None,
        }
    ],
    "beta": [
        {
            "id": 1,
            "state": "running",
            "workload": "vgg16",
            "framework": "tf",
            "mode": "infer",
            "samples_per_s": None,
            "started": None,
        },
        {
            "id": 2,
            "state": "queued",
            "workload": "unet2d",
            "framework": "torch",
            "mode": "train",
            "samples_per_s": None,
            "started": None,
        },
    ],
}


class FakeTransport:
    """Canned job lists; records launches; ``failing`` hosts do not answer."""

    def __init__(self) -> None:
        self.failing: set[str] = set()
        self.submitted: list[tuple[str, list[str]]] = []

    def monitor_argv(self, host: str, interval: float) -> list[str]:
        raise AssertionError("the tests inject their streams")

    def jobs(self, host: str) -> list[dict[str, Any]]:
        if host in self.failing:
            raise RuntimeError("ssh: connect to host beta port 22: Connection refused")
        return [dict(r, host=host) for r in JOBS.get(host, [])]

    def submit(self, host: str, args: Sequence[str]) -> str:
        self.submitted.append((host, list(args)))
        return '{"job_id": 3}'


def replay_streams(streams: dict[str, HostStream]) -> Callable[..., HostStream]:
    """Each host: ``python -m zbench monitor --json --replay TRACE``, parsed by the real stream."""
    trace = FIXTURES / "synthetic.jsonl"

    def factory(host: str, on_snapshot: Any, on_status: Any) -> HostStream:
        argv = [sys.executable, "-m", "zbench", "monitor", "--json", "--interval", "0.2"]
        argv += ["--replay", str(trace)]
        streams[host] = HostStream(host, on_snapshot, on_status, 0.2, command=argv, backoff=(0.5,))
        return streams[host]

    return factory


class CannedStream:
    """Live at once with the last snapshots of the 2-GPU trace (deterministic, for the snapshot)."""

    def __init__(self, host: str, on_snapshot: Any, on_status: Any) -> None:
        self.host, self.on_snapshot, self.on_status = host, on_snapshot, on_status

    def start(self) -> None:
        self.on_status(HostStatus(self.host, "live"))
        for snap in two_gpu(10):
            self.on_snapshot(self.host, snap)

    def stop(self) -> None:
        pass


async def wait_for(pilot: Pilot[object], pred: Callable[[], bool], timeout: float = 60) -> None:
    # Generous: the fake hosts are subprocesses, slow to start on a loaded 2-core machine.
    deadline = time.monotonic() + timeout
    while not pred():
        assert time.monotonic() < deadline, "timed out"
        await pilot.pause(0.1)


def status_of(app: FleetApp, host: str) -> str:
    return str(app.fleet.section(host).query_one("#status", Static).render())


def job_rows(app: FleetApp) -> list[tuple[str, ...]]:
    table = app.fleet.query_one("#fleet-jobs", DataTable)
    return [tuple(str(c) for c in table.get_row_at(i)) for i in range(table.row_count)]


@pytest.fixture
def importable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(ROOT))


async def test_two_hosts_stream_and_a_dropped_one_is_lost_then_live_again(importable: None) -> None:
    streams: dict[str, HostStream] = {}
    app = FleetApp(
        ["alpha", "beta"],
        FakeTransport(),
        stream_factory=replay_streams(streams),
        jobs_interval=None,
    )
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(pilot, lambda: all(s.state == "live" for s in app.states.values()))
        await wait_for(pilot, lambda: len(app.fleet.section("beta").query(GpuPanel)) == 2)
        for host in ("alpha", "beta"):
            section = app.fleet.section(host)
            assert status_of(app, host) == "live" and not section.has_class("-lost")
            assert section.telemetry.latest is not None
            assert [p.index for p in section.query(GpuPanel)] == [0, 1]
        proc = streams["beta"].proc
        assert proc is not None
        proc.kill()  # beta's connection drops
        await wait_for(pilot, lambda: app.states["beta"].state == "lost")
        assert "lost" in status_of(app, "beta") and "reconnecting in" in status_of(app, "beta")
        assert app.fleet.section("beta").has_class("-lost")
        assert app.states["alpha"].state == "live"
        await wait_for(pilot, lambda: app.states["beta"].state == "live")  # by itself
        assert status_of(app, "beta") == "live"
        assert not app.fleet.section("beta").has_class("-lost")


async def test_every_hosts_jobs_in_one_table_and_a_host_that_fails_is_named() -> None:
    transport = FakeTransport()
    app = FleetApp(["alpha", "beta"], transport, stream_factory=CannedStream, jobs_interval=None)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        rows = job_rows(app)
        assert [(r[0], r[1], r[2]) for r in rows] == [
            ("alpha", "1", "done"),
            ("beta", "1", "running"),
            ("beta", "2", "queued"),
        ]
        assert rows[0][3] == "resnet50 torch train" and rows[0][4] == "2,311.5"
        transport.failing.add("beta")
        await press(pilot, "ctrl+r")
        assert [r[0] for r in job_rows(app)] == ["alpha"]
        errors = str(app.fleet.query_one("#jobs-errors", Static).render())
        assert "jobs of beta: ssh: connect to host beta" in errors


async def test_polls_never_overlap() -> None:
    release = threading.Event()
    calls: list[str] = []

    class Slow(FakeTransport):
        def jobs(self, host: str) -> list[dict[str, Any]]:
            calls.append(host)
            release.wait(10)
            return []

    app = FleetApp(["alpha"], Slow(), stream_factory=CannedStream, jobs_interval=None)
    async with app.run_test() as pilot:
        await pilot.pause(0.2)
        app.poll_jobs()
        app.poll_jobs()
        await pilot.pause(0.2)
        assert calls == ["alpha"]
        release.set()
        await settle(pilot)
        app.poll_jobs()
        await settle(pilot)
        assert calls == ["alpha", "alpha"]


async def test_launch_asks_which_host_and_queues_there_detached() -> None:
    transport = FakeTransport()
    app = FleetApp(["alpha", "beta"], transport, stream_factory=CannedStream, jobs_interval=None)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await press(pilot, "l")
        assert isinstance(app.screen, PickHostScreen)
        await press(pilot, "down", "enter")
        assert isinstance(app.screen, LaunchScreen)
        await press(pilot, "ctrl+s")  # resnet50 is preselected
        assert isinstance(app.screen, FleetScreen)
    [(host, argv)] = transport.submitted
    assert host == "beta"
    assert argv[:2] == ["run", "resnet50"] and argv[-1] == "--detach"
    assert "--framework" in argv


def test_launch_commands_for_a_suite_and_gpu_ids() -> None:
    from zbench.contract.config import RunConfig
    from zbench.tui.services import LaunchRequest

    assert launch_commands(LaunchRequest(suite="quick")) == [["suite", "quick", "--detach"]]
    request = LaunchRequest(configs=(RunConfig(workload="vgg16"),), gpu_ids=(2, 3), timeout_s=60)
    [argv] = launch_commands(request)
    assert argv[:2] == ["run", "vgg16"]
    assert argv[-5:] == ["--gpu-ids", "2,3", "--timeout", "60", "--detach"]


def test_hosts_resolve_against_the_config_table() -> None:
    table = parse_hosts_table({"gpu1": {}, "gpu2": "lab2", "gpu3": {"options": "-p 2222"}}, "cfg")
    assert table == (
        HostEntry("gpu1"),
        HostEntry("gpu2", "lab2"),
        HostEntry("gpu3", None, "-p 2222"),
    )
    assert resolve_hosts("gpu2,other", table) == [HostEntry("gpu2", "lab2"), HostEntry("other")]
    assert [h.name for h in resolve_hosts("all", table)] == ["gpu1", "gpu2", "gpu3"]
    with pytest.raises(HostsError, match=r"no \[hosts\] table"):
        resolve_hosts("all", ())
    with pytest.raises(SettingsError, match=r"unknown key \[hosts\] gpu1\.port"):
        parse_hosts_table({"gpu1": {"port": 22}}, "cfg")


def test_ssh_options_of_a_host_go_to_its_ssh_command() -> None:
    from zbench.fleet.hosts import SshTransport

    argv = SshTransport([HostEntry("gpu3", "me@10.0.0.3", "-p 2222")]).argv("gpu3", ["jobs"])
    assert argv[0] == "ssh" and argv[1:3] == ["-p", "2222"]
    assert "me@10.0.0.3" in argv and argv[-1].endswith("-m zbench jobs")


def test_a_bad_hosts_option_exits_2() -> None:
    from typer.testing import CliRunner

    from zbench.cli import app

    out = CliRunner().invoke(app, ["--hosts", "a,,b"])
    assert out.exit_code == 2 and "--hosts wants HOST[:PORT],HOST" in out.stderr


class TestFleetSnapshot:
    def test_two_replayed_hosts(self, snap_compare) -> None:
        app = FleetApp(
            ["alpha", "beta"], FakeTransport(), stream_factory=CannedStream, jobs_interval=None
        )

        async def run_before(pilot: Pilot[object]) -> None:
            await settle(pilot)
            await pilot.pause(0.2)
            await settle(pilot)

        assert snap_compare(app, terminal_size=(160, 50), run_before=run_before)


def test_status_line_counts_down() -> None:
    from zbench.tui.widgets.fleet_host import status_text

    lost = HostStatus("b", "lost", "ssh: Connection reset", 4.0)
    assert "reconnecting in 4 s" in status_text(lost)
    assert "reconnecting in 1 s" in status_text(lost, 1.2)
    assert "Connection reset" in status_text(lost)


async def test_a_snapshot_before_the_section_is_composed_is_drawn_once_it_is() -> None:
    """A host's stream can answer before its section's children exist; the first snapshot and
    state are kept and drawn on the next refresh instead of failing the whole app."""
    from textual.app import App

    from zbench.tui.widgets.fleet_host import HostSection
    from zbench.tui.widgets.host_panel import HostPanel

    app: App[None] = App()
    async with app.run_test() as pilot:
        section = HostSection("early")
        mounting = app.screen.mount(section)
        assert not section.query(HostPanel)  # children not composed yet
        section.set_status(HostStatus("early", "live"))
        snaps = two_gpu(2)
        for snap in snaps:
            section.show(snap)
        await mounting
        await wait_for(pilot, lambda: len(section.query(GpuPanel)) == 2)
        await settle(pilot)
        assert section.telemetry.latest is snaps[-1]
        assert "live" in str(section.query_one("#status", Static).render())


async def test_q_ends_the_fleet_view_and_zbench_with_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """`q` quits the fleet app (exit 0), and `zbench --hosts` then returns instead of opening the
    local dashboard (issue 28, case 13)."""
    from typer.testing import CliRunner

    import zbench.tui.app
    from zbench.cli import app as cli_app
    from zbench.tui import fleet_app

    app = FleetApp(["alpha"], FakeTransport(), stream_factory=CannedStream, jobs_interval=None)
    async with app.run_test() as pilot:
        await settle(pilot)
        await press(pilot, "q")
        assert app._exit  # the app is on its way out
    assert (app.return_code or 0) == 0

    opened: list[str] = []
    monkeypatch.setattr(fleet_app, "run", lambda hosts, interval: 0)  # the user pressed q
    monkeypatch.setattr(zbench.tui.app, "run_app", lambda **_: opened.append("dashboard") or 0)
    out = CliRunner().invoke(cli_app, ["--hosts", "alpha"])
    assert out.exit_code == 0 and opened == []


async def test_a_snapshot_before_the_host_panel_is_composed_is_drawn_after() -> None:
    """A host's first snapshot could reach its panel between mounting and composing (a loaded
    machine): the fleet view crashed with NoMatches('#compact')."""
    from textual.app import App

    from zbench.telemetry.snapshot import HostSnapshot
    from zbench.tui.widgets.host_panel import HostPanel

    class One(App[None]):
        pass

    app = One()
    async with app.run_test(size=(100, 20)) as pilot:
        panel = HostPanel()
        mounting = app.screen.mount(panel)  # not awaited: no children yet
        assert not panel.query("#compact")
        panel.show(HostSnapshot(cpu_pct=42.0, per_core_pct=(40.0, 44.0)), [42.0])
        await mounting
        # Drawn after the next refresh (call_after_refresh): one pause was not always enough on a
        # loaded machine; a bounded wait still fails if it is never drawn.
        for _ in range(100):
            await pilot.pause(0.02)
            if "42" in str(panel.query_one("#cpu", Static).render()):
                break
        assert "42" in str(panel.query_one("#cpu", Static).render())


class FloodStream:
    """Live at once, then a new snapshot as fast as the thread can post, until stopped: the app
    exits while snapshots keep arriving, as a real stream's thread can post up to the last moment."""

    def __init__(self, host: str, on_snapshot: Any, on_status: Any) -> None:
        self.host, self.on_snapshot, self.on_status = host, on_snapshot, on_status
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._flood, daemon=True)

    def start(self) -> None:
        self.on_status(HostStatus(self.host, "live"))
        self.thread.start()

    def _flood(self) -> None:
        base = two_gpu(10)
        seq = 1000
        while not self.stopped.is_set():
            seq += 1
            self.on_snapshot(self.host, replace(base[seq % 10], seq=seq))
            time.sleep(0.0002)

    def stop(self) -> None:
        self.stopped.set()


async def test_snapshots_arriving_while_the_app_exits_are_dropped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The screens are pruned (children first) while the app still handles its queue; a snapshot
    that reached a GPU panel whose children were already gone failed the exit with
    NoMatches('#compact'). Once the app is exiting, no snapshot or state reaches the screen."""
    drawn_while_exiting: list[str] = []
    app = FleetApp(
        ["alpha", "beta"], FakeTransport(), stream_factory=FloodStream, jobs_interval=None
    )
    for name in ("show_snapshot", "set_status"):
        draw = getattr(FleetScreen, name)

        def spy(screen: FleetScreen, *args: Any, _draw: Any = draw, _name: str = name) -> None:
            if not app.is_running:
                drawn_while_exiting.append(_name)
            _draw(screen, *args)

        monkeypatch.setattr(FleetScreen, name, spy)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(pilot, lambda: len(app.fleet.section("beta").query(GpuPanel)) == 2)
        await pilot.pause(0.05)
    assert drawn_while_exiting == []


async def test_the_fleet_jobs_speed_says_its_unit_as_zbench_jobs_does() -> None:
    """A demo's board-steps/s on one host sat under "Samples/s" beside another's samples/s: the
    column is Rate and each cell says its unit (the same table as `zbench jobs --hosts`)."""
    from tests.rows import SNAKE_ON_BETA, fleet_row
    from zbench.fleet.jobs_table import fleet_jobs_table

    rows = [
        fleet_row("alpha", 1, precision="bf16", samples_per_s=2311.5),
        fleet_row("beta", 4, **SNAKE_ON_BETA, state="running", samples_per_s=5000.0),
    ]
    headers, cells = fleet_jobs_table(rows)
    assert headers[4] == "Rate"
    assert [c[3:5] for c in cells] == [
        ("resnet50 torch train bf16", "2,311.5 samples/s"),
        ("snake demo ppo", "5,000.0 board-steps/s"),
    ]
    assert fleet_jobs_table(rows[1:])[0][4] == "Board-steps/s"
    app = FleetApp(["alpha"], FakeTransport(), stream_factory=CannedStream, jobs_interval=None)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        app.fleet.show_jobs(rows, {})
        await settle(pilot)
        table = app.fleet.query_one("#fleet-jobs", DataTable)
        assert [str(c.label) for c in table.ordered_columns][4] == "Rate"
        assert job_rows(app)[1][4] == "5,000.0 board-steps/s"
        screen = "\n".join(screen_lines(app))
        assert "Rate" in screen and "Samples/s" not in screen  # drawn, not only labelled
