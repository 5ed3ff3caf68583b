"""Which runs a report, a samples export or a chart reads: filters, and the kinds of stored runs.

``RunFilter`` is the report's own small filter (suite, job ids, since, tag, workload, framework,
GPU); it sits on top of ``results.api.query_results`` and is meant to be replaced by the shared run
filters once those exist. Runs are split by kind: benchmark rows (the review's workloads), ``probe``
runs (micro-benchmark figures) and demo runs (a result with a ``demo`` key).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from zbench import paths
from zbench.results.api import ResultRow, parse_since, query_results, review_order
from zbench.results.store import Store

Db = str | os.PathLike[str] | None
PROBE = "probe"


class SelectionError(ValueError):
    """A filter that cannot be applied (one line, exit status 2)."""


@dataclass(frozen=True)
class RunFilter:
    """Every field given must match; empty fields select everything."""

    suite: str | None = None
    job_ids: tuple[int, ...] = ()
    since: str | float | None = None
    tag: str | None = None
    workload: str | None = None
    framework: str | None = None
    gpu: str | None = None
    run_ids: tuple[int, ...] = ()

    def describe(self) -> str:
        parts = []
        if self.suite:
            parts.append(f"suite {self.suite}")
        if self.job_ids:
            parts.append("jobs " + ", ".join(map(str, self.job_ids)))
        if self.since is not None:
            parts.append(f"since {self.since}")
        if self.run_ids:
            parts.append("runs " + ", ".join(map(str, self.run_ids)))
        for name in ("tag", "workload", "framework", "gpu"):
            value = getattr(self, name)
            if value:
                parts.append(f"{name} {value}")
        return "; ".join(parts) or "all runs"


@dataclass
class Selection:
    """The selected runs, split by kind, each kind in the review's order."""

    rows: list[ResultRow] = field(default_factory=list)
    probes: list[ResultRow] = field(default_factory=list)
    demos: list[ResultRow] = field(default_factory=list)

    @property
    def all(self) -> list[ResultRow]:
        return [*self.rows, *self.probes, *self.demos]


def _tag_of(row: ResultRow) -> str | None:
    tag = row.config.get("tag") if isinstance(row.config, dict) else None
    return str(tag) if tag else None


def select(db: Db, flt: RunFilter) -> Selection:
    """The runs ``flt`` selects, split into benchmark, probe and demo runs."""
    try:
        start = parse_since(flt.since)
    except ValueError as exc:
        raise SelectionError(str(exc)) from None
    rows = query_results(
        db, workload=flt.workload, framework=flt.framework, gpu=flt.gpu, since=start,
        run_ids=list(flt.run_ids) or None,
    )  # fmt: skip
    if flt.suite or flt.job_ids:
        jobs = {j["id"]: j for j in Store(paths.db_path(db)).jobs()}
        if flt.job_ids:
            missing = sorted(set(flt.job_ids) - set(jobs))
            if missing:
                raise SelectionError(f"no job {', '.join(map(str, missing))}")
            rows = [r for r in rows if r.job_id in flt.job_ids]
        if flt.suite:
            if not any(j.get("suite") == flt.suite for j in jobs.values()):
                raise SelectionError(f"no jobs of suite {flt.suite!r} in the database")
            rows = [
                r for r in rows if r.job_id in jobs and jobs[r.job_id].get("suite") == flt.suite
            ]
    if flt.tag:
        rows = [r for r in rows if _tag_of(r) == flt.tag]
    out = Selection()
    for r in rows:
        if r.workload == PROBE:
            out.probes.append(r)
        elif isinstance(r.result, dict) and r.result.get("demo"):
            out.demos.append(r)
        else:
            out.rows.append(r)
    out.rows = review_order(out.rows)
    return out


# What makes two runs comparable: the same setup and the same software. Runs that differ in any of
# these are never merged into one chart bar or one table line.
IDENTITY_ENV = ("torch", "tensorflow", "cuda", "cudnn", "driver")


def machine_key(row: ResultRow) -> tuple[Any, ...]:
    """The machine and software a run ran on: GPU model, host, driver and framework versions."""
    env = row.env if isinstance(row.env, dict) else {}
    host = env.get("host") or env.get("hostname")
    return (row.gpu_name, host, *(str(env.get(k)) if env.get(k) is not None else None
                                  for k in IDENTITY_ENV))  # fmt: skip


def setup_key(row: ResultRow) -> tuple[Any, ...]:
    """Runs with equal keys measured the same thing; the newest one stands for them in charts."""
    cfg = row.config if isinstance(row.config, dict) else {}
    return (
        row.workload, row.framework, row.mode, row.gpus, row.precision, row.batch_size,
        cfg.get("image_size"), cfg.get("device"), cfg.get("data"), machine_key(row),
    )  # fmt: skip


def machine_groups(rows: list[ResultRow]) -> list[list[ResultRow]]:
    """Rows split by ``machine_key``, in order of first appearance."""
    groups: dict[tuple[Any, ...], list[ResultRow]] = {}
    for r in rows:
        groups.setdefault(machine_key(r), []).append(r)
    return list(groups.values())


def _slot(r: ResultRow) -> tuple[Any, ...]:
    return (r.workload, r.framework, r.mode, r.gpus, r.precision, machine_key(r))


def chart_rows(rows: list[ResultRow]) -> tuple[list[ResultRow], list[ResultRow]]:
    """Rows fit to share charts, and rows left out of them: in each chart slot (workload,
    framework, mode, GPUs, precision, machine) the newest run's setup stands; runs of another setup there
    (batch, image size, data ...) stay in the tables only, so unlike runs are never compared."""
    newest: dict[tuple[Any, ...], ResultRow] = {}
    for r in rows:
        slot = _slot(r)
        if slot not in newest or (r.created or 0) >= (newest[slot].created or 0):
            newest[slot] = r
    kept: list[ResultRow] = []
    left: list[ResultRow] = []
    for r in rows:
        ref = newest[_slot(r)]
        (kept if setup_key(r) == setup_key(ref) else left).append(r)
    return kept, left
