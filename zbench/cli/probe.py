"""``zbench probe``: a progress bar while it runs, then each figure beside its theoretical peak."""

from __future__ import annotations

import json
import sys
from typing import Any

from rich.console import Console
from rich.progress import Progress
from rich.table import Table


def _n(v: Any, digits: int = 1) -> str:
    return "n/a" if v is None else f"{v:,.{digits}f}"


def print_rows(rows: list[dict[str, Any]], console: Console | None = None) -> None:
    t = Table(box=None, header_style="bold")
    for col, justify in (("GPU", "left"), ("test", "left"), ("measured", "right"),
                         ("peak", "right"), ("ratio", "right"), ("NVLink TX seen", "right")):  # fmt: skip
        t.add_column(col, justify=justify, no_wrap=True)  # type: ignore[arg-type]
    for r in rows:
        nvl = r.get("nvlink_tx_gb_s")
        t.add_row(
            str(r["gpu"]),
            r["name"],
            f"{_n(r['value'])} {r['unit']}",
            f"{_n(r['peak'])} {r['unit']}" if r["peak"] else "n/a",
            "n/a" if r["ratio"] is None else f"{100 * r['ratio']:.0f}%",
            "" if r["test"] != "p2p" else f"{_n(nvl)} GB/s",
        )
    (console or Console()).print(t)


def run_probe(gpus: str | None = None, quick: bool = False, json_out: bool = False,
              p2p_seconds: float | None = None) -> int:  # fmt: skip
    from zbench.jobs.probe import ProbeError, measure

    try:
        with Progress(disable=json_out, transient=True) as bar:
            task = bar.add_task("starting", total=None)

            def progress(step: int, total: int, label: str) -> None:
                bar.update(task, completed=step, total=total, description=label)

            result = measure(gpus, quick, p2p_seconds, progress)
    except ProbeError as exc:
        print(f"zbench probe: {exc}", file=sys.stderr)
        return exc.exit_code
    if json_out:
        print(json.dumps({"rows": result.rows, "raw": result.raw}, indent=2))
    else:
        print_rows(result.rows)
    return 0
