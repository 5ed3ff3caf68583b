"""Immutable snapshots of what the machine is doing.

Everything the sampler publishes is a frozen dataclass. A metric that the hardware or the driver does
not offer is the sentinel ``NA`` (never 0, never an exception). ``NA`` is falsy, prints as ``n/a`` and is
written to JSON as ``null``; :func:`from_dict` reads ``null`` back as ``NA``.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from dataclasses import dataclass, field
from typing import Any, TypeVar, Union

from zbench.telemetry.na import NA, _NotAvailable
from zbench.telemetry.na import NAType as NAType

T = TypeVar("T")
Metric = float | _NotAvailable
IntMetric = int | _NotAvailable


def is_na(value: object) -> bool:
    """Whether ``value`` is NA: the hardware or driver does not offer it."""
    return value is NA


def value_or(value: T | _NotAvailable, default: T) -> T:
    """``value`` unless it is ``NA``; then ``default``. For display code, never for aggregation."""
    return default if value is NA else value  # type: ignore[return-value]


@dataclass(frozen=True)
class NvLinkSnapshot:
    """NVLink state of one GPU. Rates are bytes/s computed from NVML's cumulative counters."""

    active_links: IntMetric = NA
    link_capacity_bytes_s: Metric = NA  # one link, one direction
    tx_bytes_s: Metric = NA  # all links
    rx_bytes_s: Metric = NA
    per_link_tx_bytes_s: tuple[Metric, ...] = ()
    per_link_rx_bytes_s: tuple[Metric, ...] = ()
    tx_pct: Metric = NA  # of the active links' combined capacity
    rx_pct: Metric = NA


@dataclass(frozen=True)
class GpmSnapshot:
    """GPU Performance Monitoring metrics (Hopper and newer), percent unless noted."""

    sm_activity: Metric = NA
    sm_occupancy: Metric = NA
    tensor_activity: Metric = NA
    dram_bw_util: Metric = NA
    fp16_activity: Metric = NA
    fp32_activity: Metric = NA
    fp64_activity: Metric = NA


@dataclass(frozen=True)
class GpuProcess:
    """A process that holds a context on a GPU: NVML's figures, then the host's (psutil) where the
    host lets us read them (``telemetry.processes``)."""

    pid: int
    name: str
    used_memory_bytes: IntMetric = NA
    sm_util: Metric = NA
    user: str = ""
    command: str = ""
    cpu_pct: Metric = NA  # 100 = one core
    host_mem_bytes: IntMetric = NA  # RSS
    started: Metric = NA  # seconds since the epoch
    pgid: IntMetric = NA  # process group: a zbench job's runner leads its own
    container: str | None = None  # short container id, when it runs in one


@dataclass(frozen=True)
class GpuSnapshot:
    """Frozen snapshot of one GPU's counters; NA where unsupported."""

    index: int
    name: str = ""
    uuid: str = ""
    bus_id: str = ""
    lost: bool = False  # the GPU stopped answering (fell off the bus, driver error)
    util_gpu: Metric = NA  # % of time any kernel ran
    util_mem: Metric = NA  # % of time the memory controller was busy
    mem_used_bytes: IntMetric = NA
    mem_total_bytes: IntMetric = NA
    mem_reserved_bytes: IntMetric = NA  # held by the driver, not in mem_used (NVML v2 memory call)
    temperature_c: Metric = NA
    power_w: Metric = NA
    power_limit_w: Metric = NA
    sm_clock_mhz: Metric = NA
    mem_clock_mhz: Metric = NA
    fan_pct: Metric = NA
    pcie_tx_bytes_s: Metric = NA
    pcie_rx_bytes_s: Metric = NA
    nvlink: NvLinkSnapshot = field(default_factory=NvLinkSnapshot)
    gpm: GpmSnapshot = field(default_factory=GpmSnapshot)
    throttle_reasons: tuple[str, ...] | _NotAvailable = NA
    ecc_errors: IntMetric = NA  # volatile uncorrected
    xid_errors: IntMetric = NA
    processes: tuple[GpuProcess, ...] = ()


@dataclass(frozen=True)
class HostSnapshot:
    """Frozen snapshot of the host: CPU (total and per core), load average, RAM and swap."""

    cpu_pct: Metric = NA
    per_core_pct: tuple[float, ...] = ()
    load_avg: tuple[float, ...] | _NotAvailable = NA
    ram_used_bytes: IntMetric = NA
    ram_total_bytes: IntMetric = NA
    swap_used_bytes: IntMetric = NA
    swap_total_bytes: IntMetric = NA


@dataclass(frozen=True)
class ProcessTreeSnapshot:
    """CPU and memory of one process and all its descendants (a job's runner)."""

    pid: int
    cpu_pct: Metric = NA  # sum over the tree; 100 = one core
    rss_bytes: IntMetric = NA
    n_procs: int = 0


@dataclass(frozen=True)
class Snapshot:
    """Everything sampled at one instant: host, every GPU, driver, watched process trees."""

    t: float  # wall clock, seconds since the epoch
    seq: int = 0
    host: HostSnapshot = field(default_factory=HostSnapshot)
    gpus: tuple[GpuSnapshot, ...] = ()
    driver_version: str | _NotAvailable = NA
    notice: str | None = None  # e.g. "no NVIDIA driver: host-only mode"
    trees: tuple[ProcessTreeSnapshot, ...] = ()


# ---------------------------------------------------------------------------------------------
# JSON round trip. Written by hand (not pydantic) to keep the sampler's hot path and zbench's start-up
# free of heavy imports; the types above are the single schema.


def to_dict(obj: Any) -> Any:
    """A JSON-ready structure; ``NA`` becomes ``None``."""
    if obj is NA:
        return None
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_dict(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, tuple | list):
        return [to_dict(v) for v in obj]
    return obj


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


# What JSON may hold for a field of each scalar type (a bool is no number here).
_SCALARS: dict[Any, tuple[type, ...]] = {
    float: (int, float),
    int: (int,),
    str: (str,),
    bool: (bool,),
}


def _finite(value: Any) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _convert(tp: Any, value: Any) -> Any:
    """``value`` read as ``tp``; a TypeError where it cannot be one (a trace line written by hand or
    damaged), so readers skip that line instead of drawing a string as a percentage."""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (Union, types.UnionType):
        if value is None:
            if _NotAvailable in args or type(None) in args:
                return NA if _NotAvailable in args else None
            raise TypeError(f"null where {tp} is expected")
        if isinstance(value, float) and not math.isfinite(value) and _NotAvailable in args:
            return NA  # NaN or Infinity: what a trace writes as null (JSON has neither)
        non_na = [a for a in args if a not in (_NotAvailable, type(None))]
        # tuple[...] | NA, or a dataclass | None: convert with the first structured member.
        for a in non_na:
            if typing.get_origin(a) is tuple or dataclasses.is_dataclass(a):
                return _convert(a, value)
        return _convert(non_na[0], value) if len(non_na) == 1 else value
    if tp in _SCALARS:
        if isinstance(value, _SCALARS[tp]) and (tp is bool or not isinstance(value, bool)):
            if tp in (int, float) and not _finite(value):
                # NaN or Infinity where NA cannot stand, or an integer no float holds (10**400
                # made the monitor's GiB an OverflowError)
                raise TypeError(f"{value!r} where a finite {tp.__name__} is expected")
            return value
        raise TypeError(f"{value!r} where {tp.__name__} is expected")
    if origin is tuple:
        if not isinstance(value, list | tuple):
            raise TypeError(f"{value!r} where a list is expected")
        inner = args[0] if args else Any
        return tuple(_convert(inner, v) for v in value)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        if not isinstance(value, dict):
            raise TypeError(f"{value!r} where an object is expected")
        return from_dict(tp, value)
    return value


D = TypeVar("D")


def from_dict(cls: type[D], data: dict[str, Any]) -> D:
    """Rebuild a snapshot dataclass from :func:`to_dict` output. Unknown keys are ignored, missing
    keys take their defaults, so older and newer traces both load."""
    hints = _hints(cls)
    kwargs = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        if f.name in data:
            kwargs[f.name] = _convert(hints[f.name], data[f.name])
    return cls(**kwargs)
