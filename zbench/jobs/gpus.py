"""Which GPUs this machine offers jobs, and handing them out so two jobs never share one.

GPU ids are NVML (physical) indices, the same numbers telemetry snapshots carry, and they are what a
job's ``CUDA_VISIBLE_DEVICES`` is set to. When zbench itself runs under ``CUDA_VISIBLE_DEVICES``,
only those GPUs are offered.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable, Sequence


def visible_gpus() -> list[int]:
    """GPU ids jobs may use: ``CUDA_VISIBLE_DEVICES`` when set (numeric ids), else every GPU NVML
    sees, else none (no driver)."""
    return offered_gpus()[0]


def offered_gpus() -> tuple[list[int], str]:
    """:func:`visible_gpus` and, when there are none, why, in a few words for an error line."""
    env = os.environ.get("CUDA_VISIBLE_DEVICES")
    if env is None:
        return _nvml_gpus()
    # CUDA reads the list up to its first entry that is neither an index nor a UUID: -1 (or any
    # other word) hides that entry and every one after it.
    parts = [p.strip() for p in env.split(",")]
    valid = list(
        itertools.takewhile(lambda p: p.isdigit() or p.startswith(("GPU-", "MIG-")), parts)
    )
    why = "" if valid else f"CUDA_VISIBLE_DEVICES={env!r} hides every GPU"
    if all(p.isdigit() for p in valid):
        return [int(p) for p in valid], why
    return list(range(len(valid))), why  # UUIDs: CUDA renumbers them 0..n-1


def _nvml_gpus() -> tuple[list[int], str]:
    try:
        import pynvml
    except ImportError:
        return [], "nvidia-ml-py is not installed"
    try:
        pynvml.nvmlInit()
    except Exception as exc:
        return [], f"no NVIDIA driver ({exc})"  # worded as telemetry.nvml words it
    try:
        count = pynvml.nvmlDeviceGetCount()
        return list(range(count)), "" if count else "NVML finds no GPU"
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
