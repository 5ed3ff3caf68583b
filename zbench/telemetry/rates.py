"""Rates from cumulative hardware counters.

NVML's NVLink throughput fields are cumulative KiB counters, each value stamped with the time (in
microseconds) at which the driver read it. A rate is the difference of two consecutive values over the
difference of *their own* timestamps, not over the sampler's interval: the driver may read a counter
late, and dividing by the wrong interval is the classic source of NVLink rates above the link speed.
"""

from __future__ import annotations

from collections.abc import Hashable

from zbench.telemetry.snapshot import NA, Metric


class CounterRates:
    """Turns successive (value, timestamp) readings of many counters into per-second rates.

    ``update(key, value, timestamp_us)`` returns ``NA`` for the first reading of a key, when time did
    not advance, or when the counter went backwards (a reset or a wrap): one interval is lost rather
    than reporting a negative or absurd rate. ``scale`` converts counter units to bytes (1024 for KiB).
    """

    def __init__(self, scale: float = 1.0) -> None:
        self.scale = scale
        self._last: dict[Hashable, tuple[float, float]] = {}

    def update(self, key: Hashable, value: float, timestamp_us: float) -> Metric:
        prev = self._last.get(key)
        self._last[key] = (value, timestamp_us)
        if prev is None:
            return NA
        pv, pt = prev
        dt_s = (timestamp_us - pt) / 1e6
        if dt_s <= 0 or value < pv:
            return NA
        return (value - pv) * self.scale / dt_s

    def forget(self, key: Hashable) -> None:
        """Drop a key's history (its next reading starts a new interval)."""
        self._last.pop(key, None)
