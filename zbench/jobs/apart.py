"""What sets a job apart from the jobs listed beside it that read alike.

A job is named by its kind, workload, framework, mode and precision (``resnet50 torch train
fp32``); two jobs at batch 2 and batch 4 read the same in a table of jobs while their setups, and
their figures, differ. :func:`apart` gives each such job the setup fields on which its look-alikes
differ, in words (``batch per GPU 2``): a result's identity fields (``results.identity``, as the
results tables and ``compare`` name them), read from the job's own stored configuration, in the
order its results show them (:func:`in_results_order`); a suite's ``--dry-run`` lists its jobs
the same way (:func:`differing`). A table that cuts the words (the TUI's) may have each job's
lead with what tells it from its nearest look-alikes (``lead``), so the cut keeps the
difference."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Hashable, Iterable, Iterator, Sequence
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from zbench.contract import kinds

if TYPE_CHECKING:
    from zbench.jobs.api import JobInfo

# Already in a job's name, so never what sets it apart in words.
NAMED = frozenset({"workload", "framework", "mode", "precision"})
# Not a job's setup: its run finds the GPU model (a queued job has none yet).
FOUND = frozenset({"gpu_model"})
# Not a result's identity (``results.identity.CONFIG_NOT_IDENTITY``: they do not change a speed),
# but what a user asked of the job: two jobs at seeds 1 and 2 must not list alike.
ASKED = ("seed", "repeat")


def setup(config: dict[str, Any]) -> dict[str, Any]:
    """A job's setup fields: ``results.identity.fields`` of the run its configuration asks for,
    and the ``ASKED`` fields it sets."""
    # Imported when two jobs read alike: `zbench jobs` on a plain list loads no results code.
    from zbench.results.identity import fields

    run = SimpleNamespace(
        **{k: config.get(k) for k in ("workload", "framework", "mode", "precision")},
        batch_size=config.get("batch_size"),
        gpus=config.get("gpus"),
        gpu_name=None,
        config=config,
        env={},
        result={},
    )
    return {**fields(run), **{k: config[k] for k in ASKED if config.get(k) is not None}}


def _words(key: str, value: Any) -> str:
    from zbench.results.identity import label

    # None in a job's configuration: the preset (or the runner) chooses.
    return f"{label(key)} {_value(value)}"


def _leading(values: Sequence[dict[str, str]], i: int, keys: Sequence[str]) -> list[str]:
    """``keys`` for item ``i``, those on which it differs from its nearest look-alikes (fewest
    differing fields) first; ties keep ``keys``' order. Two jobs that differ in one late field
    (preset max vs review) then lead with it, however many fields other look-alikes differ in."""
    me = values[i]
    others = [v for j, v in enumerate(values) if j != i]
    distance = [sum(v[k] != me[k] for k in keys) for v in others]
    far = len(keys) + 1  # no look-alike differs in it (a field only repeats of ``i`` share)
    nearest = {
        k: min((d for v, d in zip(others, distance, strict=True) if v[k] != me[k]), default=far)
        for k in keys
    }
    return sorted(keys, key=nearest.__getitem__)


def _value(value: Any) -> str:
    from zbench.results.identity import value_text

    return "default" if value is None else value_text(value)


def in_results_order(keys: Iterable[str], config: dict[str, Any]) -> list[str]:
    """Setup fields of a job of this configuration in the order its results show them: a
    benchmark's as the results table's columns (``results.format.setup_order``), a demo's as
    ``zbench demo results`` does, in its options' order (the contract's demo table)."""
    from zbench.results.format import setup_order

    if kinds.of_dict(config).section == "demos":
        from zbench.contract.demos import known

        entry = known(str(config.get("workload") or config.get("demo")))
        return setup_order(keys, [o.name for o in entry.options] if entry is not None else [])
    return setup_order(keys)


def _groups(
    items: Sequence[tuple[Hashable, dict[str, Any]]], named: frozenset[str]
) -> Iterator[tuple[list[int], list[str], list[dict[str, Any]]]]:
    """Each group of items that share a name: their indices, the setup fields on which they
    differ (in results order) and each one's setup fields."""
    groups: dict[Hashable, list[int]] = defaultdict(list)
    for i, (name, _) in enumerate(items):
        groups[name].append(i)
    for members in groups.values():
        if len(members) < 2:
            continue
        from zbench.results.identity import differing as differing_fields

        setups = [setup(items[i][1]) for i in members]
        keys = in_results_order(differing_fields(setups, named | FOUND), items[members[0]][1])
        yield members, keys, setups


def differing(
    items: Sequence[tuple[Hashable, dict[str, Any]]],
    named: frozenset[str] = NAMED,
    terse: str | None = None,
    lead: bool = False,
) -> list[str]:
    """For each (name, configuration): the setup fields on which the items sharing its name
    differ (``batch per GPU 2, preset max``), in the order their results show them
    (:func:`in_results_order`); "" for an item whose name no other shares, or whose look-alikes
    have its setup (repeats). ``named``: the fields the name already says. ``lead``: each item's
    words led by what tells it from its nearest look-alikes (:func:`_leading`), for a cell that
    is cut. ``terse``: a separator; the values alone, joined by it (``2 · max``), in one order for
    the whole group (without names, a place must mean the same field on every row), for a cell
    too narrow for the words."""
    out = [""] * len(items)
    for members, keys, setups in _groups(items, named):
        values = [{k: json.dumps(s.get(k), sort_keys=True) for k in keys} for s in setups]
        for n, (i, s) in enumerate(zip(members, setups, strict=True)):
            if terse is not None:
                out[i] = f" {terse} ".join(_value(s.get(k)) for k in keys)
            else:
                order = _leading(values, n, keys) if lead else keys
                out[i] = ", ".join(_words(k, s.get(k)) for k in order)
    return out


def _named(jobs: Sequence[JobInfo], shown: frozenset[str]) -> list[tuple[Hashable, dict[str, Any]]]:
    """Each job as (the name a listing showing ``shown`` gives it, its configuration)."""
    return [((j.kind, *(getattr(j, f) for f in sorted(NAMED & shown))), _config(j)) for j in jobs]


def apart(
    jobs: Sequence[JobInfo],
    shown: frozenset[str] = NAMED,
    terse: str | None = None,
    lead: bool = False,
) -> dict[int, str]:
    """Job id -> what sets it apart from the jobs that share its name (:func:`differing`), for
    the jobs that need it. ``shown``: the parts of the name the listing shows (a table without a
    mode column tells a train and an infer job apart in words); ``terse``: values alone, joined
    by this separator; ``lead``: each job's words led by its nearest difference."""
    words = differing(_named(jobs, shown), NAMED & shown, terse, lead)
    return {j.id: w for j, w in zip(jobs, words, strict=True) if w}


def named_apart(jobs: Sequence[JobInfo]) -> dict[int, str]:
    """Job id -> the job as a table of jobs names it: its workload, framework and mode, then its
    qualifiers in the order its results show them (:func:`in_results_order`), in brackets: its
    precision, and the setup fields that tell it from the jobs that read alike (:func:`apart`).
    ``resnet50 torch train (gpus 2, bf16, batch per GPU 8, compile on)``."""
    fields: dict[int, dict[str, Any]] = {j.id: {} for j in jobs}
    for members, keys, setups in _groups(_named(jobs, NAMED), NAMED):
        for i, s in zip(members, setups, strict=True):
            fields[jobs[i].id] = {k: s.get(k) for k in keys}
    out = {}
    for j in jobs:
        mine = {**fields[j.id], **({"precision": j.precision} if j.precision else {})}
        order = in_results_order(mine, _config(j)) if len(mine) > 1 else list(mine)
        # bf16 says what it is; the others are named as the results name them
        words = [str(mine[k]) if k == "precision" else _words(k, mine[k]) for k in order]
        name = f"{j.workload} {j.framework} {j.mode}"
        out[j.id] = f"{name} ({', '.join(words)})" if words else name
    return out


def _config(job: JobInfo) -> dict[str, Any]:
    """A job's configuration with the parts of its name (a demo's config may lack them)."""
    return {**{f: getattr(job, f) for f in sorted(NAMED)}, **job.config}


# Said elsewhere wherever one job is shown: its name, the GPUs it got, what kind of job it is.
NOT_SETUP = NAMED | FOUND | {"gpus", "kind", "demo"}


def whole_setup(job: JobInfo) -> str:
    """A job's whole setup in words (``batch per GPU 256, steps 50, ...``), in the order its
    results show the fields (``in_results_order``), as the results name each field: what a view
    of that one job shows, where the jobs table shows only what tells look-alikes apart, and cuts
    it."""
    if not job.config:  # none stored (a job from before configurations were kept)
        return ""
    config = _config(job)
    fields = setup(config)
    keys = in_results_order((k for k in fields if k not in NOT_SETUP), config)
    return ", ".join(_words(k, fields[k]) for k in keys)
