"""What a job leaves in the store: its ``runs`` row, samples tagged by phase, and the result of a
job whose supervisor died (recovered from its events file)."""

from __future__ import annotations

import bisect
import socket
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from zbench.contract import kinds
from zbench.contract.events import Event, PhaseEvent
from zbench.contract.events import read as read_typed
from zbench.jobs.probe_record import probe_record
from zbench.results.aggregate import Sample, aggregate
from zbench.results.provenance import cpu_model
from zbench.store import RunFilter, Store


def phase_marks(events: Iterable[Event]) -> list[tuple[float, str]]:
    """(event time, phase) of every ``phase`` event, in time order."""
    return sorted((ev.t, ev.phase) for ev in events if isinstance(ev, PhaseEvent))


def retag(samples: list[Sample], marks: list[tuple[float, str]]) -> list[Sample]:
    """Tag each sample with the phase the runner was in at its time (by the events' own
    timestamps: a live tag can lag a phase change, and samples saved before a supervisor died
    may carry none)."""
    times = [t for t, _ in marks]
    for s in samples:
        i = bisect.bisect_right(times, float(s["t"])) - 1
        s["phase"] = marks[i][1] if i >= 0 else "setup"
    return samples


# A job stopped (or lost) after its runner wrote its result: the reason says the result is kept.
RESULT_STORED = "its result was already written and is stored"


def stored_result(store: Store, row: dict[str, Any]) -> int | None:
    """For a job whose supervisor died: store the result its runner already wrote to its events
    file, as the supervisor would have (run, then phase aggregates of the samples saved so far,
    tagged by the events' phases). Returns the run id; None when there is no result."""
    if row.get("run_id") or not row.get("events_path"):
        return None
    events = list(read_typed(row["events_path"]))
    start = next((ev.as_record() for ev in events if ev.type == "start"), None)
    results = [ev.as_record() for ev in events if ev.type == "result"]
    if not results:
        return None
    already = store.run_rows(RunFilter(job_ids=[row["id"]]))
    if already:
        return already[-1].id
    samples = retag(store.samples(row["id"]), phase_marks(events))
    measured = Measured(row, tuple(row["gpu_ids"] or ()), start, results, samples)
    run_id = store.add_run(build_run(measured))  # a probe's figures stand here without peaks
    if samples:
        store.replace_samples(row["id"], samples)
        store.set_phase_aggregates(row["id"], run_id, aggregate(samples))
    return run_id


@dataclass
class Measured:
    """What a finished job measured: its row, GPUs, ``start`` and ``result`` events, samples, and
    (for a kind whose figures stand beside them) the GPUs' peaks."""

    row: dict[str, Any]
    gpu_ids: tuple[int, ...]
    start: dict[str, Any] | None
    results: Sequence[dict[str, Any]]
    samples: Sequence[Any] = ()
    peaks: dict[int, dict[str, Any]] = field(default_factory=dict)
    gpu_names: tuple[str, ...] = ()


def _one_result(m: Measured) -> dict[str, Any]:
    last = m.results[-1] if m.results else None
    return run_record(m.row, m.gpu_ids, m.start, last, m.gpu_names)


def _figures(m: Measured) -> dict[str, Any]:
    return probe_record(m.row, m.gpu_ids, m.start, m.results, m.samples, m.peaks)


# How each ``record`` of the kinds table (contract.kinds) becomes a ``runs`` row.
BUILDERS: dict[str, Callable[[Measured], dict[str, Any]]] = {
    "result": _one_result,
    "figures": _figures,
}
PEAKS = frozenset({"figures"})  # the records that put each figure beside the GPUs' peaks


def wants_peaks(row: dict[str, Any]) -> bool:
    """Whether the job's stored run shows the GPUs' peaks (read once, by the supervisor)."""
    return kinds.get(row["kind"]).record in PEAKS


def build_run(m: Measured) -> dict[str, Any]:
    """The ``runs`` row of a finished job, built as its kind's row says, carrying its kind."""
    kind = kinds.get(m.row["kind"])
    return {**BUILDERS[kind.record](m), "kind": kind.name}


def run_record(
    row: dict[str, Any],
    gpu_ids: tuple[int, ...],
    start_event: dict[str, Any] | None,
    result_event: dict[str, Any] | None,
    gpu_names: tuple[str, ...] = (),
) -> dict[str, Any]:
    """The ``runs`` row for a job's result event: full config and environment."""
    result = {k: v for k, v in (result_event or {}).items() if k not in ("v", "type")}
    start = start_event or {}
    config = dict(row["config"])
    resolved = start.get("config") or result.get("config") or {}
    if isinstance(resolved, dict):
        config.update(resolved)
    env = dict(start.get("env") or start.get("environment") or {})
    if not env.get("gpu_names"):
        env["gpu_names"] = list(gpu_names)
    env["host"] = socket.gethostname()
    env.setdefault("cpu_model", cpu_model())
    env["gpu_ids"] = list(gpu_ids)
    env["cuda_visible_devices"] = ",".join(str(g) for g in gpu_ids)
    names = env.get("gpu_names") or []
    gpus = len(gpu_ids) if gpu_ids else 0
    return {
        "job_id": row["id"],
        "created": time.time(),
        "workload": config.get("workload", row["workload"]),
        "framework": config.get("framework", row["framework"]),
        "mode": config.get("mode", row["mode"]),
        "precision": result.get("precision") or config.get("precision"),
        "batch_size": result.get("batch_size") or config.get("batch_size"),
        "gpus": int(result.get("gpus") or gpus) if config.get("device") != "cpu" else 0,
        "gpu_name": names[0] if names else ("CPU" if not gpus else None),
        "samples_per_s": result.get("samples_per_s"),
        "config": config,
        "env": env,
        "result": result,
    }
