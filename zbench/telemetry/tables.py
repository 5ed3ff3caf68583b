"""The monitor's tables as data: one row of cells per GPU and per GPU process, the host line, fitted
by ``zbench.textfit`` (stdlib), so ``zbench monitor`` and the TUI's processes screen show the same columns.

At 80 columns the least important columns are left out whole instead of every cell being cut to
"Re…"; with no width (a pipe, ``--wide``) all are shown. A header names the unit of its cells
(they hold bare numbers), the long one as the short one does.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

from zbench.telemetry import fmt
from zbench.telemetry.processes import job_of
from zbench.telemetry.snapshot import NA, GpuProcess, GpuSnapshot, Snapshot
from zbench.textfit import Column

GPU_COLUMNS = (
    Column("GPU", priority=0),
    Column("util", priority=0, right=True),
    Column("mem ctl", "ctl", priority=3, right=True),
    Column("memory GiB", "mem GiB", priority=0, right=True),
    Column("power W", "W", priority=1, right=True),
    Column("temp C", "C", priority=2, right=True),
    Column("SM/mem MHz", "MHz", priority=5, right=True),
    Column("PCIe TX/RX GB/s", "PCIe", priority=6, right=True),
    Column("NVLink TX GB/s", "NVL TX", priority=4, right=True),
    Column("NVLink RX GB/s", "NVL RX", priority=4, right=True),
    Column("SM act", "SM", priority=1, right=True),
    Column("tensor", "tens", priority=2, right=True),
    Column("throttle", priority=7, flex=True, min_width=8),
)

PROCESS_COLUMNS = (
    Column("GPU", priority=0, right=True),
    Column("PID", priority=0, right=True),
    Column("user", priority=2),
    Column("GPU mem GiB", "GPU GiB", priority=0, right=True),
    Column("SM", priority=3, right=True),
    Column("CPU", priority=1, right=True),
    Column("host mem GiB", "RSS GiB", priority=4, right=True),
    Column("elapsed", "time", priority=3, right=True),
    Column("job", priority=1),
    Column("container", "ctr", priority=5),
    Column("command", priority=0, flex=True, min_width=28),
)


def _nvlink(rate: object, share: object) -> str:
    if rate is NA:
        return "n/a"
    return f"{fmt.rate_gbs(rate)} ({fmt.pct(share)})"


def throttling(g: GpuSnapshot) -> list[str]:
    """The clock-event reasons that slow the GPU (idle and application clocks do not)."""
    reasons = () if g.throttle_reasons is NA else g.throttle_reasons
    return [r for r in reasons if r not in ("idle", "app_clocks")]  # type: ignore[union-attr]


def gpu_cells(g: GpuSnapshot) -> list[str]:
    """One GPU's row of the monitor's GPU table (``lost`` and blanks when it stopped answering)."""
    head = f"{g.index} {g.name.removeprefix('NVIDIA ')}"
    if g.lost:
        return [head, "lost", *[""] * (len(GPU_COLUMNS) - 2)]
    pcie = (
        "n/a"
        if g.pcie_tx_bytes_s is NA and g.pcie_rx_bytes_s is NA
        else f"{fmt.rate_gbs(g.pcie_tx_bytes_s)}/{fmt.rate_gbs(g.pcie_rx_bytes_s)}"
    )
    return [
        head,
        fmt.pct(g.util_gpu),
        fmt.pct(g.util_mem),
        fmt.used_of(g.mem_used_bytes, g.mem_total_bytes).removesuffix(" GiB"),
        f"{fmt.num(g.power_w)}/{fmt.num(g.power_limit_w)}",
        fmt.num(g.temperature_c),
        f"{fmt.num(g.sm_clock_mhz)}/{fmt.num(g.mem_clock_mhz)}",
        pcie,
        _nvlink(g.nvlink.tx_bytes_s, g.nvlink.tx_pct),
        _nvlink(g.nvlink.rx_bytes_s, g.nvlink.rx_pct),
        fmt.pct(g.gpm.sm_activity),
        fmt.pct(g.gpm.tensor_activity),
        ",".join(throttling(g)) if g.throttle_reasons is not NA else "n/a",
    ]


def elapsed(started: object, now: float) -> str:
    """Seconds since ``started`` as 59s, 12m03s, 3h07m, 2d04h."""
    if not isinstance(started, int | float):
        return "n/a"
    s = max(0, int(now - started))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    if s < 86400:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    return f"{s // 86400}d{s % 86400 // 3600:02d}h"


def process_rows(
    snap: Snapshot, runners: Mapping[int, int] | None = None, now: float | None = None
) -> list[tuple[int, GpuProcess, list[str]]]:
    """(GPU index, process, cells) for every GPU process, in GPU then PID order."""
    now = time.time() if now is None else now
    out = []
    for g in snap.gpus:
        for p in sorted(g.processes, key=lambda p: p.pid):
            job = job_of(p, dict(runners or {}))
            out.append(
                (
                    g.index,
                    p,
                    [
                        str(g.index),
                        str(p.pid),
                        p.user or "n/a",  # not readable (another user's process, a replay)
                        fmt.gib(p.used_memory_bytes),
                        fmt.pct(p.sm_util),
                        fmt.pct(p.cpu_pct),
                        fmt.gib(p.host_mem_bytes),
                        elapsed(p.started, now),
                        "" if job is None else f"#{job}",
                        p.container or "",
                        p.command or p.name,
                    ],
                )
            )
    return out


def host_line(snap: Snapshot) -> str:
    """The monitor's host line: CPU, RAM, swap where the host has any (as the TUI's host panel)
    and load average."""
    h = snap.host
    load = "n/a" if h.load_avg is NA else " ".join(f"{x:.2f}" for x in h.load_avg)  # type: ignore[union-attr]
    swap = (
        f"swap {fmt.used_of(h.swap_used_bytes, h.swap_total_bytes)}  " if h.swap_total_bytes else ""
    )
    return (
        f"CPU {fmt.pct(h.cpu_pct)}{f' ({len(h.per_core_pct)} cores)' if h.per_core_pct else ''}  "
        f"RAM {fmt.used_of(h.ram_used_bytes, h.ram_total_bytes)}  {swap}load {load}"
    )
