"""The fleet screen: one section per host (state, host and GPU panels) over every host's jobs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static

from zbench.fleet.jobs_table import HEADERS, fleet_jobs_table
from zbench.fleet.stream import HostStatus
from zbench.telemetry.snapshot import Snapshot

from ..format import escape
from ..widgets.fleet_host import HostSection

# Each column's width, fixed, so a refresh that replaces the rows never leaves cells misaligned
# (the columns: ``fleet.jobs_table.HEADERS``).
WIDTHS = (14, 4, 10, 26, 22, 12, 50)


class FleetScreen(Screen[None]):
    """One section per host (state, host and GPU panels) above a table of every host's jobs."""

    DEFAULT_CSS = """
    FleetScreen #hosts { height: 1fr; }
    FleetScreen #fleet-jobs { height: auto; max-height: 14; border-top: solid $primary; }
    FleetScreen #jobs-errors { height: auto; color: $error; padding: 0 1; }
    """

    def __init__(self, hosts: Sequence[str]) -> None:
        super().__init__()
        self.hosts = list(hosts)

    def compose(self) -> ComposeResult:
        yield Header(icon="≡")
        with VerticalScroll(id="hosts"):
            for i, host in enumerate(self.hosts):
                yield HostSection(host, id=f"host-{i}")
        yield DataTable(id="fleet-jobs", cursor_type="row", zebra_stripes=True)
        yield Static(id="jobs-errors")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = f"{len(self.hosts)} hosts"
        self._columns(HEADERS)

    def _columns(self, headers: Sequence[str]) -> None:
        """Lay the jobs table's columns out (again: the rows go with them, ``show_jobs`` adds
        them back); the speed column's title is its speeds' unit, or Rate."""
        table = self.query_one("#fleet-jobs", DataTable)
        table.clear(columns=True)
        for label, width in zip(headers, WIDTHS, strict=True):
            table.add_column(label, width=width)

    def section(self, host: str) -> HostSection:
        return self.query_one(f"#host-{self.hosts.index(host)}", HostSection)

    def show_snapshot(self, host: str, snap: Snapshot) -> None:
        self.section(host).show(snap)

    def set_status(self, status: HostStatus, retry_left_s: float | None = None) -> None:
        self.section(status.host).set_status(status, retry_left_s)

    def show_jobs(self, rows: Sequence[Mapping[str, Any]], errors: Mapping[str, str]) -> None:
        table = self.query_one("#fleet-jobs", DataTable)
        headers, cells = fleet_jobs_table(rows)
        if [str(c.label) for c in table.ordered_columns] != list(headers):
            self._columns(headers)
        if [tuple(str(c) for c in table.get_row_at(i)) for i in range(table.row_count)] != cells:
            table.clear()
            for row in cells:
                table.add_row(*row, key=f"{row[0]}:{row[1]}")
        self.query_one("#jobs-errors", Static).update(
            "\n".join(f"jobs of {escape(h)}: {escape(why)}" for h, why in errors.items())
        )
