"""A ``probe`` job's run: the supervisor runs ``zbench.runners.microbench`` like any job and stores its
figures as a run, each beside its theoretical peak (``telemetry.specs``, from NVML).

During every GPU-to-GPU copy the supervisor's samples read the NVLink TX counters of the source GPU;
the mean TX rate over the copy's window is stored next to the bandwidth the copy measured, so the
two independent figures check each other. Each copy lasts ``p2p_seconds`` (default 3 s, or
``$ZBENCH_PROBE_P2P_SECONDS``), long enough for several samples and for a separate ``zbench
monitor`` to catch it too. The command is ``jobs/probe_submit.py``.
"""

from __future__ import annotations

import itertools
import socket
import statistics
import time
from collections.abc import Sequence
from typing import Any

from zbench.contract.probe_options import ProbeConfig
from zbench.telemetry.snapshot import NA

PEAK_KEY = {
    "fp32": "fp32_tflops",
    "tf32": "tf32_tflops",
    "fp16": "fp16_tflops",
    "bf16": "bf16_tflops",
}
DEFAULT_INTERVAL_S = 0.5


def read_peaks(backend: Any) -> dict[int, dict[str, Any]]:
    """Per GPU index: the theoretical peaks and NVLink capacity, when NVML is there (static
    figures read once, not samples)."""
    devices = getattr(backend, "devices", None)
    if not devices:
        return {}
    from zbench.telemetry.snapshot import to_dict
    from zbench.telemetry.specs import read_specs

    out = {}
    for d in devices:
        peaks = to_dict(read_specs(backend.nv, d.handle))
        cap = d.nvlink.capacity
        peaks["nvlink_bytes_s"] = (
            None if cap is NA or not d.nvlink.links else cap * len(d.nvlink.links)
        )
        out[d.index] = peaks
    return out


def nvlink_tx_during(
    samples: Sequence[dict[str, Any]], gpu: int, t0: float, t1: float, interval: float
) -> float | None:
    """Mean NVLink TX of ``gpu`` over the job's samples whose whole interval lies in [t0, t1]."""
    rates = [
        float(g["nvl_tx"])
        for s in samples
        if t0 + interval <= float(s["t"]) <= t1
        for g in s.get("gpus", ())
        if g.get("i") == gpu and g.get("nvl_tx") is not None
    ]
    return statistics.mean(rates) if rates else None


def build_rows(
    results: Sequence[dict[str, Any]],
    peaks: dict[int, dict[str, Any]],
    samples: Sequence[dict[str, Any]],
    interval: float,
    gpu_ids: Sequence[int] = (),
) -> list[dict[str, Any]]:
    """One row per figure: name, unit, value, peak, ratio (and the NVLink TX seen for a copy).
    The runner counts the GPUs it was given from 0; ``gpu_ids`` maps them back to the machine's
    indices, which the peaks and the samples use."""

    def machine(i: Any) -> Any:
        return gpu_ids[i] if isinstance(i, int) and 0 <= i < len(gpu_ids) else i

    rows = []
    for r in results:
        test = r["test"]
        gpu = machine(r.get("gpu", r.get("src")))
        p = peaks.get(gpu, {}) if gpu is not None else {}
        row: dict[str, Any] = {"test": test, "gpu": gpu}
        if test == "matmul":
            row.update(
                name=f"matmul {r['dtype']}",
                unit="TFLOPS",
                value=r["tflops"],
                peak=p.get(PEAK_KEY[r["dtype"]]),
            )
        else:
            peak_key = {
                "memcpy": "mem_bw_bytes_s",
                "h2d": "pcie_bytes_s",
                "d2h": "pcie_bytes_s",
                "p2p": "nvlink_bytes_s",
            }[test]
            peak = p.get(peak_key)
            if test == "p2p" and peak is None:
                peak = p.get("pcie_bytes_s")
            dst = machine(r.get("dst"))
            name = {
                "memcpy": "device memory copy",
                "h2d": "pinned host -> device",
                "d2h": "device -> pinned host",
            }.get(test, f"GPU {gpu} -> GPU {dst}")
            row.update(
                name=name,
                unit="GB/s",
                value=r["bytes_s"] / 1e9,
                peak=None if peak is None else peak / 1e9,
            )
            if test == "p2p":
                tx = nvlink_tx_during(samples, gpu, r["t_start"], r["t_end"], interval)
                row["dst"] = dst
                row["nvlink_tx_gb_s"] = None if tx is None else tx / 1e9
        value, peak = row["value"], row.get("peak")
        row["ratio"] = value / peak if peak else None
        rows.append(row)
    return rows


def sample_interval(samples: Sequence[dict[str, Any]]) -> float:
    """The sampling interval, read from the samples' own times."""
    ts = sorted(float(s["t"]) for s in samples)
    steps = [b - a for a, b in itertools.pairwise(ts) if b > a]
    return statistics.median(steps) if steps else DEFAULT_INTERVAL_S


def probe_record(
    row: dict[str, Any],
    gpu_ids: tuple[int, ...],
    start_event: dict[str, Any] | None,
    results: Sequence[dict[str, Any]],
    samples: Sequence[dict[str, Any]],
    peaks: dict[int, dict[str, Any]],
) -> dict[str, Any]:
    """The ``runs`` row of a finished probe job: its figures beside their peaks (``rows``, what
    reports show) and the runner's raw results (``tests``)."""
    from zbench.results.provenance import cpu_model

    raw = [{k: v for k, v in r.items() if k not in ("v", "type")} for r in results]
    env = dict((start_event or {}).get("env") or {})
    names = list(env.get("gpus") or [])
    env.update(
        gpu_names=names,
        host=socket.gethostname(),
        gpu_ids=list(gpu_ids),
        cuda_visible_devices=",".join(str(g) for g in gpu_ids),
    )
    env.setdefault("cpu_model", cpu_model())
    config = ProbeConfig.from_dict(row["config"]).as_dict()
    return {
        "job_id": row["id"],
        "created": time.time(),
        "workload": config["workload"],
        "framework": config["framework"],
        "mode": config["mode"],
        "precision": None,
        "batch_size": None,
        "gpus": len(gpu_ids),
        "gpu_name": names[0] if names else None,
        "samples_per_s": None,
        "config": config,
        "env": env,
        "result": {
            "rows": build_rows(raw, peaks, samples, sample_interval(samples), gpu_ids),
            "tests": raw,
        },
    }
