"""One GPU: utilization and memory bars with history, power, temperature, clocks, GPM, NVLink.

Two layouts in one widget: the full panel (bordered: the util row with its history, the figures in
lines broken to the panel's width, warnings on the bottom border) and a one-line compact row; the
screen's ``-compact`` class picks one in CSS, so nothing is rebuilt on resize.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Static

from zbench.clocks import SLOWDOWNS, THROTTLES
from zbench.glyphs import glyphs

from ..format import bar, escape, gib, is_num, num, pct, rate, ratio_pct, short_rate
from .history import History

if TYPE_CHECKING:  # annotations only: the snapshot classes are built when the feed opens
    from zbench.telemetry.snapshot import GpuSnapshot

# NVML utilization is "a kernel ran at some point in the sample period": a single tiny kernel keeps it
# at 100%. GPM's SM activity says how much of the SMs was busy; far apart means the GPU is less busy
# than NVML suggests (small kernels, launch-bound, waiting on input).
HINT_UTIL = 80.0
HINT_SM = 30.0


def short_name(name: str) -> str:
    """A GPU's name without "NVIDIA " and "GeForce " (``GPU`` when nothing is left)."""
    return name.replace("NVIDIA ", "").replace("GeForce ", "") or "GPU"


def sm_hint(gpu: GpuSnapshot) -> bool:
    """Whether to hint "util high, SM low": the GPU looks busy, yet few of its SMs are active."""
    sm = gpu.gpm.sm_activity
    return (
        is_num(gpu.util_gpu)
        and is_num(sm)
        and float(gpu.util_gpu) >= HINT_UTIL  # type: ignore[arg-type]
        and float(sm) < HINT_SM  # type: ignore[arg-type]
    )


def compact_nvlink(gpu: GpuSnapshot) -> str:
    """A GPU's NVLink TX/RX rates for its one-line row; empty when it has no links (the full
    panel's figures are :func:`nvlink_fields`)."""
    nv = gpu.nvlink
    if not is_num(nv.active_links) or not nv.active_links:
        return ""
    g = glyphs()
    return f"NV{g.up}{rate(nv.tx_bytes_s)} {g.down}{rate(nv.rx_bytes_s)}"


def nvlink_fields(gpu: GpuSnapshot) -> tuple[str, ...]:
    """A GPU's NVLink figures one by one (links, TX, RX), for views that wrap between them."""
    nv = gpu.nvlink
    if not is_num(nv.active_links) or not nv.active_links:
        return ("[$text-muted]NVLink n/a[/]",)
    return (
        f"NVLink x{nv.active_links}",
        f"TX {rate(nv.tx_bytes_s)} [$text-muted]{pct(nv.tx_pct)}[/]",
        f"RX {rate(nv.rx_bytes_s)} [$text-muted]{pct(nv.rx_pct)}[/]",
    )


def pcie_text(gpu: GpuSnapshot) -> str:
    """A GPU's PCIe TX/RX rates in short form; empty when unknown."""
    g = glyphs()
    if not is_num(gpu.pcie_tx_bytes_s) and not is_num(gpu.pcie_rx_bytes_s):
        return ""
    return f"PCIe {g.up}{short_rate(gpu.pcie_tx_bytes_s)} {g.down}{short_rate(gpu.pcie_rx_bytes_s)}"


def warnings_text(gpu: GpuSnapshot) -> str:
    """What is slowing the GPU down or hiding behind its utilization, for the panel's bottom
    border (where no width cuts it off): active slow-down reasons and "util high, SM low"."""
    reasons = gpu.throttle_reasons
    said = [r for r in reasons if r in SLOWDOWNS] if isinstance(reasons, tuple) else []
    if sm_hint(gpu):
        said.append(f"{glyphs().warn} util high, SM low")
    return f"[$warning]{escape(', '.join(said))}[/]" if said else ""


def util_text(gpu: GpuSnapshot) -> str:
    """The util line's text before the sparkline."""
    return f"util {bar(gpu.util_gpu, 16)} {pct(gpu.util_gpu):>4}"


def detail_fields(gpu: GpuSnapshot) -> tuple[tuple[str, ...], ...]:
    """The panel's lines under the util row, each as fields: a line too long for the panel wraps
    between its fields, never inside one (``SM act`` and its figure stay together)."""
    mem_pct = ratio_pct(gpu.mem_used_bytes, gpu.mem_total_bytes)
    gpm = gpu.gpm
    return (
        (
            f"mem  {bar(mem_pct, 16)} {gib(gpu.mem_used_bytes)}/{gib(gpu.mem_total_bytes)} GiB",
            f"[$text-muted]ctrl[/] {pct(gpu.util_mem)}",
        ),
        (
            f"{num(gpu.power_w, ' W')}/{num(gpu.power_limit_w, ' W')}",
            num(gpu.temperature_c, glyphs().degree + "C"),
            f"SM {num(gpu.sm_clock_mhz, ' MHz')}",
            f"mem {num(gpu.mem_clock_mhz, ' MHz')}",
            f"[$text-muted]SM act[/] {pct(gpm.sm_activity)}",
            f"[$text-muted]tensor[/] {pct(gpm.tensor_activity)}",
        ),
        (*nvlink_fields(gpu), *filter(None, [pcie_text(gpu)])),
    )


@functools.cache
def _widest() -> GpuSnapshot:
    """Every figure at its widest. Lines break where this GPU's would, so how many lines a panel
    has depends on its width only: a rate growing from "0 B/s" to "392.5 GB/s" must not change
    the panel's height, and with it the dashboard's layout, from one sample to the next."""
    from zbench.telemetry.snapshot import GpmSnapshot, GpuSnapshot, NvLinkSnapshot

    return GpuSnapshot(
        index=0,
        util_gpu=100.0,
        util_mem=100.0,
        mem_used_bytes=999 * 2**30,
        mem_total_bytes=999 * 2**30,
        temperature_c=100.0,
        power_w=1000.0,
        power_limit_w=1000.0,
        sm_clock_mhz=3000.0,
        mem_clock_mhz=3000.0,
        pcie_tx_bytes_s=99.9e9,
        pcie_rx_bytes_s=99.9e9,
        nvlink=NvLinkSnapshot(
            active_links=18, tx_bytes_s=999e9, rx_bytes_s=999e9, tx_pct=100.0, rx_pct=100.0
        ),
        gpm=GpmSnapshot(sm_activity=100.0, tensor_activity=100.0),
    )


GAP = 2  # cells between two fields on a line


def _cells(markup: str) -> int:
    return Content.from_markup(markup).cell_length


def line_starts(widths: Sequence[int], room: int) -> list[int]:
    """Where a line of fields of ``widths`` cells breaks to fit ``room`` cells: the index of each
    line's first field (a field wider than the room gets a line of its own). Not Rich's wrapping:
    it breaks at any space, "SM act" from its figure, and by the text shown, not the widest."""
    starts, used = [0], 0
    for i, w in enumerate(widths):
        if i and used + GAP + w > room:
            starts.append(i)
            used = w
        else:
            used += (GAP if i else 0) + w
    return starts


@functools.cache
def _breaks(room: int) -> list[list[int]]:
    return [line_starts([_cells(f) for f in line], room) for line in detail_fields(_widest())]


def panel_height(width: int) -> int:
    """Rows a full panel ``width`` cells wide takes: its border, the util row, and the detail
    lines its width cuts the fields into (the dashboard chooses its layout by this)."""
    return 3 + sum(len(starts) for starts in _breaks(width - 4))  # 4: border and padding


def detail_text(gpu: GpuSnapshot, room: int) -> str:
    """:func:`detail_fields` as lines of at most ``room`` cells, broken where the widest GPU's
    would be."""
    out = []
    for fields, starts in zip(detail_fields(gpu), _breaks(room), strict=True):
        for a, b in itertools.pairwise([*starts, len(fields)]):
            if a < len(fields):
                out.append((" " * GAP).join(fields[a:b]))
    return "\n".join(out)


def compact_line(gpu: GpuSnapshot) -> str:
    """One GPU on a single line: the dashboard's compact row when space is short."""
    if gpu.lost:
        return f"[$error]{gpu.index} {escape(short_name(gpu.name))}: lost[/]"
    mem_pct = ratio_pct(gpu.mem_used_bytes, gpu.mem_total_bytes)
    warn = glyphs().warn
    flags = [f"{warn}SM"] if sm_hint(gpu) else []
    reasons = gpu.throttle_reasons
    faults = [r for r in reasons if r in THROTTLES] if isinstance(reasons, tuple) else []
    flags += [f"{warn}{faults[0]}"] if faults else []  # a power cap alone is its normal state
    # Before the NVLink rates: where a row is cut at the terminal's edge, the warnings stay.
    flagged = f"[$warning]{' '.join(flags)}[/] " if flags else ""
    return (
        f"[$accent]{gpu.index}[/] {bar(gpu.util_gpu, 6)}{pct(gpu.util_gpu):>5} "
        f"mem {bar(mem_pct, 5)}{gib(gpu.mem_used_bytes, 0)}/{gib(gpu.mem_total_bytes, 0)}G "
        f"{num(gpu.temperature_c, glyphs().degree)} {num(gpu.power_w, 'W')} "
        f"SM{pct(gpu.gpm.sm_activity)} {flagged}{compact_nvlink(gpu)}"
    ).rstrip()


class GpuPanel(Widget):
    """Shows the GPU it was last given; :meth:`show` is called by the screen on each refresh."""

    DEFAULT_CSS = """
    GpuPanel { height: auto; border: round $primary; padding: 0 1; }
    GpuPanel.-lost { border: round $error; }
    GpuPanel #util-row { height: 1; }
    GpuPanel #util { width: 28; }
    GpuPanel #details { height: auto; text-wrap: nowrap; text-overflow: ellipsis; }
    GpuPanel #compact { display: none; }
    """

    def __init__(self, index: int) -> None:
        super().__init__(id=f"gpu-{index}")
        self.index = index
        self._shown: dict[str, str] = {}
        self._last: tuple[GpuSnapshot, Sequence[float]] | None = None

    def compose(self) -> ComposeResult:
        with Horizontal(id="util-row"):
            yield Static(id="util", markup=True)
            yield History(id="history")
        yield Static(id="details")
        yield Static(id="compact")

    def _set(self, widget_id: str, text: str) -> None:
        # Static.update re-lays out the screen; at 8 GPUs x 2 Hz skipping unchanged text is the
        # difference between a few and many percent of a core.
        if self._shown.get(widget_id) != text:
            self._shown[widget_id] = text
            self.query_one(f"#{widget_id}", Static).update(text)

    def on_resize(self) -> None:
        if self._last is not None:  # the lines break by the width: break them again now
            self.show(*self._last)

    def show(self, gpu: GpuSnapshot, history: Sequence[float]) -> None:
        if not self.is_mounted:
            # Children nested in containers compose in turn, after the panel's own: a snapshot
            # that comes before every one is there is drawn after the next refresh.
            self.call_after_refresh(self.show, gpu, list(history))
            return
        self._last = (gpu, history)
        self.border_title = f"GPU {gpu.index} {glyphs().sep} {escape(short_name(gpu.name))}"
        self.set_class(gpu.lost, "-lost")
        compact = self.query_one("#compact", Static).display
        if compact or gpu.lost:
            self._set("compact", compact_line(gpu))
        if gpu.lost:
            self.border_subtitle = "lost"
            self._set("util", "[$error]lost: stopped answering[/]")
            self._set("details", "")
            self.query_one(History).values = ()
            return
        if not compact:
            self.border_subtitle = warnings_text(gpu)
            self._set("util", util_text(gpu))
            # Before its first layout the panel has no width yet: one line per kind of figure.
            self._set("details", detail_text(gpu, self.content_size.width or 1_000))
            self.query_one(History).values = history
