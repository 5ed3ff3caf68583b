"""Per-phase aggregation is NA-aware: missing metrics are excluded, never counted as 0."""

from __future__ import annotations

import pytest

from zbench.results.aggregate import aggregate, aggregate_phase, compact_sample
from zbench.telemetry.snapshot import (
    NA,
    GpmSnapshot,
    GpuSnapshot,
    HostSnapshot,
    NvLinkSnapshot,
    ProcessTreeSnapshot,
    Snapshot,
)


def _snap(
    t: float, util0: float, util1: object = NA, mem0: int = 10, gpm: float | None = None
) -> Snapshot:
    g0 = GpuSnapshot(
        index=0,
        name="H200",
        util_gpu=util0,
        util_mem=NA,
        mem_used_bytes=mem0,
        power_w=100.0,
        gpm=GpmSnapshot(sm_activity=gpm if gpm is not None else NA),
        nvlink=NvLinkSnapshot(tx_bytes_s=5.0, rx_bytes_s=NA),
    )
    g1 = GpuSnapshot(index=1, name="H200", util_gpu=util1, mem_used_bytes=30, power_w=NA)  # type: ignore[arg-type]
    g2 = GpuSnapshot(index=2, name="other job's GPU", util_gpu=1.0, mem_used_bytes=999)
    trees = (
        ProcessTreeSnapshot(pid=42, cpu_pct=150.0, rss_bytes=1000),
        ProcessTreeSnapshot(pid=7, cpu_pct=999.0, rss_bytes=9),
    )
    return Snapshot(t=t, host=HostSnapshot(cpu_pct=50.0), gpus=(g0, g1, g2), trees=trees)


def test_compact_sample_keeps_only_the_jobs_gpus_and_tree() -> None:
    s = compact_sample(_snap(1.0, 80.0), gpu_ids=(0, 1), tree_pid=42, phase="measure")
    assert [g["i"] for g in s["gpus"]] == [0, 1]
    assert s["gpus"][0]["mem_util"] is None and s["gpus"][1]["util"] is None
    assert (s["cpu"], s["rss"], s["phase"]) == (150.0, 1000.0, "measure")


def test_na_values_are_excluded_and_all_na_stays_none() -> None:
    samples = [
        compact_sample(_snap(0.0, 80.0, util1=NA, gpm=40.0), (0, 1), 42, "measure"),
        compact_sample(_snap(0.5, 100.0, util1=60.0, mem0=50), (0, 1), 42, "measure"),
    ]
    m = aggregate_phase(samples)
    # sample 1: only GPU 0 reports (80); sample 2: mean(100, 60) = 80
    assert m["gpu_util_mean"] == pytest.approx(80.0)
    assert m["gpu_util_max"] == 100.0
    assert m["mem_util_mean"] is None and m["mem_util_max"] is None  # never reported: not 0
    assert m["gpu_mem_peak_bytes"] == 50.0  # the busiest GPU's memory
    assert m["gpu_mem_mean_bytes"] == pytest.approx((30.0 + 50.0) / 2)
    assert m["power_mean_w"] == 100.0  # GPU 1's NA power is left out of the sum
    assert m["sm_activity_mean"] == 40.0  # one sample had GPM
    assert m["nvlink_tx_mean_bytes_s"] == 5.0 and m["nvlink_rx_mean_bytes_s"] is None
    assert m["cpu_util_mean"] == 150.0 and m["rss_peak_bytes"] == 1000.0
    assert m["duration_s"] == 0.5 and m["n_samples"] == 2


def test_phases_are_separated() -> None:
    samples = [
        compact_sample(_snap(0.0, 10.0), (0,), 42, "warmup"),
        compact_sample(_snap(1.0, 90.0), (0,), 42, "measure"),
        compact_sample(_snap(2.0, 70.0), (0,), 42, "measure"),
    ]
    phases = aggregate(samples)
    assert phases["warmup"]["gpu_util_mean"] == 10.0
    assert phases["measure"]["gpu_util_mean"] == 80.0


def test_cpu_job_without_gpus() -> None:
    m = aggregate_phase([compact_sample(_snap(0.0, 50.0), (), 42, "measure")])
    assert m["gpu_util_mean"] is None and m["gpu_mem_peak_bytes"] is None
    assert m["cpu_util_mean"] == 150.0
