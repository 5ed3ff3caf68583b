"""The review's table: column titles and how each cell is written, shared by the terminal table and
the Markdown/CSV exports so they always agree."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from zbench.results.anchors import Anchor
from zbench.results.api import ResultRow
from zbench.runners.config import WORKLOADS

FRAMEWORK_NAMES = {"torch": "PyTorch", "tf": "TensorFlow"}
GIB = 1024**3
NA_TEXT = "n/a"


def model_name(workload: str) -> str:
    info = WORKLOADS.get(workload)
    return info.title if info else workload


def _num(fmt: str) -> Callable[[Any], str]:
    return lambda v: NA_TEXT if v is None else format(v, fmt)


def _gib(v: Any) -> str:
    return NA_TEXT if v is None else f"{v / GIB:.1f}"


# (title, value from the row, text for display)
COLUMNS: tuple[tuple[str, Callable[[ResultRow], Any], Callable[[Any], str]], ...] = (
    ("Model", lambda r: model_name(r.workload), str),
    ("Framework", lambda r: FRAMEWORK_NAMES.get(r.framework, r.framework), str),
    ("Mode", lambda r: r.mode, str),
    ("GPUs", lambda r: r.gpus, str),
    ("GPU", lambda r: r.gpu_name, lambda v: v or NA_TEXT),
    ("Precision", lambda r: r.precision, lambda v: (v or "default").upper()),
    ("Batch", lambda r: r.batch_size, lambda v: NA_TEXT if v is None else str(v)),
    ("Samples/s", lambda r: r.samples_per_s, _num(",.1f")),
    ("GPU util %", lambda r: r.gpu_util, _num(".0f")),
    ("Mem-ctrl util %", lambda r: r.mem_util, _num(".0f")),
    ("GPU mem GiB", lambda r: r.gpu_mem_bytes, _gib),
    ("CPU util %", lambda r: r.cpu_util, _num(".0f")),
    ("CPU mem GiB", lambda r: r.cpu_mem_bytes, _gib),
)
CSV_KEYS = [
    "workload",
    "framework",
    "mode",
    "gpus",
    "gpu_name",
    "precision",
    "batch_size",
    "samples_per_s",
    "gpu_util",
    "mem_util",
    "gpu_mem_bytes",
    "cpu_util",
    "cpu_mem_bytes",
    "run_id",
    "job_id",
    "created",
]


def cells(row: ResultRow) -> list[str]:
    return [text(get(row)) for _, get, text in COLUMNS]


def published_cell(anchor: Anchor | None) -> str:
    if anchor is None:
        return ""
    # Short enough for a table cell; published_notes() names the source and its settings.
    return f"{anchor.samples_per_s:,.0f} ({anchor.precision.upper()}, {anchor.gpu})"


def published_notes(anchors: Sequence[Anchor | None]) -> list[str]:
    """One line per published source used in a table: where the figures come from, and how."""
    return sorted({f"{a.gpu}: {a.source} ({a.settings})" for a in anchors if a is not None})
