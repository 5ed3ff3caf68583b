"""GPU Performance Monitoring (Hopper and newer) through NVML's GPM API.

GPM metrics are computed between two samples: the reader keeps the previous sample and, on each read,
takes a new one and asks NVML for the metrics between them, so each figure covers one sampler interval.
"""

from __future__ import annotations

import contextlib
from types import ModuleType
from typing import Any

from zbench.telemetry.nvml_util import call
from zbench.telemetry.snapshot import NA, GpmSnapshot, Metric

_METRICS = (
    ("sm_activity", "NVML_GPM_METRIC_SM_UTIL"),
    ("sm_occupancy", "NVML_GPM_METRIC_SM_OCCUPANCY"),
    ("tensor_activity", "NVML_GPM_METRIC_ANY_TENSOR_UTIL"),
    ("dram_bw_util", "NVML_GPM_METRIC_DRAM_BW_UTIL"),
    ("fp16_activity", "NVML_GPM_METRIC_FP16_UTIL"),
    ("fp32_activity", "NVML_GPM_METRIC_FP32_UTIL"),
    ("fp64_activity", "NVML_GPM_METRIC_FP64_UTIL"),
)


class GpmReader:
    """Reads one GPU's GPM metrics (SM, tensor, DRAM, FP activity) between samples; NA if none."""

    def __init__(self, nv: ModuleType, handle: Any, lost: frozenset[int]) -> None:
        self.nv = nv
        self.handle = handle
        self.lost = lost
        self.supported = False
        self._ids = [(name, getattr(nv, const, None)) for name, const in _METRICS]
        if not hasattr(nv, "nvmlGpmQueryDeviceSupport"):
            return
        support = call(nv, lost, nv.nvmlGpmQueryDeviceSupport, handle)
        if support is NA or not getattr(support, "isSupportedDevice", 0):
            return
        prev = call(nv, lost, nv.nvmlGpmSampleAlloc)
        cur = call(nv, lost, nv.nvmlGpmSampleAlloc)
        if prev is NA or cur is NA:
            return
        self._prev, self._cur = prev, cur
        self.supported = call(nv, lost, nv.nvmlGpmSampleGet, handle, self._prev) is not NA

    def read(self) -> GpmSnapshot:
        if not self.supported:
            return GpmSnapshot()
        nv = self.nv
        if call(nv, self.lost, nv.nvmlGpmSampleGet, self.handle, self._cur) is NA:
            return GpmSnapshot()
        ids = [(name, mid) for name, mid in self._ids if mid is not None]
        req = nv.c_nvmlGpmMetricsGet_t()
        req.version = nv.NVML_GPM_METRICS_GET_VERSION
        req.numMetrics = len(ids)
        req.sample1 = self._prev
        req.sample2 = self._cur
        for i, (_, mid) in enumerate(ids):
            req.metrics[i].metricId = mid
        result = call(nv, self.lost, nv.nvmlGpmMetricsGet, req)
        self._prev, self._cur = self._cur, self._prev
        if result is NA:
            return GpmSnapshot()
        values: dict[str, Metric] = {}
        for i, (name, _) in enumerate(ids):
            m = result.metrics[i]
            ok = getattr(m, "nvmlReturn", 0) == getattr(nv, "NVML_SUCCESS", 0)
            values[name] = float(m.value) if ok else NA
        return GpmSnapshot(**values)

    def close(self) -> None:
        if self.supported:
            for s in (self._prev, self._cur):
                with contextlib.suppress(self.nv.NVMLError):
                    self.nv.nvmlGpmSampleFree(s)
            self.supported = False
