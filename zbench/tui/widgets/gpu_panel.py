"""One GPU: utilization and memory bars with history, power, temperature, clocks, GPM, NVLink.

Two layouts in one widget: the full panel (bordered, four lines and a history) and a one-line
compact row; the screen's breakpoint classes pick one in CSS, so nothing is rebuilt on resize.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widget import Widget
from textual.widgets import Static

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


def nvlink_text(gpu: GpuSnapshot, compact: bool = False) -> str:
    """A GPU's NVLink text: links and TX/RX rates (with % of capacity unless compact)."""
    nv = gpu.nvlink
    if not is_num(nv.active_links) or not nv.active_links:
        return "" if compact else "[$text-muted]NVLink n/a[/]"
    if compact:
        g = glyphs()
        return f"NV{g.up}{rate(nv.tx_bytes_s)} {g.down}{rate(nv.rx_bytes_s)}"
    return "  ".join(nvlink_fields(gpu))


def nvlink_fields(gpu: GpuSnapshot) -> tuple[str, ...]:
    """A GPU's NVLink figures one by one (links, TX, RX), for views that wrap between them."""
    nv = gpu.nvlink
    if not is_num(nv.active_links) or not nv.active_links:
        return ("[$text-muted]NVLink n/a[/]",)
    return (
        f"NVLink x{nv.active_links}",
        f"TX {rate(nv.tx_bytes_s)} [$text-muted]({pct(nv.tx_pct)})[/]",
        f"RX {rate(nv.rx_bytes_s)} [$text-muted]({pct(nv.rx_pct)})[/]",
    )


def pcie_text(gpu: GpuSnapshot) -> str:
    """A GPU's PCIe TX/RX rates in short form; empty when unknown."""
    g = glyphs()
    if not is_num(gpu.pcie_tx_bytes_s) and not is_num(gpu.pcie_rx_bytes_s):
        return ""
    return f"PCIe {g.up}{short_rate(gpu.pcie_tx_bytes_s)} {g.down}{short_rate(gpu.pcie_rx_bytes_s)}"


# Clock-event reasons that slow a GPU down (the others, such as idle, are its normal states).
SLOWDOWNS = ("sw_power_cap", "hw_slowdown", "sw_thermal", "hw_thermal", "hw_power_brake")


def slowdown_text(gpu: GpuSnapshot) -> str:
    """The GPU's active clock slow-down reasons as a warning; empty when none."""
    reasons = gpu.throttle_reasons
    slow = [r for r in reasons if r in SLOWDOWNS] if isinstance(reasons, tuple) else []
    return f"  [$warning]{', '.join(slow)}[/]" if slow else ""


def full_lines(gpu: GpuSnapshot) -> tuple[str, str]:
    """(the util line's text before the sparkline, the three lines under it)."""
    mem_pct = ratio_pct(gpu.mem_used_bytes, gpu.mem_total_bytes)
    util = f"util {bar(gpu.util_gpu, 16)} {pct(gpu.util_gpu):>4}"
    gpm = gpu.gpm
    lines = [
        f"mem  {bar(mem_pct, 16)} {gib(gpu.mem_used_bytes)}/{gib(gpu.mem_total_bytes)} GiB"
        f"  [$text-muted]ctrl[/] {pct(gpu.util_mem)}",
        f"{num(gpu.power_w, ' W')}/{num(gpu.power_limit_w, ' W')}  {num(gpu.temperature_c, glyphs().degree + 'C')}"
        f"  SM {num(gpu.sm_clock_mhz, ' MHz')}  mem {num(gpu.mem_clock_mhz, ' MHz')}"
        f"  [$text-muted]SM act[/] {pct(gpm.sm_activity)}"
        f"  [$text-muted]tensor[/] {pct(gpm.tensor_activity)}",
        nvlink_text(gpu)
        + f"  {pcie_text(gpu)}"
        + slowdown_text(gpu)
        + (f"  [$warning]{glyphs().warn} util high, SM low[/]" if sm_hint(gpu) else ""),
    ]
    return util, "\n".join(lines)


def compact_line(gpu: GpuSnapshot) -> str:
    """One GPU on a single line: the dashboard's compact row when space is short."""
    if gpu.lost:
        return f"[$error]{gpu.index} {escape(short_name(gpu.name))}: lost[/]"
    mem_pct = ratio_pct(gpu.mem_used_bytes, gpu.mem_total_bytes)
    hint = f" [$warning]{glyphs().warn}SM[/]" if sm_hint(gpu) else ""
    return (
        f"[$accent]{gpu.index}[/] {bar(gpu.util_gpu, 6)}{pct(gpu.util_gpu):>5} "
        f"mem {bar(mem_pct, 5)}{gib(gpu.mem_used_bytes, 0)}/{gib(gpu.mem_total_bytes, 0)}G "
        f"{num(gpu.temperature_c, glyphs().degree)} {num(gpu.power_w, 'W')} "
        f"SM{pct(gpu.gpm.sm_activity)} {nvlink_text(gpu, compact=True)}{hint}"
    )


class GpuPanel(Widget):
    """Shows the GPU it was last given; :meth:`show` is called by the screen on each refresh."""

    DEFAULT_CSS = """
    GpuPanel { height: 6; border: round $primary; padding: 0 1; }
    GpuPanel.-lost { border: round $error; }
    GpuPanel #util-row { height: 1; }
    GpuPanel #util { width: 28; }
        GpuPanel #compact { display: none; }
    """

    def __init__(self, index: int) -> None:
        super().__init__(id=f"gpu-{index}")
        self.index = index
        self._shown: dict[str, str] = {}

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

    def show(self, gpu: GpuSnapshot, history: Sequence[float]) -> None:
        if not self.is_mounted:
            # Children nested in containers compose in turn, after the panel's own: a snapshot
            # that comes before every one is there is drawn after the next refresh.
            self.call_after_refresh(self.show, gpu, list(history))
            return
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
        self.border_subtitle = ""
        if not compact:
            util, details = full_lines(gpu)
            self._set("util", util)
            self._set("details", details)
            self.query_one(History).values = history
