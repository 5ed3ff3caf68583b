"""Measurement rules, framework-free: window statistics and the one result record.

The runners own the timing (they know how to synchronize their device); this module turns what they
timed into the one result record both frameworks report, so a torch row and a tf row mean the same.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from zbench.contract.events import Result


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile (q in 0..100), like numpy's default."""
    if not values:
        return math.nan
    data = sorted(values)
    if len(data) == 1:
        return data[0]
    pos = (len(data) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(data) - 1)
    return data[lo] + (data[hi] - data[lo]) * (pos - lo)


def window_stats(
    step_times_s: Sequence[float], samples_per_step: int, window_s: float
) -> dict[str, float | int]:
    """One measured window: throughput = samples / wall time of the window (device synchronized at
    both edges), plus median and p90 of the per-step times (host-side, for shape, not for rate)."""
    steps = len(step_times_s)
    samples = steps * samples_per_step
    return {
        "steps": steps,
        "samples": samples,
        "window_s": window_s,
        "samples_per_s": samples / window_s if window_s > 0 else math.nan,
        "step_time_median_ms": 1000.0 * statistics.median(step_times_s) if steps else math.nan,
        "step_time_p90_ms": 1000.0 * percentile(step_times_s, 90) if steps else math.nan,
    }


def combine_repeats(windows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Several measured windows of the same config: the median window's figures, plus the spread."""
    if not windows:
        raise ValueError("no measured window")
    rates = [float(w["samples_per_s"]) for w in windows]
    median_rate = statistics.median(rates)
    # The window whose rate is closest to the median gives the step-time figures.
    pick = min(windows, key=lambda w: abs(float(w["samples_per_s"]) - median_rate))
    out = dict(pick)
    out["samples_per_s"] = median_rate
    out["repeats"] = len(windows)
    out["samples_per_s_all"] = rates
    out["samples_per_s_min"] = min(rates)
    out["samples_per_s_max"] = max(rates)
    out["samples_per_s_spread_pct"] = (
        100.0 * (max(rates) - min(rates)) / median_rate if median_rate > 0 else math.nan
    )
    return out


@dataclass(frozen=True)
class RunFacts:
    """What a result reports about the run besides its windows (the same for every framework)."""

    workload: str
    framework: str
    mode: str
    unit: str
    batch_size: int  # per GPU
    gpus: int  # replicas in the whole job
    precision: str
    precision_detail: str
    data: str
    image_size: int
    xla: bool
    warmup_steps: int
    settings: dict[str, Any]


def build_result(
    windows: Sequence[dict[str, Any]],
    facts: RunFacts,
    *,
    compile_s: float | None,
    peak_allocated: int | None,
    peak_reserved: int | None,
    planned: int | None = None,
) -> Result:
    """The one result record: every framework's ``result`` event is made here. ``planned``: the
    windows asked for, when the run was stopped after fewer (``windows`` are the whole ones)."""
    c = combine_repeats(windows)
    return Result(
        workload=facts.workload,
        framework=facts.framework,
        mode=facts.mode,
        samples_per_s=c["samples_per_s"],
        samples_per_s_per_gpu=c["samples_per_s"] / facts.gpus,
        samples_per_s_rank0=c.get("samples_per_s_rank0", c["samples_per_s"]),
        samples=int(c["samples"]),
        steps=int(c["steps"]),
        window_s=c["window_s"],
        step_time_median_ms=c["step_time_median_ms"],
        step_time_p90_ms=c["step_time_p90_ms"],
        step_time_source=c.get("step_time_source", "host"),
        repeats=c["repeats"],
        samples_per_s_all=c["samples_per_s_all"],
        samples_per_s_min=c["samples_per_s_min"],
        samples_per_s_max=c["samples_per_s_max"],
        samples_per_s_spread_pct=c["samples_per_s_spread_pct"],
        unit=facts.unit,
        batch_size=facts.batch_size,
        global_batch=facts.batch_size * facts.gpus,
        gpus=facts.gpus,
        scaling={"mode": "weak", "world_size": facts.gpus, "per_gpu_batch": facts.batch_size},
        compile_s=compile_s,
        warmup_steps=facts.warmup_steps,
        precision=facts.precision,
        precision_detail=facts.precision_detail,
        data=facts.data,
        image_size=facts.image_size,
        xla=facts.xla,
        settings=facts.settings,
        peak_mem_allocated_bytes=peak_allocated,
        peak_mem_reserved_bytes=peak_reserved,
        peak_mem_bytes=peak_allocated,
        repeats_planned=planned if planned is not None and planned > len(windows) else None,
    )


def _short(value: Any) -> Any:
    """A summary value as the report shows it: floats to four significant digits."""
    if isinstance(value, float) and math.isfinite(value):
        return float(f"{value:.4g}")
    return value


def build_demo_result(
    demo: str,
    title: str,
    figures: dict[str, Any],
    *,
    summary: Sequence[tuple[str, Any]] = (),
    series: Sequence[tuple[str, str, str, Sequence[Sequence[float]]]] = (),
) -> dict[str, Any]:
    """The one result record of a demo: its own figures, plus ``summary`` (label -> value, the
    missing ones left out) and ``series`` (name -> x label, unit, ``[[x, y], ...]``), which the
    report draws without knowing the demo (docs/demos.md)."""
    return {
        **{k: v for k, v in figures.items() if k not in ("summary", "series")},
        "demo": demo,
        "title": title,
        "summary": {label: _short(v) for label, v in summary if v is not None},
        "series": {
            name: {"x": x, "unit": unit, "points": [[float(a), float(b)] for a, b in points]}
            for name, x, unit, points in series
            if points
        },
    }
