"""The host: total CPU with history, one cell per core, load average, RAM and swap."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widget import Widget
from textual.widgets import Static

from zbench.telemetry.na import NA

from ..format import bar, blocks, gib, level, pct, ratio_pct
from .history import History

if TYPE_CHECKING:  # annotations only: the snapshot classes are built when the feed opens
    from zbench.telemetry.snapshot import HostSnapshot


def cores_text(host: HostSnapshot, room: int | None = None, used: int = 0, group: int = 1) -> str:
    """One cell per core, one markup tag per run of one level (a 128-core host would otherwise
    parse 128 tags a refresh). Given ``room``, the cells fold onto lines of that many, the first
    after ``used`` cells of a label (see :func:`core_lines`). ``group`` > 1: a cell for every
    ``group`` neighbouring cores, the busiest of them (see :func:`per_cell`)."""
    if not host.per_core_pct:
        return "[$text-muted]per-core n/a[/]"
    values = host.per_core_pct
    if group > 1:
        values = tuple(max(values[i : i + group]) for i in range(0, len(values), group))
    levels = blocks()
    folds = set(_folds(len(values), room, used))
    runs: list[tuple[str, str]] = []
    for i, p in enumerate(values):
        v = max(0.0, min(100.0, p))
        cell, style = levels[max(1, round(v / 100 * 8))], level(v)
        cell = "\n" + cell if i in folds else cell
        if runs and runs[-1][1] == style:
            runs[-1] = (runs[-1][0] + cell, style)
        else:
            runs.append((cell, style))
    return "".join(f"[{style}]{cells}[/]" for cells, style in runs)


def per_cell(cores: int, room: int) -> int:
    """The cores a cell shows for ``cores`` cells to fit one line of ``room`` columns, a note of
    it (:func:`group_note`) included: 1 where they fit. The compact host line has one line for its
    cells; cut with an ellipsis, a 128-core host at 80 columns hid its last 60 cores, and a busy
    one among them (a cell shows the busiest of its cores)."""
    if cores <= room or room <= 0:
        return 1
    group = 2
    while group * (room - len(group_note(group))) < cores and group < cores:
        group += 1
    return group


def group_note(group: int) -> str:
    """What a grouped row of cells says after them: each is the busiest of ``group`` cores."""
    return f" max of {group}"


def _folds(cores: int, room: int | None, used: int) -> range:
    """The cells a new line starts at. Folded here, not by Textual: it wraps at spaces, so a run
    of cells longer than the line went whole to the next line and its label stood alone (a
    128-core host's row took three lines at 120 columns, not two)."""
    if not room or room <= 0:
        return range(0)
    return range(max(0, room - used), cores, room)  # 0: the label fills the first line


def core_lines(cores: int, room: int, used: int = 0) -> int:
    """The lines :func:`cores_text` takes for ``cores`` cells in ``room`` columns after ``used``."""
    return 1 + len(_folds(cores, room, used))


def cores_label(cores: int) -> str:
    """The label before the cells: the row says what it is."""
    return f"{cores} cores "


def load_text(host: HostSnapshot) -> str:
    """The load average as text; ``load n/a`` where unsupported."""
    if host.load_avg is NA:
        return "load n/a"
    return "load " + " ".join(f"{v:.1f}" for v in host.load_avg)  # type: ignore[union-attr]


def ram_text(host: HostSnapshot, width: int = 16) -> str:
    """RAM as a bar and used/total GiB, with swap when the host has any."""
    ram = ratio_pct(host.ram_used_bytes, host.ram_total_bytes)
    text = f"RAM {bar(ram, width)} {gib(host.ram_used_bytes)}/{gib(host.ram_total_bytes)} GiB"
    if host.swap_total_bytes:
        text += f"  swap {gib(host.swap_used_bytes)}/{gib(host.swap_total_bytes)} GiB"
    return text


class HostPanel(Widget):
    """The host: total CPU with history, one cell per core, load average, RAM and swap."""

    DEFAULT_CSS = """
    HostPanel { height: auto; border: round $secondary; padding: 0 1; }
    HostPanel #cpu-row { height: 1; }
    HostPanel #cpu { width: 40; }
    HostPanel #cores { height: auto; }
    HostPanel #compact { display: none; }
    """

    def compose(self) -> ComposeResult:
        with Horizontal(id="cpu-row"):
            yield Static(id="cpu")
            yield History(id="cpu-history")
        yield Static(id="cores")
        yield Static(id="ram")
        yield Static(id="compact")

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._shown: dict[str, str] = {}
        self._last: tuple[HostSnapshot, Sequence[float]] | None = None  # shown again on resize

    def on_mount(self) -> None:
        self.border_title = "host"

    def _set(self, widget_id: str, text: str) -> None:
        # As in GpuPanel: an unchanged line is not parsed and laid out again.
        if self._shown.get(widget_id) != text:
            self._shown[widget_id] = text
            self.query_one(f"#{widget_id}", Static).update(text)

    @staticmethod
    def full_height(width: int, cores: int) -> int:
        """The rows the panel takes in full at ``width`` columns on a host of ``cores`` cores: its
        border, the CPU row, the cores' lines (:func:`core_lines`) and RAM (DEFAULT_CSS)."""
        room = width - 4  # the border and the padding
        return 2 + 1 + (core_lines(cores, room, len(cores_label(cores))) if cores else 1) + 1

    def on_resize(self) -> None:
        if self._last is not None:  # the cores fold to the new width
            self.show(*self._last)

    def show(self, host: HostSnapshot, history: Sequence[float]) -> None:
        if not self.is_mounted:  # as in GpuPanel.show: drawn once every child is composed
            self.call_after_refresh(self.show, host, list(history))
            return
        self._last = (host, history)
        if self.query_one("#compact", Static).display:
            ram = ratio_pct(host.ram_used_bytes, host.ram_total_bytes)
            head = f"CPU {pct(host.cpu_pct):>4} "
            group = per_cell(len(host.per_core_pct), self.size.width - len(head))
            note = f"[$text-muted]{group_note(group)}[/]" if group > 1 else ""
            self._set(
                "compact",
                f"{head}{cores_text(host, group=group)}{note}\n"
                f"RAM {bar(ram, 8)} {gib(host.ram_used_bytes, 0)}/{gib(host.ram_total_bytes, 0)}G  "
                f"{load_text(host)}",
            )
            return
        self._set("cpu", f"CPU {bar(host.cpu_pct, 16)} {pct(host.cpu_pct):>4}  {load_text(host)}")
        self.query_one(History).values = history
        if host.per_core_pct:  # the row of cells says what it is: one cell per core
            label = cores_label(len(host.per_core_pct))
            cells = cores_text(host, self.size.width, len(label))
            self._set("cores", f"[$text-muted]{label.rstrip()}[/] {cells}")
        else:
            self._set("cores", cores_text(host))
        self._set("ram", ram_text(host))
