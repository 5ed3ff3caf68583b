"""What the dashboard remembers between snapshots: the latest one and a short history per GPU."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import TYPE_CHECKING

from .format import is_num, ratio_pct
from .series import Series, point

if TYPE_CHECKING:  # annotations only: the snapshot classes are built when the feed opens
    from zbench.telemetry.snapshot import Snapshot

HISTORY = 120  # samples kept for sparklines (one minute at the default 0.5 s)


class TelemetryState:
    """Fed from the UI thread only (the sampler thread never touches it)."""

    def __init__(self, history: int = HISTORY) -> None:
        self.latest: Snapshot | None = None
        self._history = history
        self.util: dict[int, deque[float]] = {}
        self.mem: dict[int, deque[float]] = {}
        self.cpu: deque[float] = deque(maxlen=history)
        self.series: dict[int, Series] = {}  # minutes of a few figures, for the history screen

    def extend(self, snapshots: Iterable[Snapshot]) -> bool:
        """Add new snapshots; True when anything changed."""
        changed = False
        for snap in snapshots:
            if self.latest is not None and snap.seq and snap.seq == self.latest.seq:
                continue
            self.latest = snap
            changed = True
            for gpu in snap.gpus:
                util = self.util.setdefault(gpu.index, deque(maxlen=self._history))
                mem = self.mem.setdefault(gpu.index, deque(maxlen=self._history))
                util.append(float(gpu.util_gpu) if is_num(gpu.util_gpu) else 0.0)  # type: ignore[arg-type]
                m = ratio_pct(gpu.mem_used_bytes, gpu.mem_total_bytes)
                mem.append(float(m) if is_num(m) else 0.0)  # type: ignore[arg-type]
                self.series.setdefault(gpu.index, Series()).add(point(snap.t, gpu))
            cpu = snap.host.cpu_pct
            self.cpu.append(float(cpu) if is_num(cpu) else 0.0)  # type: ignore[arg-type]
        return changed
