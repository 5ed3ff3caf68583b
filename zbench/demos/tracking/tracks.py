"""What ByteTrack and the fused tracker share: every track a row of parallel arrays (its id, state,
whether it was activated, its last frame), born and dropped together, plus ByteTrack's assignment.

Each tracker adds its own per-track arrays (the Kalman state, an appearance) and names them in
``STATE``, so births and deaths keep every array in step.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from scipy.optimize import linear_sum_assignment

TRACKED, LOST = 0, 1


def assign(cost: np.ndarray, thresh: float) -> tuple[list[tuple[int, int]], list[int], list[int]]:
    """lap.lapjv(cost, extend_cost=True, cost_limit=thresh) semantics with SciPy's Hungarian:
    matched (row, column) pairs, unmatched rows, unmatched columns."""
    n, m = cost.shape
    if n == 0 or m == 0:
        return [], list(range(n)), list(range(m))
    rows, cols = linear_sum_assignment(np.where(cost > thresh, thresh + 1e-4, cost))
    ok = cost[rows, cols] <= thresh
    matches = list(zip(rows[ok].tolist(), cols[ok].tolist(), strict=True))
    mr, mc = set(rows[ok].tolist()), set(cols[ok].tolist())
    return matches, [i for i in range(n) if i not in mr], [j for j in range(m) if j not in mc]


class TrackArrays:
    """Tracks as rows of parallel arrays; ``frame`` counts the frames seen."""

    STATE: ClassVar[tuple[str, ...]] = ()  # the subclass's own per-track arrays

    def __init__(self) -> None:
        self.ids = np.zeros(0, np.int64)
        self.status = np.zeros(0, np.int8)
        self.activated = np.zeros(0, bool)
        self.end_frame = np.zeros(0, np.int64)
        self.frame = 0
        self._next_id = 1

    def _born(self, n: int) -> None:
        """``n`` new tracks (their STATE rows already appended): fresh ids, tracked, seen now.
        As in ByteTrack, tracks born in the first frame are activated at once."""
        self.ids = np.concatenate([self.ids, np.arange(self._next_id, self._next_id + n)])
        self._next_id += n
        self.status = np.concatenate([self.status, np.full(n, TRACKED, np.int8)])
        self.activated = np.concatenate([self.activated, np.full(n, self.frame == 1)])
        self.end_frame = np.concatenate([self.end_frame, np.full(n, self.frame)])

    def _seen(self, t: np.ndarray) -> None:
        """Tracks ``t`` took a detection this frame (a lost track found again keeps its id)."""
        self.status[t] = TRACKED
        self.activated[t] = True
        self.end_frame[t] = self.frame

    def _keep(self, alive: np.ndarray) -> None:
        """Drop every track where ``alive`` is False, from every array."""
        if alive.all():
            return
        for name in (*self.STATE, "ids", "status", "activated", "end_frame"):
            setattr(self, name, getattr(self, name)[alive])
