"""Every key, per screen, read from the bindings themselves (so it cannot go stale)."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Footer, Label

from ..keys import APP_BINDINGS


def sections() -> list[tuple[str, list[BindingType]]]:
    """Each screen's key bindings, named by where they apply, for the help table."""
    from .confirm import ConfirmScreen
    from .dashboard import DashboardScreen
    from .history import HistoryScreen
    from .job_detail import JobDetailScreen
    from .launch import LaunchScreen
    from .processes import ProcessesScreen
    from .results import ExportScreen, ResultsScreen

    return [
        ("everywhere", [*APP_BINDINGS, Binding("ctrl+p", "command_palette", "Commands")]),
        ("dashboard", DashboardScreen.BINDINGS),
        ("job detail", JobDetailScreen.BINDINGS),
        ("processes", ProcessesScreen.BINDINGS),
        ("history", HistoryScreen.BINDINGS),
        ("results", ResultsScreen.BINDINGS),
        ("export dialog", ExportScreen.BINDINGS),
        ("launch dialog", LaunchScreen.BINDINGS),
        ("confirm", ConfirmScreen.BINDINGS),
    ]


# The less common figures on the dashboard, the process table and the job detail.
FIGURES: tuple[tuple[str, str], ...] = (
    ("util", "% of time any kernel ran on the GPU (NVML): 100% can still mean one small kernel"),
    ("ctl %", "% of time the memory controller was busy reading or writing GPU memory"),
    ("SM act", "share of the SMs busy, averaged over time (GPM, Hopper and newer): the real load"),
    ("tensor", "share of time the tensor cores were busy (GPM): high for FP16/BF16/TF32 matmuls"),
    (
        "util hint",
        "util high but SM act low: kernels run, but few SMs work (small batches, "
        "launch-bound or waiting on data): try a larger batch or CUDA graphs",
    ),
    ("NVLink", "bytes/s over all links, and the share of their capacity"),
    ("PCIe", "host<->GPU bytes/s (TX from the GPU, RX to it)"),
    (
        "bottleneck",
        "job detail: what limited the job in its measured window (input-, "
        "communication-, memory-bound, throttled or GPU-bound) and the evidence",
    ),
    (
        "throttle",
        "why clocks are held down, on the GPU panel's bottom border with the util hint: "
        "sw_power_cap, hw_slowdown, thermal ... (idle is fine)",
    ),
    ("job #", "in the process table: the zbench job a GPU process belongs to"),
)


class KeysTable(DataTable[str]):
    """Where, key, does: "does" wrapped to the table's width (a figure's meaning is a sentence,
    and one line wide it was cut off at any screen size), filled again when the width changes."""

    filled_width = 0

    def on_resize(self) -> None:
        if self.size.width == self.filled_width:
            return  # only taller or shorter: the rows stand, and the cursor where it is
        self.filled_width = self.size.width
        rows = [
            (where, b.key_display or b.key.replace("question_mark", "?"), b.description)
            for where, bindings in sections()
            for b in bindings
            if isinstance(b, Binding)
        ]
        rows += [("figures", name, meaning) for name, meaning in FIGURES]
        widths = [max(len(row[i]) for row in [("where", "key", "does"), *rows]) for i in (0, 1)]
        room = self.size.width - self.styles.scrollbar_size_vertical - 2 * 3 * self.cell_padding
        self.clear(columns=True)
        self.add_column("where", width=widths[0])
        self.add_column("key", width=widths[1])
        self.add_column("does", width=max(20, room - sum(widths)))
        for row in rows:
            self.add_row(*row, height=None)


class HelpScreen(ModalScreen[None]):
    """Every key per screen and what it does, and what the figures on screen mean."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "dismiss", "Close", id="help.close")
    ]

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label("Keys (ctrl+p opens the command palette; tab moves between fields)")
            yield KeysTable(id="keys", cursor_type="row", zebra_stripes=True)
        yield Footer()  # the dialog's keys: the screen's below do nothing while it is open

    def on_mount(self) -> None:
        self.query_one(DataTable).focus()

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(result)
