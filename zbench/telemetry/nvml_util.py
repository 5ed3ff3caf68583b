"""Shared NVML call handling: which errors mean "unsupported" and which mean "the GPU is gone".

The pynvml module is passed in (not imported here) so tests can hand in a fake one.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

from zbench.telemetry.snapshot import NA

# Errors after which a GPU does not answer any more: it fell off the bus, needs a reset, or the driver
# lost it. Anything else from a single call means only that this metric is unavailable.
_LOST_NAMES = ("NVML_ERROR_GPU_IS_LOST", "NVML_ERROR_RESET_REQUIRED", "NVML_ERROR_UNKNOWN")


class GpuLost(Exception):
    """Raised inside a device reader when NVML says the GPU is gone."""


def lost_codes(nv: ModuleType) -> frozenset[int]:
    """The NVML error codes that mean the GPU is gone, of those this binding defines."""
    return frozenset(getattr(nv, n) for n in _LOST_NAMES if hasattr(nv, n))


def call(nv: ModuleType, lost: frozenset[int], fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)``; ``NA`` for NotSupported and every other per-metric error; ``GpuLost`` when the
    error says the GPU is gone. Typed ``Any``: mypy cannot narrow ``x is NA`` on a sentinel instance."""
    try:
        return fn(*args)
    except nv.NVMLError as exc:
        if getattr(exc, "value", None) in lost:
            raise GpuLost(str(exc)) from exc
        return NA


def text(value: Any) -> str:
    """NVML strings arrive as bytes or str depending on the nvidia-ml-py version."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def field_number(nv: ModuleType, fv: Any) -> Any:
    """The number held by one ``nvmlFieldValue_t``, or ``NA`` when its own return code is an error."""
    if getattr(fv, "nvmlReturn", 0) != getattr(nv, "NVML_SUCCESS", 0):
        return NA
    kind = getattr(fv, "valueType", 3)
    v = fv.value
    if kind == 0:
        return float(v.dVal)
    attr = {1: "uiVal", 2: "ulVal", 3: "ullVal", 4: "sllVal", 5: "siVal", 6: "usVal"}.get(kind)
    return int(getattr(v, attr)) if attr else NA
