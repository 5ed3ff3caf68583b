"""One GPU read through NVML into a frozen ``GpuSnapshot``.

Every metric goes through ``nvml_util.call``: unsupported -> ``NA``; "GPU lost" -> the whole GPU is
marked ``lost`` and never asked again (the other GPUs keep sampling).
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import psutil

from zbench.clocks import decode_throttle
from zbench.telemetry.gpm import GpmReader
from zbench.telemetry.nvlink import NvLinkReader
from zbench.telemetry.nvml_util import GpuLost, call, text
from zbench.telemetry.pcie import PcieReader
from zbench.telemetry.snapshot import NA, GpuProcess, GpuSnapshot, Metric, NAType


def _reserved(mem: Any) -> int | NAType:
    value = getattr(mem, "reserved", None) if mem is not NA else None
    return NA if value is None else int(value)


def _scaled(value: Any, factor: float) -> Metric:
    return NA if value is NA else float(value) * factor


class DeviceReader:
    """Reads one GPU through NVML into a GpuSnapshot; marks it lost when it stops answering."""

    def __init__(self, nv: ModuleType, index: int, lost: frozenset[int]) -> None:
        self.nv = nv
        self.index = index
        self.lost_codes = lost
        self.lost = False
        self.opened = False  # every per-GPU reader was set up (False: lost while opening)
        self.handle: Any = None
        self.name = self.uuid = self.bus_id = ""
        self.pcie: PcieReader | None = None
        self._gpm: GpmReader | None = None
        self._proc_ts = 0
        self._names: dict[int, str] = {}
        try:
            self.handle = nv.nvmlDeviceGetHandleByIndex(index)
            self.name = text(self._call(nv.nvmlDeviceGetName) or "")
            self.uuid = text(self._call(nv.nvmlDeviceGetUUID) or "")
            pci = self._call(nv.nvmlDeviceGetPciInfo)
            self.bus_id = "" if pci is NA else text(pci.busId)
            self.nvlink = NvLinkReader(nv, self.handle, lost)
            self.gpm = self._gpm = GpmReader(nv, self.handle, lost)
            self.pcie = PcieReader(nv, self.handle, lost)
            self.opened = True
        except (GpuLost, nv.NVMLError):
            # A GPU that fails while being opened is shown lost; the others keep sampling.
            self.lost = True

    def _call(self, fn: Any, *args: Any) -> Any:
        return call(self.nv, self.lost_codes, fn, self.handle, *args)

    def read(self) -> GpuSnapshot:
        ident: dict[str, Any] = {
            "index": self.index,
            "name": self.name,
            "uuid": self.uuid,
            "bus_id": self.bus_id,
        }
        if self.lost:
            return GpuSnapshot(**ident, lost=True)
        try:
            return self._read(ident)
        except GpuLost:
            self.lost = True
            return GpuSnapshot(**ident, lost=True)

    def _read(self, ident: dict[str, Any]) -> GpuSnapshot:
        nv = self.nv
        util = self._call(nv.nvmlDeviceGetUtilizationRates)
        mem = self._memory()
        pcie_tx, pcie_rx = self.pcie.read() if self.pcie is not None else (NA, NA)
        return GpuSnapshot(
            **ident,
            util_gpu=NA if util is NA else float(util.gpu),
            util_mem=NA if util is NA else float(util.memory),
            mem_used_bytes=NA if mem is NA else int(mem.used),
            mem_total_bytes=NA if mem is NA else int(mem.total),
            mem_reserved_bytes=_reserved(mem),
            temperature_c=_scaled(
                self._call(nv.nvmlDeviceGetTemperature, nv.NVML_TEMPERATURE_GPU), 1
            ),
            power_w=_scaled(self._call(nv.nvmlDeviceGetPowerUsage), 1e-3),
            power_limit_w=_scaled(self._call(nv.nvmlDeviceGetEnforcedPowerLimit), 1e-3),
            sm_clock_mhz=_scaled(self._call(nv.nvmlDeviceGetClockInfo, nv.NVML_CLOCK_SM), 1),
            mem_clock_mhz=_scaled(self._call(nv.nvmlDeviceGetClockInfo, nv.NVML_CLOCK_MEM), 1),
            fan_pct=_scaled(self._call(nv.nvmlDeviceGetFanSpeed), 1),
            pcie_tx_bytes_s=pcie_tx,
            pcie_rx_bytes_s=pcie_rx,
            nvlink=self.nvlink.read(),
            gpm=self.gpm.read(),
            throttle_reasons=self._throttle(),
            ecc_errors=self._ecc(),
            processes=self._processes(),
        )

    def _memory(self) -> Any:
        """Memory as nvidia-smi shows it: NVML's v2 call, whose ``used`` leaves out what the driver
        reserves (v1 counts it: an idle H200 reads 615 MiB used where nvidia-smi says 0). Drivers
        without the v2 call fall back to v1 (reserved then unknown)."""
        nv = self.nv
        version = getattr(nv, "nvmlMemory_v2", None)
        if version is not None:
            mem = self._call(nv.nvmlDeviceGetMemoryInfo, version)
            if mem is not NA:
                return mem
        return self._call(nv.nvmlDeviceGetMemoryInfo)

    def _throttle(self) -> tuple[str, ...] | NAType:
        nv = self.nv
        fn = getattr(nv, "nvmlDeviceGetCurrentClocksEventReasons", None)
        mask: Any = self._call(fn) if fn is not None else NA
        if mask is NA:
            mask = self._call(nv.nvmlDeviceGetCurrentClocksThrottleReasons)
        return NA if mask is NA else decode_throttle(int(mask))

    def _ecc(self) -> int | NAType:
        nv = self.nv
        v = self._call(
            nv.nvmlDeviceGetTotalEccErrors,
            nv.NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
            nv.NVML_VOLATILE_ECC,
        )
        return NA if v is NA else int(v)

    def _processes(self) -> tuple[GpuProcess, ...]:
        nv = self.nv
        procs = self._call(nv.nvmlDeviceGetComputeRunningProcesses)
        if procs is NA or not procs:
            return ()
        sm: dict[int, float] = {}
        samples = self._call(nv.nvmlDeviceGetProcessUtilization, self._proc_ts)
        if samples is not NA:  # NotFound (no sample in the window) reads as NA
            for s in samples:
                sm[int(s.pid)] = float(s.smUtil)
                self._proc_ts = max(self._proc_ts, int(s.timeStamp))
        out = []
        for p in procs:
            pid = int(p.pid)
            used = getattr(p, "usedGpuMemory", None)
            out.append(
                GpuProcess(
                    pid=pid,
                    name=self._proc_name(pid),
                    used_memory_bytes=NA if used is None else int(used),
                    sm_util=sm.get(pid, NA),
                )
            )
        return tuple(out)

    def _proc_name(self, pid: int) -> str:
        if pid not in self._names:
            try:
                self._names[pid] = psutil.Process(pid).name()
            except (psutil.Error, OSError):
                self._names[pid] = "?"
        return self._names[pid]

    def close(self) -> None:
        if self._gpm is not None:
            self._gpm.close()
