"""The host: total CPU with history, one cell per core, load average, RAM and swap."""

from __future__ import annotations

from collections.abc import Sequence

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widget import Widget
from textual.widgets import Static

from zbench.telemetry.snapshot import NA, HostSnapshot

from ..format import bar, block, gib, pct, ratio_pct
from .history import History


def cores_text(host: HostSnapshot) -> str:
    return "".join(block(p) for p in host.per_core_pct) or "[$text-muted]per-core n/a[/]"


def load_text(host: HostSnapshot) -> str:
    if host.load_avg is NA:
        return "load n/a"
    return "load " + " ".join(f"{v:.1f}" for v in host.load_avg)  # type: ignore[union-attr]


def ram_text(host: HostSnapshot, width: int = 16) -> str:
    ram = ratio_pct(host.ram_used_bytes, host.ram_total_bytes)
    text = f"RAM {bar(ram, width)} {gib(host.ram_used_bytes)}/{gib(host.ram_total_bytes)} GiB"
    if host.swap_total_bytes:
        text += f"  swap {gib(host.swap_used_bytes)}/{gib(host.swap_total_bytes)} GiB"
    return text


class HostPanel(Widget):
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

    def on_mount(self) -> None:
        self.border_title = "host"

    def show(self, host: HostSnapshot, history: Sequence[float]) -> None:
        self.query_one("#cpu", Static).update(
            f"CPU {bar(host.cpu_pct, 16)} {pct(host.cpu_pct):>4}  {load_text(host)}"
        )
        self.query_one(History).values = history
        self.query_one("#cores", Static).update(cores_text(host))
        self.query_one("#ram", Static).update(ram_text(host))
        ram = ratio_pct(host.ram_used_bytes, host.ram_total_bytes)
        self.query_one("#compact", Static).update(
            f"CPU {pct(host.cpu_pct):>4} {cores_text(host)}\n"
            f"RAM {bar(ram, 8)} {gib(host.ram_used_bytes, 0)}/{gib(host.ram_total_bytes, 0)}G  "
            f"{load_text(host)}"
        )
