"""What sets a job apart from the jobs listed beside it that read alike.

A job is named by its kind, workload, framework, mode and precision (``resnet50 torch train
fp32``); two jobs at batch 2 and batch 4 read the same in a table of jobs while their setups, and
their figures, differ. :func:`apart` gives each such job the options on which its look-alikes
differ, in words (``batch size 2``), read from the job's own stored configuration."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from zbench.jobs.api import JobInfo

# Already in a job's name, so never what sets it apart in words.
NAMED = frozenset({"workload", "framework", "mode", "precision"})


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if value is None:
        return "default"
    if isinstance(value, list | tuple):
        return ",".join(map(str, value)) or "none"
    return str(value)


def _same(values: Sequence[Any]) -> bool:
    return len({json.dumps(v, sort_keys=True, default=str) for v in values}) == 1


def apart(jobs: Sequence[JobInfo]) -> dict[int, str]:
    """Job id -> the options (in the order its configuration lists them) on which the jobs that
    share its name differ: ``batch size 2, preset max``. Jobs whose name no other shares, and
    look-alikes with equal configurations (repeats), get nothing."""
    groups: dict[tuple[Any, ...], list[JobInfo]] = defaultdict(list)
    for job in jobs:
        groups[(job.kind, job.workload, job.framework, job.mode, job.precision)].append(job)
    out: dict[int, str] = {}
    for members in groups.values():
        if len(members) < 2:
            continue
        keys = list(dict.fromkeys(k for j in members for k in j.config if k not in NAMED))
        differ = [k for k in keys if not _same([j.config.get(k) for j in members])]
        for job in members:
            if differ:
                words = (f"{k.replace('_', ' ')} {_shown(job.config.get(k))}" for k in differ)
                out[job.id] = ", ".join(words)
    return out
