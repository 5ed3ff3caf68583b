"""A fake ``pynvml`` module for tests: two H200-like GPUs by default, with a manual clock, NVLink
counters that advance at set rates, and per-call failure injection.

    fake = FakeNvml()
    monkeypatch.setitem(sys.modules, "pynvml", fake.module)
    fake.fail("nvmlDeviceGetFanSpeed", fake.NOT_SUPPORTED)   # one metric unsupported everywhere
    fake.lose(1)                                             # GPU 1 falls off the bus
    fake.advance(0.5)                                        # time passes, counters grow
"""

from __future__ import annotations

import types
from collections.abc import Callable
from dataclasses import dataclass, field
from types import SimpleNamespace as NS
from typing import Any

# NVML return codes, as in nvml.h.
CODES = {
    "UNINITIALIZED": 1,
    "INVALID_ARGUMENT": 2,
    "NOT_SUPPORTED": 3,
    "NO_PERMISSION": 4,
    "NOT_FOUND": 6,
    "DRIVER_NOT_LOADED": 9,
    "TIMEOUT": 10,
    "LIBRARY_NOT_FOUND": 12,
    "FUNCTION_NOT_FOUND": 13,
    "GPU_IS_LOST": 15,
    "RESET_REQUIRED": 16,
    "UNKNOWN": 999,
}


class NVMLError(Exception):
    _map: dict[int, type[NVMLError]] = {}  # noqa: RUF012

    def __new__(cls, value: int) -> NVMLError:
        if cls is NVMLError:
            cls = NVMLError._map.get(value, cls)
        obj = Exception.__new__(cls)
        obj.value = value  # type: ignore[attr-defined]
        return obj

    def __init__(self, value: int) -> None:
        super().__init__(value)
        self.value = value

    def __str__(self) -> str:
        names = {v: k for k, v in CODES.items()}
        return names.get(self.value, str(self.value)).replace("_", " ").title()


def _error_classes() -> dict[str, type[NVMLError]]:
    out = {}
    for name, code in CODES.items():
        cls_name = "NVMLError_" + "".join(p.capitalize() for p in name.split("_"))
        cls = type(cls_name, (NVMLError,), {})
        NVMLError._map[code] = cls
        out[cls_name] = cls
    return out


ERRORS = _error_classes()


@dataclass
class FakeGpu:
    name: str = "NVIDIA H200"
    uuid: str = "GPU-00000000-0000-0000-0000-000000000000"
    bus_id: str = "00000000:18:00.0"
    util_gpu: int = 0
    util_mem: int = 0
    mem_used: int = 600 * 2**20
    mem_total: int = 143771 * 2**20
    mem_reserved: int = 0  # the driver's reservation (NVML v2 reports it apart from used)
    mem_v2: bool = True  # False: a driver without nvmlDeviceGetMemoryInfo_v2
    temp: int = 31
    power_mw: int = 75_000
    power_limit_mw: int = 700_000
    default_power_limit_mw: int = 700_000
    sm_clock: int = 345
    mem_clock: int = 2619
    max_sm_clock: int = 1980
    max_mem_clock: int = 3201
    fan: int | None = None  # None: NotSupported (passively cooled SXM)
    pcie_tx_kb: int = 0
    pcie_rx_kb: int = 0
    nvlinks: int = 18
    nvlink_version: int = 6
    nvlink_speed_mbps: int = 26562
    # Per-link TX/RX rates in bytes/s; counters (KiB) advance by these on ``advance``.
    tx_rate: float = 0.0
    rx_rate: float = 0.0
    tx_kib: list[float] = field(default_factory=list)
    rx_kib: list[float] = field(default_factory=list)
    gpm_supported: bool = True
    gpm: dict[int, float] = field(default_factory=dict)
    throttle: int = 0x1
    ecc: int = 0
    cc: tuple[int, int] = (9, 0)
    cores: int = 16896
    bus_width: int = 6144
    persistence: int = 1
    # (pid, memory, SM utilization) of each compute process
    processes: list[tuple[int, int | None, int | None]] = field(default_factory=list)
    arch: int = 9
    remote_bus_id: str = ""
    nvswitch: bool = False  # links end at an NVSwitch (HGX), not at the peer GPU

    def __post_init__(self) -> None:
        if not self.tx_kib:
            self.tx_kib = [1000.0 * (i + 1) for i in range(self.nvlinks)]
        if not self.rx_kib:
            self.rx_kib = [2000.0 * (i + 1) for i in range(self.nvlinks)]


# The NVML constants zbench reads, as in nvml.h.
CONSTANTS: dict[str, int] = {
    "NVML_SUCCESS": 0,
    "NVML_TEMPERATURE_GPU": 0,
    "NVML_CLOCK_SM": 1,
    "NVML_CLOCK_MEM": 2,
    "NVML_PCIE_UTIL_TX_BYTES": 0,
    "NVML_PCIE_UTIL_RX_BYTES": 1,
    "NVML_NVLINK_MAX_LINKS": 18,
    "NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX": 138,
    "NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX": 139,
    "NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON": 90,
    "NVML_MEMORY_ERROR_TYPE_UNCORRECTED": 1,
    "NVML_VOLATILE_ECC": 0,
    "NVML_GPM_METRICS_GET_VERSION": 1,
    "NVML_GPM_METRIC_SM_UTIL": 2,
    "NVML_GPM_METRIC_SM_OCCUPANCY": 3,
    "NVML_GPM_METRIC_ANY_TENSOR_UTIL": 5,
    "NVML_GPM_METRIC_DRAM_BW_UTIL": 10,
    "NVML_GPM_METRIC_FP64_UTIL": 11,
    "NVML_GPM_METRIC_FP32_UTIL": 12,
    "NVML_GPM_METRIC_FP16_UTIL": 13,
    "NVML_TOPOLOGY_INTERNAL": 0,
    "NVML_TOPOLOGY_SINGLE": 10,
    "NVML_TOPOLOGY_MULTIPLE": 20,
    "NVML_TOPOLOGY_HOSTBRIDGE": 30,
    "NVML_TOPOLOGY_NODE": 40,
    "NVML_TOPOLOGY_SYSTEM": 50,
    "NVML_VALUE_TYPE_UNSIGNED_LONG_LONG": 3,
    "NVML_MAX_GPU_MEM_CLOCK": 2,
    "nvmlMemory_v2": 0x02000028,
}


# -- per-GPU answers that need only the FakeGpu (FakeNvml._add_devices checks the call first) --
def _on_link(answer: Callable[[FakeGpu], Any]) -> Callable[[FakeGpu, int], Any]:
    """``answer`` for a link the GPU has; NotSupported without NVLink, else InvalidArgument."""

    def call(g: FakeGpu, link: int) -> Any:
        if link >= g.nvlinks:
            raise NVMLError(CODES["NOT_SUPPORTED"] if g.nvlinks == 0 else CODES["INVALID_ARGUMENT"])
        return answer(g)

    return call


def _fan(g: FakeGpu) -> int:
    """The fan's speed; NotSupported on a GPU without one (``fan=None``: passively cooled)."""
    if g.fan is None:
        raise NVMLError(CODES["NOT_SUPPORTED"])
    return g.fan


def _memory(g: FakeGpu, version: int | None = None) -> Any:
    """v1 counts the driver's reservation as used (as the real call does); v2 shows it apart."""
    if version is None:
        used = g.mem_used + g.mem_reserved
        return NS(used=used, total=g.mem_total, free=g.mem_total - used)
    if not g.mem_v2:
        raise NVMLError(CODES["FUNCTION_NOT_FOUND"])
    free = g.mem_total - g.mem_used - g.mem_reserved
    return NS(used=g.mem_used, total=g.mem_total, free=free, reserved=g.mem_reserved)


def _processes(g: FakeGpu) -> list[Any]:
    """The compute processes on the GPU, with their memory."""
    return [NS(pid=p, usedGpuMemory=mem) for p, mem, _ in g.processes]


class FakeNvml:
    NOT_SUPPORTED = CODES["NOT_SUPPORTED"]
    NOT_FOUND = CODES["NOT_FOUND"]
    GPU_IS_LOST = CODES["GPU_IS_LOST"]
    DRIVER_NOT_LOADED = CODES["DRIVER_NOT_LOADED"]
    LIBRARY_NOT_FOUND = CODES["LIBRARY_NOT_FOUND"]

    def __init__(self, gpus: list[FakeGpu] | None = None, *, init_error: int | None = None) -> None:
        if gpus is None:
            gpus = [
                FakeGpu(
                    uuid="GPU-aaaa", bus_id="00000000:18:00.0", remote_bus_id="00000000:2A:00.0"
                ),
                FakeGpu(
                    uuid="GPU-bbbb", bus_id="00000000:2A:00.0", remote_bus_id="00000000:18:00.0"
                ),
            ]
        self.gpus = gpus
        self.init_error = init_error
        self.now_us = 1_000_000_000_000
        self.failures: dict[tuple[str, int | None], int] = {}
        self.lost: set[int] = set()
        self.calls: list[str] = []
        self.initialized = False
        self.module = self._build()

    # -- control -----------------------------------------------------------------------------------
    def fail(self, fn: str, code: int, gpu: int | None = None) -> None:
        """Make ``fn`` raise NVMLError(code), on every GPU or only on ``gpu``."""
        self.failures[(fn, gpu)] = code

    def clear(self, fn: str, gpu: int | None = None) -> None:
        self.failures.pop((fn, gpu), None)

    def lose(self, gpu: int) -> None:
        self.lost.add(gpu)

    def advance(self, seconds: float) -> None:
        self.now_us += int(seconds * 1e6)
        for g in self.gpus:
            for i in range(g.nvlinks):
                g.tx_kib[i] += g.tx_rate * seconds / 1024
                g.rx_kib[i] += g.rx_rate * seconds / 1024

    # -- module ------------------------------------------------------------------------------------
    def _check(self, fn: str, handle: int | None = None) -> None:
        self.calls.append(fn)
        if handle is not None and handle in self.lost:
            raise NVMLError(CODES["GPU_IS_LOST"])
        code = self.failures.get((fn, handle), self.failures.get((fn, None)))
        if code is not None:
            raise NVMLError(code)

    def _build(self) -> types.ModuleType:
        """The ``pynvml`` module: NVML's errors and constants, then its calls section by section."""
        m = types.ModuleType("pynvml")
        m.__dict__.update(ERRORS)
        m.NVMLError = NVMLError
        m.__dict__.update({"NVML_ERROR_" + name: code for name, code in CODES.items()})
        m.__dict__.update(CONSTANTS)
        self._add_system(m)
        self._add_topology(m)
        self._add_devices(m)
        self._add_gpm(m)
        return m

    def _add_system(self, m: types.ModuleType) -> None:
        """Init and shutdown, the device count and handles, and the driver's versions."""

        def nvmlInit() -> None:
            self._check("nvmlInit")
            if self.init_error is not None:
                raise NVMLError(self.init_error)
            self.initialized = True

        def nvmlShutdown() -> None:
            self.initialized = False

        def nvmlDeviceGetCount() -> int:
            self._check("nvmlDeviceGetCount")
            return len(self.gpus)

        def nvmlDeviceGetHandleByIndex(i: int) -> int:
            self._check("nvmlDeviceGetHandleByIndex", i)
            if not 0 <= i < len(self.gpus):
                raise NVMLError(CODES["INVALID_ARGUMENT"])
            return i

        def plain(fn: str, value: Any) -> None:
            def call() -> Any:
                self._check(fn)
                return value

            setattr(m, fn, call)

        m.nvmlInit = nvmlInit
        m.nvmlShutdown = nvmlShutdown
        m.nvmlDeviceGetCount = nvmlDeviceGetCount
        m.nvmlDeviceGetHandleByIndex = nvmlDeviceGetHandleByIndex
        plain("nvmlSystemGetDriverVersion", "550.54.15")
        plain("nvmlSystemGetCudaDriverVersion", 12040)
        plain("nvmlSystemGetNVMLVersion", "12.550.54.15")

    def _add_topology(self, m: types.ModuleType) -> None:
        """Two GPUs' common ancestor (one NUMA node) and their P2P status over NVLink."""

        def topo(h1: int, h2: int) -> int:
            self._check("nvmlDeviceGetTopologyCommonAncestor", h1)
            return 0 if h1 == h2 else 40

        m.nvmlDeviceGetTopologyCommonAncestor = topo
        m.NVML_P2P_CAPS_INDEX_NVLINK = 3
        m.NVML_P2P_STATUS_OK = 0
        m.NVML_P2P_STATUS_NOT_SUPPORTED = 5

        def p2p_status(h1: int, h2: int, index: int) -> int:
            self._check("nvmlDeviceGetP2PStatus", h1)
            both = self.gpus[h1].nvlinks and self.gpus[h2].nvlinks
            return 0 if index == 3 and both and self.gpus[h1].nvswitch else 5

        m.nvmlDeviceGetP2PStatus = p2p_status

    def _add_devices(self, m: types.ModuleType) -> None:
        """Each per-GPU call: checked (failures, lost GPUs), then answered from its FakeGpu."""
        table: dict[str, Any] = {
            "nvmlDeviceGetName": lambda g: g.name,
            "nvmlDeviceGetUUID": lambda g: g.uuid,
            "nvmlDeviceGetPciInfo": lambda g: NS(busId=g.bus_id.encode()),
            "nvmlDeviceGetUtilizationRates": lambda g: NS(gpu=g.util_gpu, memory=g.util_mem),
            "nvmlDeviceGetMemoryInfo": _memory,
            "nvmlDeviceGetTemperature": lambda g, _s: g.temp,
            "nvmlDeviceGetPowerUsage": lambda g: g.power_mw,
            "nvmlDeviceGetEnforcedPowerLimit": lambda g: g.power_limit_mw,
            "nvmlDeviceGetPowerManagementLimit": lambda g: g.power_limit_mw,
            "nvmlDeviceGetPowerManagementDefaultLimit": lambda g: g.default_power_limit_mw,
            "nvmlDeviceGetClockInfo": lambda g, c: g.sm_clock if c == 1 else g.mem_clock,
            "nvmlDeviceGetMaxClockInfo": lambda g, c: g.max_sm_clock if c == 1 else g.max_mem_clock,
            "nvmlDeviceGetFanSpeed": _fan,
            "nvmlDeviceGetPcieThroughput": lambda g, c: g.pcie_tx_kb if c == 0 else g.pcie_rx_kb,
            "nvmlDeviceGetNvLinkState": _on_link(lambda g: 1),
            "nvmlDeviceGetNvLinkVersion": _on_link(lambda g: g.nvlink_version),
            "nvmlDeviceGetNvLinkRemotePciInfo": _on_link(
                lambda g: NS(busId=g.remote_bus_id.encode())
            ),
            "nvmlDeviceGetFieldValues": self._field_values,
            "nvmlDeviceGetCurrentClocksEventReasons": lambda g: g.throttle,
            "nvmlDeviceGetCurrentClocksThrottleReasons": lambda g: g.throttle,
            "nvmlDeviceGetTotalEccErrors": lambda g, _t, _c: g.ecc,
            "nvmlDeviceGetComputeRunningProcesses": _processes,
            "nvmlDeviceGetProcessUtilization": self._process_utilization,
            "nvmlDeviceGetCudaComputeCapability": lambda g: g.cc,
            "nvmlDeviceGetNumGpuCores": lambda g: g.cores,
            "nvmlDeviceGetMemoryBusWidth": lambda g: g.bus_width,
            "nvmlDeviceGetPersistenceMode": lambda g: g.persistence,
            "nvmlDeviceGetArchitecture": lambda g: g.arch,
            "nvmlGpmQueryDeviceSupport": lambda g: NS(isSupportedDevice=int(g.gpm_supported)),
        }

        def dev(fn: str, body: Any) -> None:
            def call(handle: int, *args: Any) -> Any:
                self._check(fn, handle)
                return body(self.gpus[handle], *args)

            setattr(m, fn, call)

        for fn, body in table.items():
            dev(fn, body)

    def _field_values(self, g: FakeGpu, ids: list[Any]) -> list[Any]:
        """NVLink's speed and TX/RX counters (per link, or summed over 0xFFFFFFFF) as fields."""
        out = []
        for fid in ids:
            fid, scope = fid if isinstance(fid, tuple) else (fid, 0)
            ret, val = 0, 0
            if fid == 90:
                val = g.nvlink_speed_mbps
                ret = 0 if g.nvlinks else CODES["NOT_SUPPORTED"]
            elif fid in (138, 139):
                counters = g.tx_kib if fid == 138 else g.rx_kib
                if scope == 0xFFFFFFFF:
                    val = int(sum(counters))
                elif scope < g.nvlinks:
                    val = int(counters[scope])
                else:
                    ret = CODES["INVALID_ARGUMENT"]
            else:
                ret = CODES["NOT_SUPPORTED"]
            head = {"fieldId": fid, "scopeId": scope, "timestamp": self.now_us, "latencyUsec": 0}
            out.append(NS(**head, valueType=3, nvmlReturn=ret, value=NS(ullVal=val)))
        return out

    def _process_utilization(self, g: FakeGpu, ts: int) -> list[Any]:
        """The SM utilization of each process that has one; NotFound when none has."""
        samples = [
            NS(pid=p, smUtil=sm, timeStamp=self.now_us)
            for p, _, sm in g.processes
            if sm is not None
        ]
        if not samples:
            raise NVMLError(CODES["NOT_FOUND"])
        return samples

    def _add_gpm(self, m: types.ModuleType) -> None:
        """GPM samples and the metrics request, answered from each GPU's ``gpm`` figures."""

        def nvmlGpmSampleAlloc() -> Any:
            self._check("nvmlGpmSampleAlloc")
            return NS(handle=None, t=None)

        def nvmlGpmSampleGet(handle: int, sample: Any) -> Any:
            self._check("nvmlGpmSampleGet", handle)
            sample.handle, sample.t = handle, self.now_us
            return sample

        def nvmlGpmSampleFree(sample: Any) -> None:
            self._check("nvmlGpmSampleFree")

        class c_nvmlGpmMetricsGet_t:
            def __init__(self) -> None:
                self.version = 0
                self.numMetrics = 0
                self.sample1: Any = None
                self.sample2: Any = None
                self.metrics = [NS(metricId=0, nvmlReturn=0, value=0.0) for _ in range(210)]

        def nvmlGpmMetricsGet(req: Any) -> Any:
            handle = req.sample2.handle
            self._check("nvmlGpmMetricsGet", handle)
            g = self.gpus[handle]
            for i in range(req.numMetrics):
                metric = req.metrics[i]
                if metric.metricId in g.gpm:
                    metric.value, metric.nvmlReturn = g.gpm[metric.metricId], 0
                else:
                    metric.value, metric.nvmlReturn = 0.0, CODES["NOT_SUPPORTED"]
            return req

        m.nvmlGpmSampleAlloc = nvmlGpmSampleAlloc
        m.nvmlGpmSampleGet = nvmlGpmSampleGet
        m.nvmlGpmSampleFree = nvmlGpmSampleFree
        m.nvmlGpmMetricsGet = nvmlGpmMetricsGet
        m.c_nvmlGpmMetricsGet_t = c_nvmlGpmMetricsGet_t
