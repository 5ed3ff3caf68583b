"""PCIe TX/RX rates through NVML, without stalling the sampler.

``nvmlDeviceGetPcieThroughput`` measures over a 20 ms window *inside the call*: two calls per GPU per
sample cost ~42 ms of wall and CPU time per GPU (measured on an H200 with cProfile), which made it the
sampler's main cost. So the call is made at most once every ``PERIOD_S`` per GPU and its last value is
reused in between: PCIe figures refresh every 2 s, everything else every sample.

Why not NVML's cumulative ``NVML_FI_DEV_PCIE_COUNT_TX/RX_BYTES`` fields, which would be cheap: on the
H200 machine, during a sustained 54.7 GB/s pinned host-to-device copy, their deltas gave 0.9 and 3.7
GB/s and then negative values (they wrap far too fast to be sampled), while this call reported 59.2
million KB/s, i.e. the copy plus protocol overhead.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

from zbench.telemetry.nvml_util import call
from zbench.telemetry.snapshot import NA, Metric

PERIOD_S = 2.0
KIB = 1024  # NVML reports this call in KB/s of 1024 bytes


class PcieReader:
    def __init__(
        self,
        nv: ModuleType,
        handle: Any,
        lost: frozenset[int],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.nv = nv
        self.handle = handle
        self.lost = lost
        self.clock = clock
        self._last: tuple[Metric, Metric] = (NA, NA)
        self._last_at = -float("inf")

    def read(self) -> tuple[Metric, Metric]:
        """(tx bytes/s, rx bytes/s), at most ``PERIOD_S`` old."""
        now = self.clock()
        if now - self._last_at >= PERIOD_S:
            nv = self.nv
            tx = call(
                nv,
                self.lost,
                nv.nvmlDeviceGetPcieThroughput,
                self.handle,
                nv.NVML_PCIE_UTIL_TX_BYTES,
            )
            rx = call(
                nv,
                self.lost,
                nv.nvmlDeviceGetPcieThroughput,
                self.handle,
                nv.NVML_PCIE_UTIL_RX_BYTES,
            )
            self._last = (NA if tx is NA else float(tx) * KIB, NA if rx is NA else float(rx) * KIB)
            self._last_at = now
        return self._last
