"""PCIe TX/RX rates through NVML, without stalling the sampler.

``nvmlDeviceGetPcieThroughput`` measures over a 20 ms window *inside the call*: two calls per GPU per
sample cost ~42 ms of wall and CPU time per GPU (measured on an H200 with cProfile), which dominated the
sampler's cost. Where the driver offers the cumulative byte counters ``NVML_FI_DEV_PCIE_COUNT_TX_BYTES``
/ ``RX_BYTES`` we read those instead, in one field-values call, and take rates from their own
timestamps like NVLink's (``rates.CounterRates``). Where it does not, the 20 ms call is made at most once
every ``FALLBACK_PERIOD_S`` per GPU and its last value is reused in between.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

from zbench.telemetry.nvml_util import call, field_number
from zbench.telemetry.rates import CounterRates
from zbench.telemetry.snapshot import NA, Metric

FALLBACK_PERIOD_S = 2.0
KIB = 1024
# Field ids from nvml.h, for nvidia-ml-py releases that predate the constants.
_TX_FIELD, _RX_FIELD = 197, 198


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
        self._fields = [
            getattr(nv, "NVML_FI_DEV_PCIE_COUNT_TX_BYTES", _TX_FIELD),
            getattr(nv, "NVML_FI_DEV_PCIE_COUNT_RX_BYTES", _RX_FIELD),
        ]
        self._rates = CounterRates(scale=1.0)
        self.counters: bool | None = None  # None until the first read tells
        self._last: tuple[Metric, Metric] = (NA, NA)
        self._last_at = -float("inf")

    def read(self) -> tuple[Metric, Metric]:
        """(tx bytes/s, rx bytes/s)."""
        if self.counters is not False:
            values = call(
                self.nv, self.lost, self.nv.nvmlDeviceGetFieldValues, self.handle, self._fields
            )
            nums = [NA, NA] if values is NA else [field_number(self.nv, v) for v in values]
            if self.counters is None:
                self.counters = len(nums) == 2 and all(n is not NA for n in nums)
            if self.counters:
                out = []
                for fid, fv, n in zip(self._fields, values, nums, strict=True):
                    if n is NA:
                        self._rates.forget(fid)
                        out.append(NA)
                    else:
                        out.append(self._rates.update(fid, float(n), float(fv.timestamp)))
                return out[0], out[1]
        now = self.clock()
        if now - self._last_at >= FALLBACK_PERIOD_S:
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
            # NVML reports this one in KB/s (1024 bytes).
            self._last = (NA if tx is NA else float(tx) * KIB, NA if rx is NA else float(rx) * KIB)
            self._last_at = now
        return self._last
