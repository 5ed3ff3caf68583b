"""One GPU over time: utilization and SM activity, memory, power and NVLink charts over a window
(1, 5 or 15 minutes), a per-link NVLink table, and its clock-event reasons and PCIe rates now."""

from __future__ import annotations

import time
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Grid
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static

from zbench.clocks import SLOWDOWNS
from zbench.glyphs import glyphs
from zbench.telemetry.snapshot import GpuSnapshot

from ..format import escape, pct, rate
from ..series import WINDOWS, Point, column
from ..state import TelemetryState
from ..widgets.gpu_panel import pcie_text
from ..widgets.ticks import RoundTicksPlot

REDRAW_S = 2.0  # charts redraw at most this often (plotext draws are the costly part)

# (chart id, title, [(field, label)], fixed 0-100 scale, scale of the values)
CHARTS = (
    ("util", "util / SM activity %", (("util", "util"), ("sm", "SM act")), True, 1.0),
    ("mem", "memory used %", (("mem_pct", "mem"),), True, 1.0),
    ("power", "power W", (("power_w", "W"),), False, 1.0),
    ("nvlink", "NVLink GB/s", (("nvl_tx", "TX"), ("nvl_rx", "RX")), False, 1e9),
)


def clocks_text(gpu: GpuSnapshot) -> str:
    """Clock-event reasons (slow-downs in the warning colour) and PCIe rates, on one line."""
    reasons = gpu.throttle_reasons
    if isinstance(reasons, tuple):
        slow = [r for r in reasons if r in SLOWDOWNS]
        calm = [r for r in reasons if r not in SLOWDOWNS]
        parts = [f"[$warning]{r}[/]" for r in slow] + calm
        clocks = "clock events: " + (", ".join(parts) if parts else "none")
    else:
        clocks = "clock events: n/a"
    return f"{clocks}  {pcie_text(gpu) or 'PCIe n/a'}"


def link_rows(gpu: GpuSnapshot) -> list[tuple[str, str, str]]:
    """(link, TX, RX) per NVLink, with the share of one link's capacity where it is known."""
    nv = gpu.nvlink
    cap = nv.link_capacity_bytes_s

    def cell(v: object) -> str:
        if isinstance(v, int | float) and isinstance(cap, int | float) and cap:
            return f"{rate(v)} ({pct(100 * v / cap)})"
        return rate(v)

    rx = list(nv.per_link_rx_bytes_s)
    return [
        (str(i), cell(tx), cell(rx[i] if i < len(rx) else None))
        for i, tx in enumerate(nv.per_link_tx_bytes_s)
    ]


class HistoryScreen(Screen[None]):
    """One GPU over a window: utilization and SM, memory, power and NVLink charts, and clocks."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "app.pop_screen", "Back", id="history.back"),
        Binding("left_square_bracket", "gpu(-1)", "Prev GPU", id="history.prev", key_display="["),
        Binding("right_square_bracket", "gpu(1)", "Next GPU", id="history.next", key_display="]"),
        Binding("w", "window", "Window", id="history.window"),
        Binding("n", "links", "NVLink links", id="history.links"),
    ]

    DEFAULT_CSS = """
    HistoryScreen #charts { grid-size: 2 2; height: 1fr; }
    HistoryScreen #links { height: 1fr; display: none; }
    HistoryScreen.-links #links { display: block; }
    HistoryScreen.-links #charts { display: none; }
    HistoryScreen #clocks { height: auto; padding: 0 1; }
    """

    def __init__(self, gpu: int | None = None, window: int = 0) -> None:
        super().__init__()
        self.gpu = gpu
        self.window = window % len(WINDOWS)
        self._drawn = 0.0

    def compose(self) -> ComposeResult:
        yield Header(icon="≡")
        with Grid(id="charts"):
            for chart_id, *_ in CHARTS:
                yield RoundTicksPlot(id=f"chart-{chart_id}")
        yield DataTable(id="links", cursor_type="none", zebra_stripes=True)
        yield Static(id="clocks")
        yield Footer()

    def on_mount(self) -> None:
        self.title = "zbench"
        self.query_one("#links", DataTable).add_columns("link", "TX", "RX")
        self.redraw()

    def _gpus(self, state: TelemetryState) -> list[int]:
        return sorted(state.series)

    def action_gpu(self, step: int) -> None:
        gpus = self._gpus(self.app.telemetry)  # type: ignore[attr-defined]
        if gpus:
            at = gpus.index(self.gpu) if self.gpu in gpus else 0
            self.gpu = gpus[(at + step) % len(gpus)]
        self.redraw()

    def action_window(self) -> None:
        self.window = (self.window + 1) % len(WINDOWS)
        self.redraw()

    def action_links(self) -> None:
        self.set_class(not self.has_class("-links"), "-links")
        self.redraw()

    async def refresh_telemetry(self, state: TelemetryState) -> None:
        if time.monotonic() - self._drawn >= REDRAW_S:
            self.redraw()

    def redraw(self) -> None:
        self._drawn = time.monotonic()
        state: TelemetryState = self.app.telemetry  # type: ignore[attr-defined]
        gpus = self._gpus(state)
        if self.gpu not in gpus:
            self.gpu = gpus[0] if gpus else None
        seconds, label = WINDOWS[self.window]
        latest = state.latest
        gpu = next((g for g in latest.gpus if g.index == self.gpu), None) if latest else None
        name = f"GPU {self.gpu} {escape(gpu.name)}" if gpu else "no GPU"
        self.sub_title = f"history {glyphs().sep} {name} {glyphs().sep} last {label}"
        clocks = self.query_one("#clocks", Static)
        if gpu is None:
            clocks.update("[$text-muted]No GPU history yet: host only, or no sample so far.[/]")
        else:
            clocks.update(clocks_text(gpu))
        if self.has_class("-links"):
            self._links(gpu)
            return
        points = state.series[self.gpu].window(seconds) if self.gpu in state.series else []
        for chart_id, title, fields, percent, scale in CHARTS:
            self._chart(chart_id, title, fields, percent, scale, points, seconds)

    def _links(self, gpu: GpuSnapshot | None) -> None:
        table = self.query_one("#links", DataTable)
        table.clear()
        rows = link_rows(gpu) if gpu is not None else []
        for row in rows:
            table.add_row(*row)
        if not rows:
            table.add_row("-", "no NVLink on this GPU", "")

    def _chart(
        self,
        chart_id: str,
        title: str,
        fields: tuple[tuple[str, str], ...],
        percent: bool,
        scale: float,
        points: list[Point],
        seconds: float,
    ) -> None:
        widget = self.query_one(f"#chart-{chart_id}", RoundTicksPlot)
        plt = widget.plt
        plt.clear_data()
        plt.clear_figure()
        plt.title(title)
        plt.xlim(-seconds, 0)
        if percent:
            plt.ylim(0, 100)
        drawn: list[float] = []
        for field, name in fields:
            xs, ys = column(points, field)
            if xs:
                scaled = [y / scale for y in ys]
                plt.plot(xs, scaled, label=name, marker="braille")
                drawn += scaled
        widget.round_y((0.0, 100.0) if percent else drawn)  # plotext's own: 16.7, 33.3 ... (no 50)
        widget.refresh()
