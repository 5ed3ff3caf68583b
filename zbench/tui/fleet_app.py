"""``zbench --hosts a,b``: several machines in one TUI, everything over ssh (nothing listens).

Each host's telemetry comes from a :class:`~zbench.fleet.stream.HostStream` (``zbench monitor --json``
on that host; a dropped host is lost and reconnects by itself); every host's jobs from ``zbench jobs
--json``, polled by a thread worker that never overlaps the last poll. Launching asks which host and
runs ``zbench run|demo|suite ... --detach`` there.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from textual import work
from textual.app import App
from textual.binding import Binding, BindingType
from textual.message import Message

from zbench.contract import kinds
from zbench.fleet.hosts import Transport
from zbench.fleet.stream import HostStatus, HostStream
from zbench.telemetry.snapshot import Snapshot
from zbench.textfit import counted

from .screens.fleet import FleetScreen
from .services import LaunchRequest

JOBS_INTERVAL_S = 3.0


class Stream(Protocol):
    """A host's telemetry stream as the fleet app drives it: start and stop."""

    def start(self) -> None: ...
    def stop(self) -> None: ...


StreamFactory = Callable[
    [str, Callable[[str, Snapshot], None], Callable[[HostStatus], None]], Stream
]


def launch_commands(request: LaunchRequest) -> list[list[str]]:
    """The ``zbench`` argv (one per job) that queues ``request`` on a host and returns at once."""
    if request.suite:
        return [["suite", request.suite, "--detach"]]
    limits = ["--timeout", f"{request.timeout_s:g}"] if request.timeout_s else []
    gpu_ids = ["--gpu-ids", ",".join(map(str, request.gpu_ids))] if request.gpu_ids else []
    out = []
    for config in request.configs:
        kind = kinds.of_config(config)
        chosen = gpu_ids if kind.gpu_ids_option else []
        out.append([kind.command, *config.to_argv(), *chosen, *limits, "--detach"])
    return out


class FleetApp(App[int]):
    """The fleet TUI: every host's telemetry and jobs over ssh, and launching jobs on them."""

    TITLE = "zbench fleet"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit", id="fleet.quit"),
        Binding("l", "launch", "Launch", id="fleet.launch"),
        Binding("ctrl+r", "refresh", "Refresh jobs", id="fleet.refresh"),
    ]

    @dataclass
    class SnapshotArrived(Message):
        host: str
        snapshot: Snapshot

    @dataclass
    class StatusChanged(Message):
        status: HostStatus

    @dataclass
    class JobsLoaded(Message):
        rows: list[dict[str, Any]]
        errors: dict[str, str] = field(default_factory=dict)

    @dataclass
    class Submitted(Message):
        text: str
        error: bool = False

    def __init__(
        self,
        hosts: Sequence[str],
        transport: Transport,
        *,
        stream_factory: StreamFactory | None = None,
        interval: float = 1.0,
        jobs_interval: float | None = JOBS_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``jobs_interval=None`` polls the jobs once (and on ctrl+r) only."""
        super().__init__()
        self.hosts = list(hosts)
        self.transport = transport
        self.interval = interval
        self.jobs_interval = jobs_interval
        self.clock = clock
        self.stream_factory = stream_factory or self._ssh_stream
        self.streams: list[Stream] = []
        self.states: dict[str, HostStatus] = {h: HostStatus(h, "connecting") for h in self.hosts}
        self._retry_at: dict[str, float] = {}
        self._polling = False
        self.launch_host: str | None = None
        self.fleet = FleetScreen(self.hosts)

    def _ssh_stream(
        self,
        host: str,
        on_snapshot: Callable[[str, Snapshot], None],
        on_status: Callable[[HostStatus], None],
    ) -> Stream:
        argv = self.transport.monitor_argv(host, self.interval)
        return HostStream(host, on_snapshot, on_status, self.interval, command=argv)

    @property
    def live(self) -> bool:
        """Whether the fleet screen is up and the app not exiting. Stream threads post up to the
        last moment, and an exit prunes the screens (children first) while this app still handles
        its queue: a snapshot drawn then met panels whose children were gone."""
        return self.is_running and self.fleet.is_attached

    def on_mount(self) -> None:
        self.push_screen(self.fleet)
        for host in self.hosts:
            stream = self.stream_factory(host, self._snapshot_from_thread, self._status_from_thread)
            self.streams.append(stream)
            stream.start()
        self.poll_jobs()
        if self.jobs_interval:
            self.set_interval(self.jobs_interval, self.poll_jobs)
        self.set_interval(1.0, self._count_down)

    def _snapshot_from_thread(self, host: str, snap: Snapshot) -> None:
        self.post_message(self.SnapshotArrived(host, snap))

    def _status_from_thread(self, status: HostStatus) -> None:
        self.post_message(self.StatusChanged(status))

    def on_unmount(self) -> None:
        for stream in self.streams:
            stream.stop()

    # --- telemetry ---------------------------------------------------------------------------

    def on_fleet_app_snapshot_arrived(self, message: SnapshotArrived) -> None:
        if self.live:
            self.fleet.show_snapshot(message.host, message.snapshot)

    def on_fleet_app_status_changed(self, message: StatusChanged) -> None:
        status = message.status
        self.states[status.host] = status
        if status.state == "lost" and status.retry_in_s is not None:
            self._retry_at[status.host] = self.clock() + status.retry_in_s
        else:
            self._retry_at.pop(status.host, None)
        if self.live:
            self.fleet.set_status(status)

    def _count_down(self) -> None:
        if not self.live:
            return
        now = self.clock()
        for host, at in self._retry_at.items():
            self.fleet.set_status(self.states[host], at - now)

    # --- jobs --------------------------------------------------------------------------------

    def poll_jobs(self) -> None:
        """Skip a tick while the last poll still runs (a slow host must not pile polls up)."""
        if not self._polling:
            self._polling = True
            self._load_jobs()

    @work(thread=True, group="fleet-jobs", exit_on_error=False)
    def _load_jobs(self) -> None:
        rows: list[dict[str, Any]] = []
        errors: dict[str, str] = {}
        try:
            with ThreadPoolExecutor(max_workers=max(1, len(self.hosts))) as pool:
                futures = {h: pool.submit(self.transport.jobs, h) for h in self.hosts}
                for host, future in futures.items():
                    try:
                        rows += future.result()
                    except Exception as exc:  # one host's failure is shown, the others still listed
                        errors[host] = str(exc) or type(exc).__name__
        finally:
            self.post_message(self.JobsLoaded(rows, errors))

    def on_fleet_app_jobs_loaded(self, message: JobsLoaded) -> None:
        self._polling = False
        if self.live:
            self.fleet.show_jobs(message.rows, message.errors)

    def action_refresh(self) -> None:
        self.poll_jobs()

    # --- launch ------------------------------------------------------------------------------

    def action_launch(self) -> None:
        from .screens.pick_host import PickHostScreen

        states = {h: s.state for h, s in self.states.items()}
        self.push_screen(PickHostScreen(self.hosts, states), self._picked)

    def _picked(self, host: str | None) -> None:
        if host is None:
            return
        from zbench.jobs.suites import SUITES  # the same zbench runs on every host

        from .screens.launch import LaunchScreen

        self.launch_host = host
        self.push_screen(LaunchScreen(list(SUITES)), self._launch)

    def _launch(self, request: LaunchRequest | None) -> None:
        if request is not None and self.launch_host is not None:
            self._submit(self.launch_host, launch_commands(request))

    @work(thread=True, group="fleet-submit", exit_on_error=False)
    def _submit(self, host: str, commands: list[list[str]]) -> None:
        done = []
        for argv in commands:
            try:
                done.append(self.transport.submit(host, argv))
            except Exception as exc:  # shown to the user; the job was not queued
                self.post_message(self.Submitted(f"launch on {host} failed: {exc}", error=True))
                return
        self.post_message(self.Submitted(f"{host}: queued {counted(len(done), 'job')}"))
        self.call_from_thread(self.poll_jobs)

    def on_fleet_app_submitted(self, message: Submitted) -> None:
        self.notify(message.text, severity="error" if message.error else "information")


def run(hosts_text: str, interval: float | None = None) -> int:
    """``zbench --hosts``: exit status 2 for a bad host list or config file, else the app's."""
    from zbench.fleet.gather import HostsError
    from zbench.fleet.hosts import SshTransport, resolve_hosts
    from zbench.settings import SettingsError, load_config, load_state, resolve_interval
    from zbench.tui.app import check_theme

    try:
        config = load_config()
        every = resolve_interval(interval, config, load_state())
        entries = resolve_hosts(hosts_text, config.hosts)
        check_theme(config)
    except (SettingsError, HostsError) as exc:
        print(f"zbench: {exc}", file=sys.stderr)
        return 2
    app = FleetApp([e.name for e in entries], SshTransport(entries), interval=every)
    if config.theme:
        app.theme = config.theme
    app.run()
    return app.return_code or 0
