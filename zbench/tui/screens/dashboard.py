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
from ..widgets.gpu_panel import GpuPanel
from ..widgets.host_panel import HostPanel
from ..widgets.jobs_table import JobsTable


class DashboardScreen(Screen[None]):
    """The dashboard: a panel per GPU (one line each when space is short), the host, the jobs."""

    # Breakpoints set -wide/-narrow and -tall/-short on the screen; the .tcss switches GPU panels to
    # one-line rows below 120x40, so 8 GPUs still fit an 80x24 terminal.
    HORIZONTAL_BREAKPOINTS: ClassVar[list[tuple[int, str]]] = [(0, "-narrow"), (120, "-wide")]
    VERTICAL_BREAKPOINTS: ClassVar[list[tuple[int, str]]] = [(0, "-short"), (40, "-tall")]

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "app.job_detail", "Job detail", id="dashboard.job_detail"),
        Binding("c", "app.cancel_job", "Cancel job", id="dashboard.cancel_job"),
        Binding("h", "app.history", "History", id="dashboard.history"),
    ]

    def compose(self) -> ComposeResult:
        yield Header(icon="≡")
        yield Static(id="notice")
        yield Container(id="gpus")
        yield HostPanel(id="host")
        yield JobsTable(id="jobs")
        yield Static(
            "[$text-muted]No jobs yet: [b]l[/b] launches one (or run `zbench suite quick`);"
            " jobs started elsewhere show up here.[/]",
            id="jobs-empty",
        )
        yield Footer()

    def on_mount(self) -> None:
        self.title = "zbench"
        self.sub_title = "dashboard"
        self._gpu_indices: tuple[int, ...] | None = None
        self.query_one(JobsTable).focus()

    def show_notice(self, notice: str | None) -> None:
        widget = self.query_one("#notice", Static)
        widget.update(f"[$warning]{notice}[/]" if notice else "")
        widget.display = bool(notice)

    async def refresh_telemetry(self, state: TelemetryState) -> None:
        snap = state.latest
        if snap is None:
            return
        indices = tuple(g.index for g in snap.gpus)
        box = self.query_one("#gpus", Container)
        if indices != self._gpu_indices:
            self._gpu_indices = indices
            await box.remove_children()
            box.set_class(len(indices) == 1, "-single")
            if indices:
                await box.mount_all(GpuPanel(i) for i in indices)
            else:
                await box.mount(Static("No GPUs to show: host only.", classes="empty"))
        for gpu in snap.gpus:
            panel = box.query_one(f"#gpu-{gpu.index}", GpuPanel)
            panel.show(gpu, state.util.get(gpu.index, ()))
        self.query_one(HostPanel).show(snap.host, state.cpu)

    def refresh_jobs(self, jobs: Sequence[JobInfo]) -> None:
        self.query_one(JobsTable).show(jobs)
        self.query_one("#jobs-empty", Static).display = not jobs

    async def on_data_table_row_selected(self, event: JobsTable.RowSelected) -> None:
        event.stop()
        await self.app.run_action("job_detail")

    @property
    def selected_job_id(self) -> int | None:
        return self.query_one(JobsTable).selected_job_id
