"""The timed loop: warm-up excluded, the window closed by fetching a value from the device."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from zbench.runners.measure import window_stats
from zbench.runners.protocol import EventWriter
from zbench.runners.tf.steps import Step

PROGRESS_EVERY_S = 0.5  # as the PyTorch runner


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
    """The first step (tracing, XLA compilation) timed apart as ``compile_s``; then ``warmup``
    steps; then ``repeat`` measured windows of ``steps`` steps.

    ``.numpy()`` copies the step's scalar to the host, which waits for every kernel the step
    enqueued: the devices are idle at both edges of each window, so samples / window wall time is
    the real rate. Per-step times are host-side.
    """
    t0 = time.perf_counter()
    step(next_batch()).numpy()
    compile_s = time.perf_counter() - t0
    writer.phase("warmup", steps=warmup)
    out = None
    for _ in range(warmup):
        out = step(next_batch())
    if out is not None:
        out.numpy()
    writer.phase("measure", steps=steps, repeats=repeat)
    windows = []
    total = steps * repeat
    for r in range(repeat):
        times: list[float] = []
        t0 = last = time.perf_counter()
        for i in range(steps):
            s = time.perf_counter()
            out = step(next_batch())
            now = time.perf_counter()
            times.append(now - s)
            if now - last >= PROGRESS_EVERY_S or i == steps - 1:
                last = now
                # Host-side rate so far (no device sync: the last steps may still be queued).
                writer.progress(r * steps + i + 1, total, (i + 1) * samples_per_step / (now - t0))
        assert out is not None
        out.numpy()
        stats = window_stats(times, samples_per_step, time.perf_counter() - t0)
        # TensorFlow has no per-step device timer without a sync that would change the rate.
        stats["step_time_source"] = "host"
        windows.append(stats)
    return Measured(windows, compile_s)
