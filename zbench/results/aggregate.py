"""Per-phase aggregation of a job's telemetry samples.

A *sample* is the compact, JSON-ready record the supervisor keeps for each telemetry snapshot (every
0.5 s by default): the job's GPUs and its runner's process tree only, tagged with the runner's phase
at that moment. Aggregation is NA-aware: a metric the hardware does not offer is ``None`` in a sample,
is left out of means and maxima, and a metric that is ``None`` in every sample stays ``None``: it is
never reported as 0.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any

from zbench.results.bottleneck import bottleneck, throttle_fractions
from zbench.telemetry.snapshot import NA, Snapshot

Sample = dict[str, Any]


def _num(value: Any) -> float | None:
    if value is NA or value is None:
        return None
    return float(value)


def _others(g: Any, own: set[int]) -> tuple[int | None, float | None]:
    """Processes on a GPU that are not the job's, and their memory. Unknown (None) when none of the
    GPU's processes is recognised as the job's: in a container NVML reports the host's pids, and
    every process would otherwise look foreign."""
    procs = list(g.processes)
    if not procs or not own or not any(p.pid in own for p in procs):
        return None, None
    foreign = [p for p in procs if p.pid not in own]
    mem = _sum(_num(p.used_memory_bytes) for p in foreign)
    return len(foreign), mem


def compact_sample(
    snap: Snapshot,
    gpu_ids: Sequence[int],
    tree_pid: int | None,
    phase: str | None,
    own_pids: Collection[int] = (),
) -> Sample:
    """The part of ``snap`` that belongs to one job (its GPUs and its runner's process tree).
    ``own_pids``: the runner's process tree, so other processes on the job's GPUs can be told."""
    wanted = set(gpu_ids)
    own = set(own_pids) | ({tree_pid} if tree_pid is not None else set())
    gpus = []
    for g in snap.gpus:
        if g.index not in wanted:
            continue
        others, others_mem = _others(g, own)
        throttle = g.throttle_reasons
        gpus.append(
            {
                "i": g.index,
                "util": _num(g.util_gpu),
                "mem_util": _num(g.util_mem),
                "mem": _num(g.mem_used_bytes),
                "power": _num(g.power_w),
                "sm": _num(g.gpm.sm_activity),
                "tensor": _num(g.gpm.tensor_activity),
                "dram": _num(g.gpm.dram_bw_util),
                "nvl_tx": _num(g.nvlink.tx_bytes_s),
                "nvl_rx": _num(g.nvlink.rx_bytes_s),
                "nvl_pct": _max([_num(g.nvlink.tx_pct), _num(g.nvlink.rx_pct)]),
                "thr": list(throttle) if isinstance(throttle, tuple) else None,
                "others": others,
                "others_mem": others_mem,
            }
        )
    cpu = rss = None
    for tree in snap.trees:
        if tree.pid == tree_pid:
            cpu, rss = _num(tree.cpu_pct), _num(tree.rss_bytes)
    return {
        "t": snap.t,
        "phase": phase,
        "gpus": gpus,
        "cpu": cpu,
        "rss": rss,
        "host_cpu": _num(snap.host.cpu_pct),
        "host_ram": _num(snap.host.ram_used_bytes),
        "ncpu": len(snap.host.per_core_pct) or None,
    }


def _present(values: Iterable[float | None]) -> list[float]:
    return [v for v in values if v is not None]


def _mean(values: Iterable[float | None]) -> float | None:
    vals = _present(values)
    return sum(vals) / len(vals) if vals else None


def _max(values: Iterable[float | None]) -> float | None:
    vals = _present(values)
    return max(vals) if vals else None


def _sum(values: Iterable[float | None]) -> float | None:
    vals = _present(values)
    return sum(vals) if vals else None


def _across(
    sample: Sample, key: str, combine: Callable[[Iterable[float | None]], float | None]
) -> float | None:
    return combine(g.get(key) for g in sample.get("gpus", ()))


def aggregate_phase(samples: Sequence[Sample]) -> dict[str, Any]:
    """Mean and max of each metric over ``samples`` (one phase).

    Across the job's GPUs, utilization is averaged, memory is the busiest GPU's (so 1-GPU and N-GPU
    runs compare per GPU), power and NVLink traffic are summed.
    """
    util = [_across(s, "util", _mean) for s in samples]
    mem_util = [_across(s, "mem_util", _mean) for s in samples]
    mem = [_across(s, "mem", _max) for s in samples]
    power = [_across(s, "power", _sum) for s in samples]
    ts = [float(s["t"]) for s in samples]
    return {
        "n_samples": len(samples),
        "duration_s": (max(ts) - min(ts)) if ts else None,
        "gpu_util_mean": _mean(util),
        "gpu_util_max": _max(_across(s, "util", _max) for s in samples),
        "mem_util_mean": _mean(mem_util),
        "mem_util_max": _max(_across(s, "mem_util", _max) for s in samples),
        "gpu_mem_mean_bytes": _mean(mem),
        "gpu_mem_peak_bytes": _max(mem),
        "power_mean_w": _mean(power),
        "power_max_w": _max(power),
        "sm_activity_mean": _mean(_across(s, "sm", _mean) for s in samples),
        "tensor_activity_mean": _mean(_across(s, "tensor", _mean) for s in samples),
        "dram_bw_util_mean": _mean(_across(s, "dram", _mean) for s in samples),
        "nvlink_tx_mean_bytes_s": _mean(_across(s, "nvl_tx", _sum) for s in samples),
        "nvlink_rx_mean_bytes_s": _mean(_across(s, "nvl_rx", _sum) for s in samples),
        "cpu_util_mean": _mean(s.get("cpu") for s in samples),
        "cpu_util_max": _max(s.get("cpu") for s in samples),
        "rss_mean_bytes": _mean(s.get("rss") for s in samples),
        "rss_peak_bytes": _max(s.get("rss") for s in samples),
        "host_cpu_mean": _mean(s.get("host_cpu") for s in samples),
        "host_cpu_max": _max(s.get("host_cpu") for s in samples),
        "other_procs_max": _max(_across(s, "others", _sum) for s in samples),
        "other_mem_max_bytes": _max(_across(s, "others_mem", _sum) for s in samples),
        "throttle_frac": throttle_fractions(samples),
    }


def aggregate(samples: Sequence[Sample]) -> dict[str, dict[str, Any]]:
    """Per phase (``setup``, ``warmup``, ``measure``, ...; untagged samples under ``none``). The
    ``measure`` phase also carries the bottleneck verdict (``results.bottleneck``) as a dict."""
    by_phase: dict[str, list[Sample]] = {}
    for s in samples:
        by_phase.setdefault(s.get("phase") or "none", []).append(s)
    out = {phase: aggregate_phase(group) for phase, group in by_phase.items()}
    if "measure" in out:
        verdict = bottleneck(by_phase["measure"])
        out["measure"]["verdict"] = verdict.as_dict() if verdict else None
    return out
