"""Results as Markdown (renders on GitHub), CSV, or JSON with full configs."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence

from zbench.results.anchors import anchor_for
from zbench.results.api import ResultRow
from zbench.results.format import COLUMNS, CSV_KEYS, cells, published_cell, published_notes

FORMATS = ("md", "csv", "json")


class FormatError(ValueError):
    """Unknown export format (one line, exit status 2)."""


def md_escape(text: str) -> str:
    """A Markdown table cell: pipes escaped, line breaks as <br>, so one cell stays one cell."""
    text = text.replace("\\", "\\\\").replace("|", "\\|")
    return text.replace("\r\n", "<br>").replace("\n", "<br>").replace("\r", "<br>")


def render_md(rows: Sequence[ResultRow]) -> str:
    anchors = [anchor_for(r) for r in rows]
    show_published = any(a is not None for a in anchors)
    titles = [t for t, _, _ in COLUMNS] + (["Published"] if show_published else [])
    numeric = {
        "GPUs",
        "Batch",
        "Samples/s",
        "GPU util %",
        "Mem-ctrl util %",
        "GPU mem GiB",
        "CPU util %",
        "CPU mem GiB",
    }
    lines = [
        "| " + " | ".join(titles) + " |",
        "|" + "|".join("---:" if t in numeric else "---" for t in titles) + "|",
    ]
    for row, anchor in zip(rows, anchors, strict=True):
        values = cells(row) + ([published_cell(anchor)] if show_published else [])
        lines.append("| " + " | ".join(md_escape(v) for v in values) + " |")
    notes = published_notes(anchors)
    if notes:
        lines += ["", "Published figures: " + "; ".join(notes) + "."]
    return "\n".join(lines) + "\n"


def render_csv(rows: Sequence[ResultRow]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow([*CSV_KEYS, "published_samples_per_s", "published_source"])
    for row in rows:
        anchor = anchor_for(row)
        values = ["" if getattr(row, k) is None else getattr(row, k) for k in CSV_KEYS]
        writer.writerow(
            [*values, anchor.samples_per_s if anchor else "", anchor.source if anchor else ""]
        )
    return buf.getvalue()


def render_json(rows: Sequence[ResultRow]) -> str:
    items = []
    for row in rows:
        item = row.as_dict()
        anchor = anchor_for(row)
        item["published"] = anchor.__dict__ if anchor else None
        items.append(item)
    return json.dumps({"zbench_results": 1, "results": items}, indent=2, default=list) + "\n"


def render(rows: Sequence[ResultRow], fmt: str) -> str:
    if fmt == "md":
        return render_md(rows)
    if fmt == "csv":
        return render_csv(rows)
    if fmt == "json":
        return render_json(rows)
    raise FormatError(f"unknown format {fmt!r} (choose md, csv or json)")
