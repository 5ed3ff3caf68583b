"""``zbench doctor``: the doctor's report (``telemetry.doctor.collect``) as Rich text or JSON."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from typing import Any

from rich.console import Console
from rich.table import Table

from zbench.cli.tableview import print_table
from zbench.glyphs import glyphs
from zbench.textfit import Column, counted

GIB = 2**30


def _f(value: Any, fmt: str = "{:.1f}", na: str = "n/a") -> str:
    return na if value is None else fmt.format(value)


def print_report(
    report: dict[str, Any], console: Console | None = None, *, wide: bool = False
) -> None:
    """Print the doctor's report as Rich text: host, driver, frameworks, GPU specs and peaks."""
    c = console or Console()
    _print_host(c, report)
    if report.get("notice"):  # no GPU checks ran: no "no warnings", but the data folder's
        c.print(f"[yellow]{report['notice']}[/]")
        _print_warnings(c, report)
        return
    ident, peaks = _gpu_rows(report["gpus"])
    print_table(c, IDENT_COLUMNS, ident, wide=wide, title="GPUs")
    print_table(c, PEAK_COLUMNS, peaks, wide=wide, title="theoretical peaks")
    topo = report.get("topology")
    if topo and len(topo["labels"]) > 1:
        _print_topology(c, topo)
    _print_warnings(c, report)
    if not report["warnings"] and not report.get("errors"):
        c.print("[green]no warnings[/]")


def _print_warnings(c: Console, report: dict[str, Any]) -> None:
    """The errors (what fails zbench's commands), then the warnings."""
    from rich.markup import escape

    for e in report.get("errors", []):  # either may name a path: text, not markup
        c.print(f"[red]error:[/] {escape(e)}")
    for w in report["warnings"]:
        c.print(f"[yellow]warning:[/] {escape(w)}")


def _print_host(c: Console, report: dict[str, Any]) -> None:
    """Host, driver, each framework and what it sees, the compile cache."""
    h = report["host"]
    c.print(f"[bold]host[/] {h['hostname']}  {h['os']}  Python {h['python']}")
    c.print(
        f"     CPU {h['cpu']}, {h['cpu_cores']} cores / {h['cpu_threads']} threads, "
        f"RAM {h['ram_bytes'] / GIB:.0f} GiB"
    )
    if report.get("nvml"):
        v = report["nvml"]
        c.print(
            f"[bold]driver[/] {v['driver'] or 'n/a'}  CUDA (driver) {v['cuda_driver'] or 'n/a'}"
            f"  NVML {v['nvml'] or 'n/a'}"
        )
    for name, fw in report["frameworks"].items():
        if not fw["installed"]:
            c.print(f"[bold]{name}[/] not installed")
        elif fw.get("gpus") is not None:
            c.print(f"[bold]{name}[/] {fw['version']}, sees {counted(fw['gpus'], 'GPU')}")
        else:
            c.print(f"[bold]{name}[/] {fw['version']}, GPU check failed: {fw.get('error', '?')}")
    if cache := report.get("cache"):
        from rich.markup import escape

        from zbench.cli.cache import human

        held = cache.get("bytes")
        hint = " (`zbench cache clear` empties it)" if held else ""  # nothing to clear when empty
        size = human(held) + hint if held is not None else f"[yellow]{escape(cache['error'])}[/]"
        c.print(f"[bold]compile cache[/] {escape(str(cache.get('path')))}: {size}")


def _gpu_rows(gpus: list[dict[str, Any]]) -> tuple[list[list[str]], list[list[str]]]:
    """The GPUs table's rows (IDENT_COLUMNS) and the peaks table's (PEAK_COLUMNS); a GPU that
    stopped answering NVML has one row saying so, and no peaks."""
    ident: list[list[str]] = []
    peaks: list[list[str]] = []
    for g in gpus:
        name = f"{g['index']} {g['name'].removeprefix('NVIDIA ')}"
        if g.get("lost"):
            ident.append([name or str(g["index"]), "lost: not answering NVML", *[""] * 5])
            continue
        links = g["nvlink_links"]
        link_bw = g["nvlink_link_bytes_s"] and g["nvlink_link_bytes_s"] / 1e9
        ident.append(
            [
                name,
                g["architecture"],
                g["compute_capability"],
                _f(g["sm_count"], "{}"),
                _f(g["mem_total_bytes"] and g["mem_total_bytes"] / GIB, "{:.0f} GiB"),
                _f(g["mem_bus_width_bits"], "{} bit"),
                f"{_f(g['max_sm_clock_mhz'], '{:.0f}')}/{_f(g['max_mem_clock_mhz'], '{:.0f}')}",
            ]
        )
        peaks.append(
            [
                name,
                _f(g["fp32_tflops"]),
                _f(g["fp16_tflops"], "{:.0f}"),
                _f(g["bf16_tflops"], "{:.0f}"),
                _f(g["mem_bw_bytes_s"] and g["mem_bw_bytes_s"] / 1e12, "{:.2f} TB/s"),
                "none" if not links else f"{links} x {_f(link_bw)} GB/s",
            ]
        )
    return ident, peaks


def _print_topology(c: Console, topo: dict[str, Any]) -> None:
    m = Table(title="topology", box=None, header_style="bold", title_justify="left")
    m.add_column("")
    for label in topo["labels"]:
        m.add_column(label, justify="center")
    for label, row in zip(topo["labels"], topo["matrix"], strict=True):
        m.add_row(label, *row)
    c.print(m)


IDENT_COLUMNS = (
    Column("GPU"),
    Column("arch", priority=3),
    Column("CC", priority=1, right=True),
    Column("SMs", priority=2, right=True),
    Column("memory", "mem", right=True),
    Column("bus", priority=4, right=True),
    Column("max SM/mem MHz", "MHz", priority=1, right=True),
)
PEAK_COLUMNS = (
    Column("GPU"),
    Column("FP32 TF", "FP32", right=True),
    Column("FP16 TF", "FP16", priority=1, right=True),
    Column("BF16 TF", "BF16", right=True),
    Column("mem BW", "BW", right=True),
    Column("NVLink", priority=2, right=True),
)


@contextlib.contextmanager
def spinner() -> Iterator[Callable[[str], None]]:
    """A spinner on stderr naming the doctor's phase; nothing when stderr is not a terminal."""
    err = Console(stderr=True)
    if not err.is_terminal:
        yield lambda _: None
        return
    name = "line" if glyphs().ascii else "dots"
    with err.status("zbench doctor: starting", spinner=name) as status:
        yield lambda phase: status.update(f"zbench doctor: {phase}")


def run_doctor(json_out: bool = False, wide: bool = False) -> int:
    """Collect the doctor's report under a spinner, then print it as text or JSON; 1 where it
    found an error (a data folder zbench cannot use), else 0, warnings or not."""
    from zbench.telemetry import doctor
    from zbench.telemetry.snapshot import to_dict

    with spinner() as progress:  # on stderr, and only when it is a terminal
        report = doctor.collect(progress)
    if json_out:
        print(json.dumps(to_dict(report), indent=2, default=doctor.json_default))
    else:
        print_report(report, wide=wide)
    return 1 if report.get("errors") else 0
