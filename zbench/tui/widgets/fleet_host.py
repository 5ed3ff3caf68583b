"""One machine of the fleet view: its state line (connecting, live, lost), host panel and GPU panels,
fed from the snapshots its stream delivers."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Grid, Vertical
from textual.widgets import Static

from zbench.fleet.stream import HostStatus
from zbench.telemetry.snapshot import Snapshot

from ..format import escape
from ..state import TelemetryState
from .gpu_panel import GpuPanel
from .host_panel import HostPanel


def status_text(status: HostStatus, retry_left_s: float | None = None) -> str:
    """The section's state line; ``retry_left_s`` counts down to the next attempt while lost."""
    if status.state == "live":
        return "[$success]live[/]"
    if status.state == "lost":
        left = status.retry_in_s if retry_left_s is None else retry_left_s
        why = f": {escape(status.reason)}" if status.reason else ""
        return f"[$error]lost {chr(0x2014)} reconnecting in {max(0, round(left or 0))} s[/]{why}"
    return "[$warning]connecting[/]"


class HostSection(Vertical):
    """Shows one host; :meth:`show` takes a snapshot, :meth:`set_status` its stream's state."""

    DEFAULT_CSS = """
    HostSection { height: auto; border: heavy $primary; padding: 0 1; margin-bottom: 1; }
    HostSection.-lost { border: heavy $error; }
    HostSection.-lost HostPanel, HostSection.-lost GpuPanel { opacity: 50%; }
    HostSection #status { height: 1; }
    HostSection #gpus { height: auto; grid-size: 2; grid-gutter: 0 1; grid-rows: 6; }
    """

    def __init__(self, host: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.host = host
        self.telemetry = TelemetryState()
        self.status = HostStatus(host, "connecting")

    def compose(self) -> ComposeResult:
        yield Static(status_text(self.status), id="status")
        yield HostPanel()
        yield Grid(id="gpus")

    def on_mount(self) -> None:
        self.border_title = escape(self.host)

    def set_status(self, status: HostStatus, retry_left_s: float | None = None) -> None:
        self.status = status
        self.set_class(status.state == "lost", "-lost")
        self.set_class(status.state == "live", "-live")
        self._draw_status(status, retry_left_s)

    def _draw_status(self, status: HostStatus, retry_left_s: float | None) -> None:
        found = self.query("#status")
        if not found:  # not composed yet: drawn once the children are there
            self.call_after_refresh(self._draw_status, status, retry_left_s)
        elif status is self.status:  # else a newer state has been drawn
            found.first(Static).update(status_text(status, retry_left_s))

    def show(self, snap: Snapshot) -> None:
        if self.telemetry.extend([snap]):
            self._draw(snap)

    def _draw(self, snap: Snapshot) -> None:
        # A stream's first snapshot can arrive before this section's children are composed; the
        # sample is already kept in ``telemetry``, so drawing simply waits for the next refresh.
        hosts = self.query(HostPanel)
        if not hosts:
            self.call_after_refresh(self._draw, snap)
            return
        if snap is not self.telemetry.latest:
            return  # a newer snapshot has been drawn or is queued
        state = self.telemetry
        hosts.first().show(snap.host, state.cpu)
        grid = self.query_one("#gpus", Grid)
        panels = {p.index: p for p in grid.query(GpuPanel)}
        new = [GpuPanel(g.index) for g in snap.gpus if g.index not in panels]
        if new:
            grid.mount_all(new)
            panels.update({p.index: p for p in new})
        if snap.notice:
            self.border_subtitle = escape(snap.notice)
        for gpu in snap.gpus:  # a panel mounted just now draws once composed (GpuPanel.show)
            panels[gpu.index].show(gpu, state.util.get(gpu.index, ()))
