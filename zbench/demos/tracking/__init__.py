"""Multi-object tracking demo: a detector and an appearance embedding feeding Deep SORT."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

#: The job's option names (the registry's flags) that ``run`` knows by longer names.
RENAMED = {"out": "out_dir", "checkpoint": "checkpoint_dir"}


def job_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """``TrackingOptions`` fields from the registry's options (``--out``, ``--checkpoint``), whose
    defaults are ``TrackingOptions``' own."""
    return {RENAMED.get(k, k): v for k, v in options.items()}


def check(options: Mapping[str, Any]) -> str | None:
    """An ``--input`` that cannot be read here (missing, or a video without OpenCV), or a
    ``--gt`` that is not a file, an ``--out`` or ``--checkpoint`` folder that cannot be written,
    found before a job is queued."""
    import os

    from zbench.contract.inputs import output_problem, video_problem

    gt = options.get("gt")
    if gt is not None and not os.path.isfile(str(gt)):
        return f"--gt {gt}: no such file"
    for name in ("out", "checkpoint"):  # written after training: a bad place lost the run
        path = options.get(name)
        place = path is not None and output_problem(str(path), f"--{name}", folder=True)
        if place:
            return place
    return video_problem(str(options.get("input") or "generated"), "--input", ("generated",))


def run(options: Mapping[str, Any], emit: Callable[..., None]) -> dict[str, Any]:
    """Entry for the demo runner (imports torch only when called)."""
    from zbench.demos.tracking.demo import run as _run

    return _run(job_options(options), emit)
