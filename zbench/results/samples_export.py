"""``zbench export --samples``: the raw 0.5 s samples of the selected runs, one row per sample and
GPU, as CSV or JSON lines (host and process-tree columns repeat on each GPU's row)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from zbench.csvcell import write_rows
from zbench.results.api import ResultRow, read_store
from zbench.results.export import FormatError
from zbench.results.selection import Db

SAMPLE_FORMATS = ("csv", "jsonl")
RUN_KEYS = ("run_id", "job_id", "workload", "framework", "mode", "gpus", "precision")
SAMPLE_KEYS = ("t", "phase")
GPU_KEYS: tuple[str, ...] = (
    "gpu",
    "util",
    "mem_util",
    "mem",
    "power",
    "sm",
    "tensor",
    "dram",
    "nvl_tx",
    "nvl_rx",
    "nvl_pct",  # the busiest direction's share of the links' capacity (bottleneck verdicts)
)
# What the provenance warnings are made of: clock-event reasons, other processes on the GPU.
GPU_KEYS += ("thr", "others", "others_mem")
HOST_KEYS = ("cpu", "rss", "host_cpu", "host_ram", "ncpu")
KEYS = (*RUN_KEYS, *SAMPLE_KEYS, *GPU_KEYS, *HOST_KEYS)


def sample_rows(rows: Sequence[ResultRow], db: Db) -> Iterator[dict[str, Any]]:
    """One flat dict per sample and GPU (``gpu`` is None for a sample without GPUs)."""
    store = read_store(db)
    for r in rows:
        if r.job_id is None:
            continue
        run = {k: getattr(r, k) for k in RUN_KEYS}
        for s in store.samples(r.job_id):
            base = {**run, **{k: s.get(k) for k in SAMPLE_KEYS}}
            host = {k: s.get(k) for k in HOST_KEYS}
            for g in s.get("gpus") or [{}]:
                gpu = {k: g.get(k) for k in GPU_KEYS if k != "gpu"}
                yield {**base, "gpu": g.get("i"), **gpu, **host}


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    return ";".join(map(str, value)) if isinstance(value, list) else value


def render_samples(rows: Sequence[ResultRow], fmt: str, db: Db) -> str:
    """The runs' raw samples as CSV or JSON lines; ValueError for another format."""
    if fmt not in SAMPLE_FORMATS:
        raise FormatError.unknown(fmt, SAMPLE_FORMATS, "--samples: ")
    items = sample_rows(rows, db)
    if fmt == "jsonl":
        return "".join(json.dumps(item) + "\n" for item in items)
    keys = list(KEYS)
    return write_rows(keys, ([_cell(item.get(k)) for k in keys] for item in items))
