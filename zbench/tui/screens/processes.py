"""The GPU processes: who holds which GPU, with what, since when; sort, filter, and signal one.

Columns come from ``telemetry.tables.PROCESS_COLUMNS`` (the same table as ``zbench monitor``)
and are chosen by ``textfit`` for the screen's width, so an 80-column terminal drops whole columns
instead of squeezing every cell. Rows are keyed ``GPU:PID`` and updated cell by cell.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Input, Static

from zbench.telemetry.snapshot import GpuProcess
from zbench.telemetry.tables import PROCESS_COLUMNS, process_rows
from zbench.textfit import fit

from ..state import TelemetryState


def _num(value: object) -> float:
    return float(value) if isinstance(value, int | float) else -1.0


# (name, key of a row (gpu, process) that sorts the most interesting first)
SORTS: tuple[tuple[str, Callable[[int, GpuProcess], Any]], ...] = (
    ("GPU memory", lambda g, p: (-_num(p.used_memory_bytes), g, p.pid)),
    ("SM %", lambda g, p: (-_num(p.sm_util), g, p.pid)),
    ("CPU %", lambda g, p: (-_num(p.cpu_pct), g, p.pid)),
    ("host memory", lambda g, p: (-_num(p.host_mem_bytes), g, p.pid)),
    ("elapsed", lambda g, p: (_num(p.started) if _num(p.started) >= 0 else float("inf"), g)),
    ("GPU, PID", lambda g, p: (g, p.pid)),
)


@dataclass(frozen=True)
class ProcRow:
    """One row of the processes table: its key, GPU, process and cells."""

    key: str
    gpu: int
    proc: GpuProcess
    cells: tuple[str, ...]


def matches(row: ProcRow, needle: str) -> bool:
    """Case-insensitive substring match over every shown cell (user, command, PID, job, ...)."""
    if not needle:
        return True
    needle = needle.lower()
    return any(needle in c.lower() for c in row.cells)


class ProcessesScreen(Screen[None]):
    """The GPU processes: who holds which GPU; sort, filter, and signal one (TERM, then KILL)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("s", "sort", "Sort", id="processes.sort"),
        Binding("slash", "filter", "Filter", id="processes.filter", key_display="/"),
        Binding("k", "signal", "Signal", id="processes.signal"),
        Binding("escape", "back", "Back", id="processes.back"),
    ]

    def __init__(self, sort: int = 0, filter_text: str = "") -> None:
        super().__init__()
        self.sort_index = sort % len(SORTS)
        self.filter_text = filter_text
        self._rows: list[ProcRow] = []
        self._shown: tuple[int, ...] = ()
        self._widths: tuple[int, ...] = ()
        self.termed: set[int] = set()  # pids sent TERM from here: the next signal is KILL

    def compose(self) -> ComposeResult:
        yield Header(icon="≡")
        yield Input(self.filter_text, placeholder="filter: user, command, PID, job…", id="filter")
        yield DataTable(id="procs", cursor_type="row", zebra_stripes=True)
        yield Static(id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.title = "zbench"
        self.sub_title = "GPU processes"
        self.query_one("#filter", Input).display = bool(self.filter_text)
        self.query_one("#procs", DataTable).focus()
        state = getattr(self.app, "telemetry", None)
        if isinstance(state, TelemetryState):
            self._collect(state)
        self._render_rows()

    async def refresh_telemetry(self, state: TelemetryState) -> None:
        self._collect(state)
        self._render_rows()

    def on_resize(self) -> None:
        self._render_rows()

    # --- data ------------------------------------------------------------------------------

    def _collect(self, state: TelemetryState) -> None:
        snap = state.latest
        if snap is None:
            self._rows = []
            return
        runners = getattr(self.app, "runners", {})
        now = getattr(self.app, "clock", lambda: snap.t)()
        self._rows = [
            ProcRow(f"{g}:{p.pid}", g, p, tuple(cells))
            for g, p, cells in process_rows(snap, runners, now)
        ]

    def visible(self) -> list[ProcRow]:
        sort_key = SORTS[self.sort_index][1]
        rows = [r for r in self._rows if matches(r, self.filter_text)]
        return sorted(rows, key=lambda r: sort_key(r.gpu, r.proc))

    @property
    def selected(self) -> ProcRow | None:
        table = self.query_one("#procs", DataTable)
        if not table.row_count:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return next((r for r in self._rows if r.key == key), None)

    # --- rendering -------------------------------------------------------------------------

    def _render_rows(self) -> None:
        table = self.query_one("#procs", DataTable)
        rows = self.visible()
        # DataTable pads each cell by one on both sides: textfit's gaps cover all but the edges.
        width = max(40, self.size.width - 4)
        layout = fit(PROCESS_COLUMNS, [r.cells for r in rows] or [[""] * 11], width)
        if (layout.keep, layout.widths) != (self._shown, self._widths):
            table.clear(columns=True)
            for k, i in enumerate(layout.keep):
                table.add_column(layout.headers[k], key=str(i), width=layout.widths[k])
            self._shown, self._widths = layout.keep, layout.widths
        wanted = [r.key for r in rows]
        present = [row.key.value for row in table.ordered_rows]
        if present != wanted:
            selected = self.selected.key if self.selected else None
            table.clear()
            for r in rows:
                table.add_row(*self._cells(r), key=r.key)
            if selected in wanted:
                table.move_cursor(row=wanted.index(selected))
        else:
            for r in rows:
                for i, value in zip(self._shown, self._cells(r), strict=True):
                    if table.get_cell(r.key, str(i)) != value:
                        table.update_cell(r.key, str(i), value)
        self._status(len(rows))

    def _cells(self, row: ProcRow) -> list[object]:
        out: list[object] = []
        for i in self._shown:
            text = row.cells[i]
            out.append(Text(text, justify="right") if PROCESS_COLUMNS[i].right else text)
        return out

    def _status(self, shown: int) -> None:
        status = self.query_one("#status", Static)
        sort = SORTS[self.sort_index][0]
        if not self._rows:
            if getattr(self.app.telemetry, "latest", None) is None:
                text = "Waiting for the first sample…"
            elif not self.app.telemetry.latest.gpus:
                text = "No GPUs here (host-only mode): no GPU processes to show."
            else:
                text = "No processes on the GPUs. Launch a job with l, or start one yourself."
        elif not shown:
            text = f"No GPU process matches “{self.filter_text}” (/ to change, escape to clear)."
        else:
            where = f", filter “{self.filter_text}”" if self.filter_text else ""
            text = f"{shown} of {len(self._rows)} processes; sorted by {sort}{where}."
        status.update(text)

    # --- actions ---------------------------------------------------------------------------

    def action_sort(self) -> None:
        self.sort_index = (self.sort_index + 1) % len(SORTS)
        self._render_rows()
        self.notify(f"sorted by {SORTS[self.sort_index][0]}", timeout=2)
        self._remember()

    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.display = True
        box.focus()

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.filter_text = event.value.strip()
        self._render_rows()

    @on(Input.Submitted, "#filter")
    def _filter_done(self) -> None:
        self.query_one("#procs", DataTable).focus()
        self._remember()

    def action_back(self) -> None:
        box = self.query_one("#filter", Input)
        if box.has_focus or self.filter_text:
            box.value = ""
            box.display = False
            self.filter_text = ""
            self._render_rows()
            self.query_one("#procs", DataTable).focus()
            self._remember()
            return
        self.app.pop_screen()

    def action_signal(self) -> None:
        row = self.selected
        if row is None:
            self.notify("no process selected", severity="warning")
            return
        signal_process = getattr(self.app, "signal_process", None)
        if signal_process is not None:
            signal_process(row.proc, "KILL" if row.proc.pid in self.termed else "TERM")

    def _remember(self) -> None:
        remember = getattr(self.app, "remember", None)
        if remember is not None:
            remember(process_sort=self.sort_index, process_filter=self.filter_text)
