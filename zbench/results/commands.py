"""``zbench results``, ``export``, ``compare`` and ``plot``: thin wrappers that print.

Each returns an exit status: 0 ok, 1 the work failed (nothing to show), 2 bad input.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from zbench.results.anchors import anchor_for
from zbench.results.api import ResultRow, query_results, review_order, rows_from_json
from zbench.results.export import FORMATS, FormatError, render
from zbench.results.format import COLUMNS, cells, published_cell, published_notes

Db = str | os.PathLike[str] | None
RIGHT = {"GPUs", "Batch", "Samples/s", "GPU util %", "Mem-ctrl util %", "GPU mem GiB"}
RIGHT |= {"CPU util %", "CPU mem GiB"}


def _err(message: str) -> None:
    print(f"zbench: {message}", file=sys.stderr)


def results_table(rows: Sequence[ResultRow]) -> Table:
    """The review's table; a "Published" column where a row's GPU matches a published figure."""
    anchors = [anchor_for(r) for r in rows]
    notes = published_notes(anchors)
    table = Table(
        title="zbench results",
        caption=("Published: " + "; ".join(notes)) if notes else None,
        caption_justify="left",
    )
    table.add_column("Run", justify="right")
    for title, _, _ in COLUMNS:
        table.add_column(title, justify="right" if title in RIGHT else "left")
    if any(anchors):
        table.add_column("Published")
    for row, anchor in zip(rows, anchors, strict=True):
        extra = [published_cell(anchor)] if any(anchors) else []
        # Text, not markup: GPU names and published sources are data, never Rich markup.
        table.add_row(*(Text(str(c)) for c in [row.run_id or "", *cells(row), *extra]))
    return table


def show_results(
    *,
    workload: str | None,
    framework: str | None,
    gpu: str | None,
    since: str | None,
    db: Db,
    json_out: bool,
) -> int:
    try:
        rows = review_order(
            query_results(db, workload=workload, framework=framework, gpu=gpu, since=since)
        )
    except ValueError as exc:
        _err(str(exc))
        return 2
    if json_out:
        print(render(rows, "json"), end="")
        return 0
    if not rows:
        Console().print("No results yet. Run `zbench suite quick` or `zbench run resnet50`.")
        return 0
    Console(highlight=False).print(results_table(rows))
    return 0


def export_results(
    *, fmt: str, output: Path | None, workload: str | None, framework: str | None, db: Db
) -> int:
    if fmt not in FORMATS:
        _err(f"unknown format {fmt!r} (choose md, csv or json)")
        return 2
    rows = review_order(query_results(db, workload=workload, framework=framework))
    try:
        text = render(rows, fmt)
    except FormatError as exc:
        _err(str(exc))
        return 2
    if output is None:
        sys.stdout.write(text)
    else:
        try:
            output.write_text(text, encoding="utf-8")
        except OSError as exc:
            _err(f"cannot write {output}: {exc.strerror or exc}")
            return 2
        print(f"Wrote {len(rows)} result(s) to {output}", file=sys.stderr)
    return 0


# --- compare ---------------------------------------------------------------------------------

COMPARED = (
    ("samples_per_s", "Samples/s"),
    ("gpu_util", "GPU util %"),
    ("mem_util", "Mem-ctrl util %"),
    ("gpu_mem_bytes", "GPU memory (bytes)"),
    ("cpu_util", "CPU util %"),
    ("cpu_mem_bytes", "CPU memory (bytes)"),
)


class CompareError(ValueError):
    pass


def _load_side(ref: str, db: Db) -> ResultRow:
    """A run id from the store, or an exported JSON file (its first result, or ``file.json:N``
    for the result with run id N)."""
    if ref.isdigit():
        rows = query_results(db, run_ids=[int(ref)])
        if not rows:
            raise CompareError(f"no run {ref}")
        return rows[0]
    path_text, _, pick = ref.partition(":") if not Path(ref).exists() else (ref, "", "")
    path = Path(path_text)
    try:
        rows = rows_from_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, TypeError, AttributeError) as exc:
        raise CompareError(f"{ref}: not a run id or a zbench JSON export ({exc})") from None
    if pick:
        rows = [r for r in rows if str(r.run_id) == pick]
    if not rows:
        raise CompareError(f"{ref}: no results in it")
    return rows[0]


def compare_values(a: ResultRow, b: ResultRow) -> list[dict[str, Any]]:
    """Per metric: both values and b/a (None where either side is missing or a is 0)."""
    out = []
    for key, title in COMPARED:
        va, vb = getattr(a, key), getattr(b, key)
        ratio = vb / va if va not in (None, 0) and vb is not None else None
        out.append({"metric": key, "title": title, "a": va, "b": vb, "ratio_b_over_a": ratio})
    return out


def _side_label(r: ResultRow) -> str:
    return f"{r.workload} {r.framework} {r.mode} {r.precision or ''} x{r.gpus} on {r.gpu_name}"


def compare_runs(a: str, b: str, *, db: Db, json_out: bool) -> int:
    try:
        ra, rb = _load_side(a, db), _load_side(b, db)
    except CompareError as exc:
        _err(str(exc))
        return 2
    values = compare_values(ra, rb)
    if json_out:
        print(json.dumps({"a": ra.as_dict(), "b": rb.as_dict(), "metrics": values}, indent=2))
        return 0
    table = Table(title=f"A: {_side_label(ra)}\nB: {_side_label(rb)}")
    for col in ("Metric", "A", "B", "B / A"):
        table.add_column(col, justify="left" if col == "Metric" else "right")
    for v in values:

        def num(x: float | None) -> str:
            return "n/a" if x is None else f"{x:,.2f}"

        ratio = "n/a" if v["ratio_b_over_a"] is None else f"{v['ratio_b_over_a']:.2f}x"
        table.add_row(v["title"], num(v["a"]), num(v["b"]), ratio)
    Console(highlight=False).print(table)
    return 0


def plot_results(*, output: Path, db: Db) -> int:
    rows = query_results(db)
    if not rows:
        _err("no results to plot: run a suite first (`zbench suite quick`)")
        return 1
    from zbench.results.charts import write_charts

    charts = write_charts(rows, output)
    if not charts:
        _err("none of the results fits a chart")
        return 1
    for chart in charts:
        print(f"{chart.path}: {chart.description}")
    return 0
