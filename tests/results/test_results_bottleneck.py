"""Bottleneck verdicts over a job's samples: faked windows for each rule, recorded H200 traces, and
the verdict stored with the result and derived again from the samples."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from zbench.results.aggregate import aggregate, compact_sample
from zbench.results.api import job_verdict
from zbench.results.bottleneck import Verdict, bottleneck
from zbench.store import Store
from zbench.telemetry.trace import read_trace

TRACES = Path(__file__).parent.parent / "fixtures" / "traces"


def gpu(**over: Any) -> dict[str, Any]:
    g: dict[str, Any] = {"i": 0, "util": 98.0, "sm": 90.0, "tensor": 70.0, "dram": 30.0}
    g |= {"nvl_tx": 0.0, "nvl_rx": 0.0, "nvl_pct": 0.0, "thr": []}
    return g | over


def sample(
    t: float, *gpus: dict[str, Any], cpu: float = 100.0, host: float = 20.0, phase: str = "measure"
) -> dict[str, Any]:
    return {"t": t, "phase": phase, "gpus": list(gpus) or [gpu()], "cpu": cpu, "host_cpu": host}


def window(n: int = 20, **kw: Any) -> list[dict[str, Any]]:
    return [sample(float(i) / 2, **kw) for i in range(n)]


def test_busy_gpus_are_gpu_bound() -> None:
    v = bottleneck(window())
    assert v is not None and v.kind == "gpu-bound"
    assert "GPU util 98%" in v.line() and v.n_samples == 20 and v.window_s == 9.5


def test_idle_gaps_while_loader_workers_are_busy_are_input_bound() -> None:
    samples = [sample(i / 2, gpu(util=10.0 if i % 3 == 0 else 95.0), cpu=780.0) for i in range(30)]
    v = bottleneck(samples)
    assert v is not None and v.kind == "input-bound"
    assert "GPU util under 50% in 33% of samples" in v.line() and "7.8 cores" in v.line()


def test_one_starved_loader_worker_is_input_bound() -> None:
    # The H200 capture (benchmarks/bottleneck_capture.py): one worker, GPU util 12%, 1.16 cores.
    samples = [sample(i / 2, gpu(util=12.0, sm=10.0, tensor=1.0), cpu=116.0) for i in range(40)]
    v = bottleneck(samples)
    assert v is not None and v.kind == "input-bound"
    assert "1.2 cores" in v.line()


def test_idle_gaps_without_busy_cpus_are_not_input_bound() -> None:
    samples = [sample(i / 2, gpu(util=10.0 if i % 3 == 0 else 95.0), cpu=60.0) for i in range(30)]
    v = bottleneck(samples)
    assert v is not None and v.kind == "unclear"
    assert "no input, link, clock or memory limit" in v.line()


def test_sm_drops_while_nvlink_is_busy_is_communication_bound() -> None:
    samples = [
        sample(i / 2, gpu(nvl_pct=70.0, sm=40.0) if i % 4 == 0 else gpu(nvl_pct=2.0, sm=90.0))
        for i in range(40)
    ]
    v = bottleneck(samples)
    assert v is not None and v.kind == "communication-bound"
    assert "SM activity 40% then vs 90% otherwise" in v.line()


def test_nvlink_without_link_capacity_compares_with_the_window_peak() -> None:
    busy = gpu(nvl_pct=None, nvl_tx=200e9, sm=35.0)
    quiet = gpu(nvl_pct=None, nvl_tx=1e6, sm=92.0)
    v = bottleneck([sample(i / 2, busy if i % 4 == 0 else quiet) for i in range(40)])
    assert v is not None and v.kind == "communication-bound"


def test_throttle_reasons_in_the_window_are_throttled_but_power_cap_is_not() -> None:
    hot = [
        sample(i / 2, gpu(thr=["sw_thermal", "sw_power_cap"] if i < 6 else [])) for i in range(20)
    ]
    v = bottleneck(hot)
    assert v is not None and v.kind == "throttled"
    assert "sw_thermal in 30% of samples" in v.line() and "power_cap" not in v.line()
    capped = bottleneck([sample(i, gpu(thr=["sw_power_cap"])) for i in range(8)])
    assert capped is not None and capped.kind == "gpu-bound"


def test_dram_high_and_tensor_low_is_memory_bound() -> None:
    v = bottleneck([sample(i / 2, gpu(dram=82.0, tensor=3.0)) for i in range(10)])
    assert v is not None and v.kind == "memory-bound"
    assert "DRAM bandwidth 82% while tensor activity 3%" in v.line()


def test_every_rule_that_holds_is_listed_the_main_one_first() -> None:
    g = gpu(dram=82.0, tensor=3.0, thr=["hw_slowdown"])
    v = bottleneck([sample(i / 2, g) for i in range(10)])
    assert v is not None and [f.kind for f in v.findings] == ["throttled", "memory-bound"]


def test_without_gpm_memory_bound_is_not_judged_and_says_so() -> None:
    v = bottleneck([sample(i / 2, gpu(sm=None, tensor=None, dram=None)) for i in range(10)])
    assert v is not None and v.kind == "gpu-bound"
    assert any("no GPM" in n for n in v.notes)


def test_only_the_measured_window_counts() -> None:
    setup = [sample(i / 2, gpu(util=0.0), cpu=800.0, phase="setup") for i in range(40)]
    v = bottleneck(setup + window(10))
    assert v is not None and v.kind == "gpu-bound" and v.measured and v.n_samples == 10
    running = bottleneck(setup)  # no measure phase yet: what there is
    assert running is not None and not running.measured and running.kind == "input-bound"


def test_too_few_samples_a_cpu_run_and_none_at_all() -> None:
    assert bottleneck([]) is None
    cpu_run = bottleneck([{"t": i, "phase": "measure", "gpus": [], "cpu": 400.0} for i in range(9)])
    assert cpu_run is not None and cpu_run.kind == "unknown" and "CPU run" in cpu_run.line()
    v = bottleneck(window(3))
    assert v is not None and v.kind == "unknown" and "3 samples" in v.line()


@pytest.mark.parametrize(
    ("trace", "kind"),
    [("matmul", "gpu-bound"), ("copy", "communication-bound"), ("idle", "unclear")],
)
def test_recorded_h200_traces(trace: str, kind: str) -> None:
    snaps = list(read_trace(TRACES / f"h200x2-{trace}.jsonl.gz"))
    v = bottleneck([compact_sample(s, [0, 1], None, "measure") for s in snaps])
    assert v is not None and v.kind == kind, v.line()


def test_stored_with_the_result_and_derivable_from_the_samples(tmp_path: Path) -> None:
    db = tmp_path / "z.db"
    store = Store(db)
    samples = [sample(i / 2, gpu(dram=82.0, tensor=3.0)) for i in range(10)]
    store.add_samples(1, samples)
    derived = job_verdict(1, db)  # a running job: from its samples so far
    assert isinstance(derived, Verdict) and derived.kind == "memory-bound"
    phases = aggregate(samples)
    assert phases["measure"]["verdict"]["kind"] == "memory-bound"
    stored = phases["measure"]["verdict"] | {"kind": "throttled"}  # the stored one wins
    store.set_phase_aggregates(1, None, {"measure": phases["measure"] | {"verdict": stored}})
    assert job_verdict(1, db).kind == "throttled"
    assert Verdict.from_dict(derived.as_dict()) == derived
    assert job_verdict(2, db) is None
