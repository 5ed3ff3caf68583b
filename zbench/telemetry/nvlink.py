"""NVLink through NVML: active links, link capacity, and TX/RX data rates per link and in total.

Rates come from the cumulative KiB counters ``NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX/RX`` (scope id =
link number, or 0xFFFFFFFF for all links), all read in one ``nvmlDeviceGetFieldValues`` call, divided
by the difference of each value's own timestamp (microseconds). See ``rates.CounterRates``.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from zbench.telemetry.nvml_util import call, field_number
from zbench.telemetry.rates import CounterRates
from zbench.telemetry.snapshot import NA, Metric, NvLinkSnapshot

ALL_LINKS = 0xFFFFFFFF
KIB = 1024

# Fallback capacity per link and direction (bytes/s) by NVML NVLink version, when the driver does not
# report the link speed. Sources: NVIDIA NVLink product pages (NVLink 2/3: 25 GB/s per direction per
# link; NVLink 4 (Hopper): 18 links, 900 GB/s bidirectional, 26.5625 GB/s signalling per direction;
# NVLink 5 (Blackwell): 18 links, 1.8 TB/s bidirectional).
_VERSION_CAPACITY = {1: 20e9, 2: 25e9, 3: 25e9, 4: 25e9, 5: 25e9, 6: 26.5625e9, 7: 50e9}


class NvLinkReader:
    """Reads one GPU's active NVLinks, their capacity and TX/RX rates; NA without NVLink."""

    def __init__(self, nv: ModuleType, handle: Any, lost: frozenset[int]) -> None:
        self.nv = nv
        self.handle = handle
        self.lost = lost
        self.links: list[int] = []
        self.supported = False
        max_links = int(getattr(nv, "NVML_NVLINK_MAX_LINKS", 18))
        for link in range(max_links):
            state = call(nv, lost, nv.nvmlDeviceGetNvLinkState, handle, link)
            if state is NA:
                if link == 0:
                    break  # no NVLink on this GPU
                continue
            self.supported = True
            if state:
                self.links.append(link)
        self.capacity: Metric = self._capacity() if self.links else NA
        self.rates = CounterRates(scale=KIB)
        tx = nv.NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX
        rx = nv.NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX
        self._fields = [(tx, ALL_LINKS), (rx, ALL_LINKS)]
        for link in self.links:
            self._fields += [(tx, link), (rx, link)]

    def _capacity(self) -> Metric:
        nv = self.nv
        fid = getattr(nv, "NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON", None)
        if fid is not None:
            values = call(nv, self.lost, nv.nvmlDeviceGetFieldValues, self.handle, [fid])
            if values is not NA and len(values):
                mbps = field_number(nv, values[0])
                if mbps is not NA and mbps > 0:
                    return float(mbps) * 1e6  # MB/s, decimal (26562 on H100/H200)
        version = call(nv, self.lost, nv.nvmlDeviceGetNvLinkVersion, self.handle, self.links[0])
        if version is NA:
            return NA
        return _VERSION_CAPACITY.get(int(version), NA)

    def read(self) -> NvLinkSnapshot:
        if not self.supported:
            return NvLinkSnapshot()
        n = len(self.links)
        if n == 0:
            return NvLinkSnapshot(active_links=0, link_capacity_bytes_s=self.capacity)
        values = call(
            self.nv, self.lost, self.nv.nvmlDeviceGetFieldValues, self.handle, self._fields
        )
        rates: list[Metric] = [NA] * len(self._fields)
        if values is not NA:
            for i, ((fid, scope), fv) in enumerate(zip(self._fields, values, strict=False)):
                v = field_number(self.nv, fv)
                if v is NA:
                    self.rates.forget((fid, scope))
                    continue
                rates[i] = self.rates.update((fid, scope), float(v), float(fv.timestamp))
        per_tx = tuple(rates[2::2])
        per_rx = tuple(rates[3::2])
        tx = rates[0] if rates[0] is not NA else _sum(per_tx)
        rx = rates[1] if rates[1] is not NA else _sum(per_rx)
        total_cap: Metric = NA if self.capacity is NA else self.capacity * n  # type: ignore[operator]
        return NvLinkSnapshot(
            active_links=n,
            link_capacity_bytes_s=self.capacity,
            tx_bytes_s=tx,
            rx_bytes_s=rx,
            per_link_tx_bytes_s=per_tx,
            per_link_rx_bytes_s=per_rx,
            tx_pct=_pct(tx, total_cap),
            rx_pct=_pct(rx, total_cap),
        )


def _sum(values: tuple[Metric, ...]) -> Metric:
    if not values or any(v is NA for v in values):
        return NA
    return float(sum(values))  # type: ignore[arg-type]


def _pct(rate: Metric, capacity: Metric) -> Metric:
    if rate is NA or capacity is NA or not capacity:
        return NA
    return 100.0 * rate / capacity  # type: ignore[operator]
