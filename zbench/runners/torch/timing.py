"""Step timing on a GPU: CUDA events recorded around each measured step, read back after the window
(and, for the live rate, as far as the device has got)."""

from __future__ import annotations

from typing import ClassVar

import torch

from zbench.runners.harness import StepTimer


class CudaEventTimer(StepTimer):
    """GPU time of each step from CUDA events made before the window (no allocation per step)."""

    source: ClassVar[str] = "cuda-events"

    def __init__(self, steps: int) -> None:
        self._pairs = [
            (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
            for _ in range(steps)
        ]

    def begin(self, i: int) -> None:
        self._pairs[i][0].record()

    def end(self, i: int) -> None:
        self._pairs[i][1].record()

    def times_s(self) -> list[float]:
        return [a.elapsed_time(b) / 1000.0 for a, b in self._pairs]

    def done_through(self, i: int) -> tuple[int, float] | None:
        try:
            for j in range(i, -1, -1):  # the device is a few steps behind: a short walk back
                if self._pairs[j][1].query():
                    return j + 1, self._pairs[0][0].elapsed_time(self._pairs[j][1]) / 1000.0
        except RuntimeError:  # a live figure is not worth a failed run: show none
            return None
        return 0, 0.0
