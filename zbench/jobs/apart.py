"""What sets a job apart from the jobs listed beside it that read alike.

A job is named by its kind, workload, framework, mode and precision (``resnet50 torch train
fp32``); two jobs at batch 2 and batch 4 read the same in a table of jobs while their setups, and
their figures, differ. :func:`apart` gives each such job the options on which its look-alikes
differ, in words (``batch size 2``), read from the job's own stored configuration; a suite's
``--dry-run`` lists its jobs the same way (:func:`differing`)."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Hashable, Sequence
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


def differing(
    items: Sequence[tuple[Hashable, dict[str, Any]]], named: frozenset[str] = NAMED
) -> list[str]:
    """For each (name, configuration): the options, in the order its configuration lists them, on
    which the items sharing its name differ (``batch size 2, preset max``); "" for an item whose
    name no other shares, or whose look-alikes have its configuration (repeats). ``named``: the
    options the name already says."""
    groups: dict[Hashable, list[int]] = defaultdict(list)
    for i, (name, _) in enumerate(items):
        groups[name].append(i)
    out = [""] * len(items)
    for members in groups.values():
        if len(members) < 2:
            continue
        configs = [items[i][1] for i in members]
        keys = list(dict.fromkeys(k for c in configs for k in c if k not in named))
        differ = [k for k in keys if not _same([c.get(k) for c in configs])]
        for i, config in zip(members, configs, strict=True):
            out[i] = ", ".join(f"{k.replace('_', ' ')} {_shown(config.get(k))}" for k in differ)
    return out


def apart(jobs: Sequence[JobInfo], shown: frozenset[str] = NAMED) -> dict[int, str]:
    """Job id -> what sets it apart from the jobs that share its name (:func:`differing`), for
    the jobs that need it. ``shown``: the parts of the name the listing shows (a table without a
    mode column tells a train and an infer job apart in words)."""
    named = [((j.kind, *(getattr(j, f) for f in sorted(NAMED & shown))), j.config) for j in jobs]
    words = differing(named, NAMED & shown)
    return {j.id: w for j, w in zip(jobs, words, strict=True) if w}
