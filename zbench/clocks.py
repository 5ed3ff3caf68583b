"""NVML's clock-event ("throttle") reasons: their bits, and which of them slow a GPU down.

The one table of them: the sampler decodes the bits, the TUI warns of the slow-downs, and a result
is flagged "throttled" for the faults. Standard library only, outside telemetry: `zbench results`
and the TUI's first frame read it without loading the sampler's package.
"""

from __future__ import annotations

# Reason bits, stable across NVML versions (nvml.h nvmlClocksEventReason*).
THROTTLE_BITS = (
    (0x1, "idle"),
    (0x2, "app_clocks"),
    (0x4, "sw_power_cap"),
    (0x8, "hw_slowdown"),
    (0x10, "sync_boost"),
    (0x20, "sw_thermal"),
    (0x40, "hw_thermal"),
    (0x80, "hw_power_brake"),
    (0x100, "display_clocks"),
)
# The faults: a GPU held down by heat, a power brake or a hardware signal.
THROTTLES = ("hw_slowdown", "sw_thermal", "hw_thermal", "hw_power_brake")
# What slows a GPU down: the faults, and its power limit (a loaded GPU's normal state, so not a
# fault). The other reasons, such as idle, are its normal states.
SLOWDOWNS = ("sw_power_cap", *THROTTLES)


def decode_throttle(mask: int) -> tuple[str, ...]:
    """The names of the clock-event reasons set in an NVML mask (idle among them)."""
    return tuple(name for bit, name in THROTTLE_BITS if mask & bit)
