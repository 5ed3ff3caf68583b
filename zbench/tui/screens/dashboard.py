"""The dashboard: a panel per GPU, the host, and the jobs table."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Container
from textual.screen import Screen
from textual.widgets import Header, Static

if TYPE_CHECKING:
    from zbench.jobs.api import JobInfo  # the one job type

from ..state import TelemetryState
from ..widgets.footer import Footer
from ..widgets.gpu_panel import GpuPanel, panel_height
from ..widgets.host_panel import HostPanel
from ..widgets.jobs_table import JobsTable

# The least width of a GPU panel beside another (two fit 120 columns, each of its figure lines
# broken once at most): narrower, one panel above the other reads better than ever shorter lines.
MIN_PANEL_WIDTH = 58
HEADER = FOOTER = 1
MIN_JOBS_ROWS = 6  # the jobs table's header and five jobs, or its "no jobs yet" line


class DashboardScreen(Screen[None]):
    """The dashboard: a panel per GPU (one line each when space is short), the host, the jobs."""

    # Full panels where they fit with the host panel and room for the jobs, else one line per GPU
    # (-compact): 2 GPUs show in full on 120x30, and 8 GPUs still fit an 80x24 terminal.
    HORIZONTAL_BREAKPOINTS: ClassVar[list[tuple[int, str]]] = []
    VERTICAL_BREAKPOINTS: ClassVar[list[tuple[int, str]]] = []

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "app.job_detail", "Job detail", id="dashboard.job_detail"),
        Binding("c", "app.cancel_job", "Cancel job", id="dashboard.cancel_job"),
        Binding("h", "app.history", "History", id="dashboard.history"),
    ]

    _gpu_indices: tuple[int, ...] | None = None  # the GPUs the panels show
    _cores = 0  # the host's cores: their row takes more lines at a width where they do not fit

    def compose(self) -> ComposeResult:
        yield Header(icon="≡")
        yield Static(id="notice")
        yield Container(id="gpus")
        yield HostPanel(id="host")
        yield JobsTable(id="jobs")
        yield Static(
            "[$text-muted]No jobs yet: [b]l[/b] launches one; `zbench run` jobs show up here too.[/]",
            id="jobs-empty",
        )
        yield Footer()

    def on_mount(self) -> None:
        self.title = "zbench"
        self.sub_title = "dashboard"
        self.query_one(JobsTable).focus()

    def show_notice(self, notice: str | None) -> None:
        widget = self.query_one("#notice", Static)
        widget.update(f"[$warning]{notice}[/]" if notice else "")
        widget.display = bool(notice)
        self._fit()

    async def refresh_telemetry(self, state: TelemetryState) -> None:
        snap = state.latest
        if snap is None:
            return
        indices = tuple(g.index for g in snap.gpus)
        box = self.query_one("#gpus", Container)
        if len(snap.host.per_core_pct) != self._cores:
            self._cores = len(snap.host.per_core_pct)
            self._fit()
        if indices != self._gpu_indices:
            self._gpu_indices = indices
            await box.remove_children()
            self._fit()
            if indices:
                await box.mount_all(GpuPanel(i) for i in indices)
            else:
                await box.mount(Static("No GPUs to show: host only.", classes="empty"))
        for gpu in snap.gpus:
            panel = box.query_one(f"#gpu-{gpu.index}", GpuPanel)
            panel.show(gpu, state.util.get(gpu.index, ()))
        self.query_one(HostPanel).show(snap.host, state.cpu)

    def on_resize(self) -> None:
        self._fit()

    def _fit(self) -> None:
        """Choose the layout for this size and number of GPUs (the .tcss draws it)."""
        n = len(self._gpu_indices or ())
        width, height = self.size
        two = n > 1 and (width - 1) // 2 >= MIN_PANEL_WIDTH  # 1: the grid's gutter
        rows = -(-n // 2) * panel_height((width - 1) // 2) if two else n * panel_height(width)
        notice = 1 if self.query_one("#notice").display else 0
        host = HostPanel.full_height(width, self._cores)
        spare = height - (HEADER + notice + rows + host + MIN_JOBS_ROWS + FOOTER)
        self.set_class(width < MIN_PANEL_WIDTH or spare < 0, "-compact")
        self.query_one("#gpus").set_class(not two, "-one-column")

    def refresh_jobs(self, jobs: Sequence[JobInfo]) -> None:
        self.query_one(JobsTable).show(jobs)
        self.set_class(not jobs, "-no-jobs")  # the hint takes the table's room (zbench.tcss)

    async def on_data_table_row_selected(self, event: JobsTable.RowSelected) -> None:
        event.stop()
        await self.app.run_action("job_detail")

    @property
    def selected_job_id(self) -> int | None:
        return self.query_one(JobsTable).selected_job_id
