"""Which GPUs this machine offers jobs, and handing them out so two jobs never share one.

GPU ids are NVML (physical) indices, the same numbers telemetry snapshots carry, and they are what a
job's ``CUDA_VISIBLE_DEVICES`` is set to. When zbench itself runs under ``CUDA_VISIBLE_DEVICES``,
only those GPUs are offered.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence


def visible_gpus() -> list[int]:
    """GPU ids jobs may use: ``CUDA_VISIBLE_DEVICES`` when set (numeric ids), else every GPU NVML
    sees, else none (no driver)."""
    env = os.environ.get("CUDA_VISIBLE_DEVICES")
    if env is not None:
        ids = [p.strip() for p in env.split(",") if p.strip()]
        if all(p.isdigit() for p in ids):
            # A negative or non-numeric entry hides the rest from CUDA, as CUDA itself does.
            return [int(p) for p in ids]
        return list(range(len(ids)))  # UUIDs: CUDA renumbers them 0..n-1
    return _nvml_gpus()


def _nvml_gpus() -> list[int]:
    try:
        import pynvml
    except ImportError:
        return []
    try:
        pynvml.nvmlInit()
    except Exception:
        return []
    try:
        return list(range(pynvml.nvmlDeviceGetCount()))
    finally:
        pynvml.nvmlShutdown()


def allocate(
    want: int,
    requested: Sequence[int] | None,
    available: Sequence[int],
    busy: Iterable[int],
    share: bool = False,
) -> tuple[int, ...] | None:
    """GPUs for a job now, or None when it must wait.

    ``requested`` names exact GPUs (the job waits until all are free unless ``share``); otherwise the
    first ``want`` free ones. ``want == 0`` is a CPU job: it gets ``()`` when no other CPU job runs,
    which the caller tracks (CPU jobs run one at a time).
    """
    busy_set = set(busy)
    if requested:
        if share or not busy_set & set(requested):
            return tuple(requested)
        return None
    if want == 0:
        return ()
    pool = list(available) if share else [g for g in available if g not in busy_set]
    if len(pool) < want:
        return None
    return tuple(pool[:want])
