"""A longer per-GPU history for the history screen: a few figures per sample, over minutes.

Kept as small tuples (not whole snapshots) so 15 minutes of 8 GPUs stays small, and appended on the
UI thread in ``TelemetryState.extend``: one tuple per GPU per sample.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import TYPE_CHECKING, NamedTuple

from .format import is_num, ratio_pct

if TYPE_CHECKING:  # annotations only: the snapshot classes are built when the feed opens
    from zbench.telemetry.snapshot import GpuSnapshot

KEEP_S = 15 * 60.0  # the longest window offered
WINDOWS = ((60.0, "1 min"), (5 * 60.0, "5 min"), (15 * 60.0, "15 min"))


def _f(value: object) -> float | None:
    return float(value) if is_num(value) else None  # type: ignore[arg-type]


class Point(NamedTuple):
    """One GPU sample for the history screen: util, SM, memory %, power, NVLink TX and RX."""

    t: float
    util: float | None
    sm: float | None
    mem_pct: float | None
    power_w: float | None
    nvl_tx: float | None  # bytes/s, all links
    nvl_rx: float | None


def point(t: float, gpu: GpuSnapshot) -> Point:
    """A GPU snapshot as a history Point (None where NA)."""
    return Point(
        t,
        _f(gpu.util_gpu),
        _f(gpu.gpm.sm_activity),
        _f(ratio_pct(gpu.mem_used_bytes, gpu.mem_total_bytes)),
        _f(gpu.power_w),
        _f(gpu.nvlink.tx_bytes_s),
        _f(gpu.nvlink.rx_bytes_s),
    )


class Series:
    """One GPU's points, oldest first, dropped once older than ``KEEP_S``."""

    def __init__(self) -> None:
        self.points: deque[Point] = deque()

    def add(self, p: Point) -> None:
        self.points.append(p)
        while self.points and self.points[0].t < p.t - KEEP_S:
            self.points.popleft()

    def window(self, seconds: float) -> list[Point]:
        """The points of the last ``seconds`` (up to the newest point's time)."""
        if not self.points:
            return []
        start = self.points[-1].t - seconds
        return [p for p in self.points if p.t >= start]


def column(points: Iterable[Point], field: str) -> tuple[list[float], list[float]]:
    """(seconds before the newest point, values) of one field, leaving out unread values."""
    pts = list(points)
    if not pts:
        return [], []
    end = pts[-1].t
    xs, ys = [], []
    for p in pts:
        v = getattr(p, field)
        if v is not None:
            xs.append(p.t - end)
            ys.append(v)
    return xs, ys
