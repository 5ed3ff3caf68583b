"""The timed loop: warm-up excluded, the window closed by fetching a value from the device."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from zbench.runners.measure import window_stats
from zbench.runners.protocol import EventWriter
from zbench.runners.tf.steps import Step


@dataclass(frozen=True)
class Measured:
    windows: list[dict[str, Any]]
    compile_s: float


def measure(
    step: Step,
    next_batch: Callable[[], Any],
    *,
    steps: int,
    warmup: int,
    repeat: int,
    samples_per_step: int,
    writer: EventWriter,
) -> Measured:
    """Run the first step (tracing, XLA compilation) apart, the remaining warm-up steps, then
    ``repeat`` measured windows of ``steps`` steps.

    ``.numpy()`` copies the step's scalar to the host, which waits for every kernel the step
    enqueued: the device is idle at both edges of each window, so samples / window wall time is the
    real rate. Per-step times are host-side; the last one includes the closing fetch.
    """
    writer.phase("warmup", steps=max(warmup, 1))
    t0 = time.perf_counter()
    step(next_batch()).numpy()
    compile_s = time.perf_counter() - t0  # the trace + compile, plus one step
    out = None
    for _ in range(warmup - 1):
        out = step(next_batch())
    if out is not None:
        out.numpy()

    windows = []
    every = max(1, steps // 10)
    for r in range(repeat):
        writer.phase("measure", repeat=r + 1, of=repeat, steps=steps)
        times: list[float] = []
        start = last = time.perf_counter()
        for i in range(1, steps + 1):
            out = step(next_batch())
            now = time.perf_counter()
            times.append(now - last)
            last = now
            if i % every == 0 and i < steps:
                # Host-side rate so far (no device sync: the steps may still be queued).
                writer.progress(i, steps, samples_per_step * i / (now - start), repeat=r + 1)
        assert out is not None
        out.numpy()
        end = time.perf_counter()
        times[-1] += end - last
        stats = window_stats(times, samples_per_step, end - start)
        writer.progress(steps, steps, stats["samples_per_s"], repeat=r + 1)
        windows.append(stats)
    return Measured(windows, compile_s)
