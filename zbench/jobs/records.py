"""What a job leaves in the store: its ``runs`` row, samples tagged by phase, and the result of a
job whose supervisor died (recovered from its events file)."""

from __future__ import annotations

import bisect
import socket
import time
from collections.abc import Iterable
from typing import Any

from zbench.contract.probe import KIND as PROBE
from zbench.contract.protocol import read_events
from zbench.jobs.probe_record import probe_record
from zbench.results.aggregate import Sample, aggregate
from zbench.results.provenance import cpu_model
from zbench.store import RunFilter, Store


def phase_marks(events: Iterable[dict[str, Any]]) -> list[tuple[float, str]]:
    """(event time, phase) of every ``phase`` event, in time order."""
    marks = [
        (float(ev["t"]), ev["phase"])
        for ev in events
        if ev.get("type") == "phase" and isinstance(ev.get("phase"), str)
    ]
    return sorted(marks)


def retag(samples: list[Sample], marks: list[tuple[float, str]]) -> list[Sample]:
    """Tag each sample with the phase the runner was in at its time (by the events' own
    timestamps: a live tag can lag a phase change, and samples saved before a supervisor died
    may carry none)."""
    times = [t for t, _ in marks]
    for s in samples:
        i = bisect.bisect_right(times, float(s["t"])) - 1
        s["phase"] = marks[i][1] if i >= 0 else "setup"
    return samples


def stored_result(store: Store, row: dict[str, Any]) -> int | None:
    """For a job whose supervisor died: store the result its runner already wrote to its events
    file, as the supervisor would have (run, then phase aggregates of the samples saved so far,
    tagged by the events' phases). Returns the run id; None when there is no result."""
    if row.get("run_id") or not row.get("events_path"):
        return None
    events = list(read_events(row["events_path"]))
    start = next((ev for ev in events if ev["type"] == "start"), None)
    result = next((ev for ev in reversed(events) if ev["type"] == "result"), None)
    if result is None:
        return None
    already = store.runs(RunFilter(job_ids=[row["id"]]))
    if already:
        return int(already[-1]["id"])
    samples = retag(store.samples(row["id"]), phase_marks(events))
    gpu_ids = tuple(row["gpu_ids"] or ())
    if row["config"].get("kind") == PROBE:  # every result event is one figure; no peaks here
        results = [ev for ev in events if ev["type"] == "result"]
        run_id = store.add_run(probe_record(row, gpu_ids, start, results, samples, {}))
    else:
        run_id = store.add_run(run_record(row, gpu_ids, start, result))
    if samples:
        store.replace_samples(row["id"], samples)
        store.set_phase_aggregates(row["id"], run_id, aggregate(samples))
    return run_id


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
