"""Rich rendering of the doctor's report."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

GIB = 2**30


def _f(value: Any, fmt: str = "{:.1f}", na: str = "n/a") -> str:
    return na if value is None else fmt.format(value)


def print_report(report: dict[str, Any], console: Console | None = None) -> None:
    c = console or Console()
    h = report["host"]
    c.print(f"[bold]host[/] {h['hostname']}  {h['os']}  Python {h['python']}")
    c.print(f"     CPU {h['cpu']}, {h['cpu_cores']} cores / {h['cpu_threads']} threads, "
            f"RAM {h['ram_bytes'] / GIB:.0f} GiB")  # fmt: skip
    if report.get("nvml"):
        v = report["nvml"]
        c.print(f"[bold]driver[/] {v['driver'] or 'n/a'}  CUDA (driver) {v['cuda_driver'] or 'n/a'}"
                f"  NVML {v['nvml'] or 'n/a'}")  # fmt: skip
    for name, fw in report["frameworks"].items():
        if not fw["installed"]:
            c.print(f"[bold]{name}[/] not installed")
        elif fw.get("gpus") is not None:
            c.print(f"[bold]{name}[/] {fw['version']}, sees {fw['gpus']} GPU(s)")
        else:
            c.print(f"[bold]{name}[/] {fw['version']}, GPU check failed: {fw.get('error', '?')}")
    if report.get("notice"):
        c.print(f"[yellow]{report['notice']}[/]")
        return
    ident = _table("GPUs", ["GPU", "arch", "CC", "SMs", "memory", "bus", "max SM/mem MHz"])
    peaks = _table(
        "theoretical peaks", ["GPU", "FP32 TF", "FP16 TF", "BF16 TF", "mem BW", "NVLink"]
    )
    for g in report["gpus"]:
        name = f"{g['index']} {g['name'].removeprefix('NVIDIA ')}"
        if g.get("lost"):
            ident.add_row(name or str(g["index"]), "lost: not answering NVML", *[""] * 5)
            continue
        links = g["nvlink_links"]
        link_bw = g["nvlink_link_bytes_s"] and g["nvlink_link_bytes_s"] / 1e9
        ident.add_row(
            name,
            g["architecture"],
            g["compute_capability"],
            _f(g["sm_count"], "{}"),
            _f(g["mem_total_bytes"] and g["mem_total_bytes"] / GIB, "{:.0f} GiB"),
            _f(g["mem_bus_width_bits"], "{} bit"),
            f"{_f(g['max_sm_clock_mhz'], '{:.0f}')}/{_f(g['max_mem_clock_mhz'], '{:.0f}')}",
        )
        peaks.add_row(
            name,
            _f(g["fp32_tflops"]),
            _f(g["fp16_tflops"], "{:.0f}"),
            _f(g["bf16_tflops"], "{:.0f}"),
            _f(g["mem_bw_bytes_s"] and g["mem_bw_bytes_s"] / 1e12, "{:.2f} TB/s"),
            "none" if not links else f"{links} x {_f(link_bw)} GB/s",
        )
    c.print(ident)
    c.print(peaks)
    topo = report.get("topology")
    if topo and len(topo["labels"]) > 1:
        m = Table(title="topology", box=None, header_style="bold", title_justify="left")
        m.add_column("")
        for label in topo["labels"]:
            m.add_column(label, justify="center")
        for label, row in zip(topo["labels"], topo["matrix"], strict=True):
            m.add_row(label, *row)
        c.print(m)
    for w in report["warnings"]:
        c.print(f"[yellow]warning:[/] {w}")
    if not report["warnings"]:
        c.print("[green]no warnings[/]")


def _table(title: str, cols: list[str]) -> Table:
    t = Table(title=title, box=None, header_style="bold", title_justify="left")
    for col in cols:
        t.add_column(col, justify="left" if col in ("GPU", "arch") else "right", no_wrap=True)
    return t
