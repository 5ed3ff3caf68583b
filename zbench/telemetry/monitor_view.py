"""The Rich table that ``zbench monitor`` shows: one row per GPU, a host line beneath."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from zbench.telemetry import fmt
from zbench.telemetry.snapshot import NA, GpuSnapshot, Snapshot


def _nvlink(rate: object, share: object) -> str:
    if rate is NA:
        return "n/a"
    return f"{fmt.rate_gbs(rate)} ({fmt.pct(share)})"


def _gpu_row(g: GpuSnapshot) -> list[str | Text]:
    head = f"{g.index} {g.name.removeprefix('NVIDIA ')}"
    if g.lost:
        return [head, Text("lost", style="bold red"), *[""] * 9]
    reasons = () if g.throttle_reasons is NA else g.throttle_reasons
    throttled = [r for r in reasons if r not in ("idle", "app_clocks")]  # type: ignore[union-attr]
    temp = Text(fmt.num(g.temperature_c, "C"), style="red" if throttled else "")
    return [
        head,
        fmt.pct(g.util_gpu),
        fmt.pct(g.util_mem),
        fmt.used_of(g.mem_used_bytes, g.mem_total_bytes),
        f"{fmt.num(g.power_w)}/{fmt.num(g.power_limit_w, 'W')}",
        temp,
        f"{fmt.num(g.sm_clock_mhz)}/{fmt.num(g.mem_clock_mhz)}",
        _nvlink(g.nvlink.tx_bytes_s, g.nvlink.tx_pct),
        _nvlink(g.nvlink.rx_bytes_s, g.nvlink.rx_pct),
        fmt.pct(g.gpm.sm_activity),
        fmt.pct(g.gpm.tensor_activity),
    ]


def render(snap: Snapshot) -> RenderableType:
    table = Table(box=None, pad_edge=False, header_style="bold")
    for name, justify in (
        ("GPU", "left"),
        ("util", "right"),
        ("mem ctl", "right"),
        ("memory", "right"),
        ("power", "right"),
        ("temp", "right"),
        ("SM/mem MHz", "right"),
        ("NVLink TX GB/s", "right"),
        ("NVLink RX GB/s", "right"),
        ("SM act", "right"),
        ("tensor", "right"),
    ):
        table.add_column(name, justify=justify, no_wrap=True)  # type: ignore[arg-type]
    for g in snap.gpus:
        table.add_row(*_gpu_row(g))
    h = snap.host
    load = "n/a" if h.load_avg is NA else " ".join(f"{x:.2f}" for x in h.load_avg)  # type: ignore[union-attr]
    host = Text.assemble(
        ("host ", "bold"),
        f"CPU {fmt.pct(h.cpu_pct)} ({len(h.per_core_pct)} cores)  ",
        f"RAM {fmt.used_of(h.ram_used_bytes, h.ram_total_bytes)}  ",
        f"swap {fmt.used_of(h.swap_used_bytes, h.swap_total_bytes)}  load {load}",
    )
    parts: list[RenderableType] = []
    if snap.notice:
        parts.append(Text(snap.notice, style="yellow"))
    if snap.gpus:
        parts.append(table)
    parts.append(host)
    for tree in snap.trees:
        parts.append(
            Text(
                f"pid {tree.pid}: CPU {fmt.pct(tree.cpu_pct)} RSS {fmt.gib(tree.rss_bytes)} GiB "
                f"({tree.n_procs} processes)"
            )
        )
    return Group(*parts)
