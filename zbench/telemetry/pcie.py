"""PCIe TX/RX rates through NVML, without stalling the sampler.

``nvmlDeviceGetPcieThroughput`` measures over a 20 ms window *inside the call*: two calls per GPU per
sample cost ~42 ms of wall and CPU time per GPU (measured on an H200 with cProfile), which made it the
sampler's main cost (mostly waiting, little CPU). So a ``PciePoller`` thread makes the calls, every
``PERIOD_S``, and the sampler reads the last values: PCIe figures refresh every 2 s and never delay a
sample; everything else refreshes every sample.

Why not NVML's cumulative ``NVML_FI_DEV_PCIE_COUNT_TX/RX_BYTES`` fields, which would be cheap: on the
H200 machine, during a sustained 54.7 GB/s pinned host-to-device copy, their deltas gave 0.9 and 3.7
GB/s and then negative values (they wrap far too fast to be sampled), while this call reported 59.2
million KB/s, i.e. the copy plus protocol overhead.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

from zbench.telemetry.nvml_util import GpuLost, call
from zbench.telemetry.snapshot import NA, Metric

PERIOD_S = 2.0
KIB = 1024  # NVML reports this call in KB/s of 1024 bytes


class PcieReader:
    """One GPU's PCIe TX/RX rates, measured at most once a period so the sampler never stalls."""

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
        """(tx bytes/s, rx bytes/s) as last measured."""
        return self._last

    def refresh(self) -> None:
        """Measure again (blocks ~40 ms) if the last measurement is ``PERIOD_S`` old."""
        now = self.clock()
        if now - self._last_at >= PERIOD_S:
            nv = self.nv
            try:
                tx, rx = self._measure(nv)
            except GpuLost:  # the device reader marks the GPU lost through its own calls
                tx = rx = NA
            self._last = (NA if tx is NA else float(tx) * KIB, NA if rx is NA else float(rx) * KIB)
            self._last_at = now

    def _measure(self, nv: ModuleType) -> tuple[Any, Any]:
        get = nv.nvmlDeviceGetPcieThroughput
        tx = call(nv, self.lost, get, self.handle, nv.NVML_PCIE_UTIL_TX_BYTES)
        rx = call(nv, self.lost, get, self.handle, nv.NVML_PCIE_UTIL_RX_BYTES)
        return tx, rx


class PciePoller:
    """Refreshes every reader once synchronously (so the first snapshot has figures), then every
    ``PERIOD_S`` in a daemon thread until :meth:`stop`. A GPU that is lost reads ``NA`` here; the
    device reader marks it lost through its own calls."""

    def __init__(self, readers: Sequence[PcieReader]) -> None:
        self.readers = list(readers)
        self._stop = threading.Event()
        self._refresh_all()
        self._thread = threading.Thread(target=self._run, name="zbench-pcie", daemon=True)
        self._thread.start()

    def _refresh_all(self) -> None:
        for r in self.readers:
            r.refresh()

    def _run(self) -> None:
        while not self._stop.wait(PERIOD_S):
            self._refresh_all()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=1.0)
