"""ByteTrack-style association (Zhang et al. 2022): high-score boxes first, then low-score ones.

Order of operations and defaults are ByteTrack's ``BYTETracker.update``: detections above
``track_thresh`` are matched to tracked and lost tracks (Kalman-predicted) by IoU fused with the
detection score; the remaining tracked tracks then take low-score detections (above 0.1) by plain
IoU; unconfirmed tracks get the leftover high-score detections; new tracks start from high-score
detections above ``track_thresh + 0.1``; lost tracks are kept ``track_buffer`` frames. Appearance
is not used. The Kalman filter is Deep SORT's (``kalman.py``), as in ByteTrack.

Why our own: the PyPI packages that carry ByteTrack (supervision, boxmot, yolox) depend on
opencv-python (clashing with the headless OpenCV build zbench uses) or on a detector framework, and
keep one Python object per track; this version keeps all tracks in arrays like ``deepsort.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from zbench.demos.tracking import kalman
from zbench.demos.tracking.boxes import iou_matrix, tlwh_to_xyah, xyah_to_tlwh
from zbench.demos.tracking.deepsort import TrackOut
from zbench.demos.tracking.tracks import LOST, TRACKED, TrackArrays, assign


@dataclass(frozen=True)
class ByteTrackParams:
    """ByteTrack's defaults for MOT17 (track_thresh 0.5 in the demo script, 0.6 in its evaluation)."""

    track_thresh: float = 0.5
    low_thresh: float = 0.1
    match_thresh: float = 0.8
    track_buffer: int = 30
    fuse_score: bool = True  # ByteTrack fuses IoU with the score unless run with --mot20


class ByteTracker(TrackArrays):
    """``update(tlwh, scores, features=None)`` once per frame; returns the frame's active tracks."""

    STATE = ("mean", "cov")

    def __init__(self, params: ByteTrackParams | None = None, frame_rate: float = 30.0) -> None:
        super().__init__()
        self.params = params or ByteTrackParams()
        self.max_lost = int(frame_rate / 30.0 * self.params.track_buffer)
        self.mean = np.zeros((0, 8))
        self.cov = np.zeros((0, 8, 8))

    def tlwh(self) -> np.ndarray:
        return xyah_to_tlwh(self.mean)

    def update(self, tlwh: np.ndarray, scores: np.ndarray, features=None) -> list[TrackOut]:
        p = self.params
        self.frame += 1
        tlwh = np.asarray(tlwh, np.float64).reshape(-1, 4)
        scores = np.asarray(scores, np.float64).reshape(-1)
        high = np.flatnonzero(scores > p.track_thresh)
        low = np.flatnonzero((scores > p.low_thresh) & (scores < p.track_thresh))
        if len(self.ids):
            self.mean, self.cov = kalman.predict(self.mean, self.cov)
        confirmed = np.flatnonzero(self.activated | (self.status == LOST))
        unconfirmed = np.flatnonzero(~self.activated & (self.status == TRACKED))
        pool = confirmed  # tracked (activated) + lost
        boxes = self.tlwh()

        # 1. High-score detections against tracked and lost tracks.
        cost = self._iou_cost(boxes[pool], tlwh[high], scores[high] if p.fuse_score else None)
        m1, u_pool, u_high = assign(cost, p.match_thresh)
        self._apply([(pool[a], high[b]) for a, b in m1], tlwh)
        # 2. Low-score detections against the remaining tracked (not lost) tracks, plain IoU.
        rest = pool[u_pool]
        rest = rest[self.status[rest] == TRACKED]
        m2, u_rest, _ = assign(self._iou_cost(boxes[rest], tlwh[low], None), 0.5)
        self._apply([(rest[a], low[b]) for a, b in m2], tlwh)
        self.status[rest[u_rest]] = LOST
        # 3. Unconfirmed tracks against the leftover high-score detections.
        left = high[u_high]
        cost = self._iou_cost(
            boxes[unconfirmed], tlwh[left], scores[left] if p.fuse_score else None
        )
        m3, u_unc, u_left = assign(cost, 0.7)
        self._apply([(unconfirmed[a], left[b]) for a, b in m3], tlwh)
        alive = np.ones(len(self.ids), bool)
        alive[unconfirmed[u_unc]] = False
        # 4. Lost tracks past the buffer are removed; new tracks from confident detections.
        alive &= ~((self.status == LOST) & (self.frame - self.end_frame > self.max_lost))
        self._keep(alive)
        new = left[u_left]
        self._initiate(tlwh[new[scores[new] >= p.track_thresh + 0.1]])
        out = (self.status == TRACKED) & self.activated
        return [
            TrackOut(int(i), tuple(float(v) for v in b))  # type: ignore[arg-type]
            for i, b in zip(self.ids[out], self.tlwh()[out], strict=True)
        ]

    @staticmethod
    def _iou_cost(
        tracks: np.ndarray, dets: np.ndarray, det_scores: np.ndarray | None
    ) -> np.ndarray:
        if len(tracks) == 0 or len(dets) == 0:
            return np.zeros((len(tracks), len(dets)))
        sim = iou_matrix(tracks, dets)
        if det_scores is not None:
            sim = sim * det_scores[None, :]
        return 1.0 - sim

    def _apply(self, pairs: list[tuple[int, int]], tlwh: np.ndarray) -> None:
        if not pairs:
            return
        t = np.array([a for a, _ in pairs])
        d = np.array([b for _, b in pairs])
        self.mean[t], self.cov[t] = kalman.update(self.mean[t], self.cov[t], tlwh_to_xyah(tlwh[d]))
        self._seen(t)

    def _initiate(self, tlwh: np.ndarray) -> None:
        n = len(tlwh)
        if not n:
            return
        mean, cov = kalman.initiate(tlwh_to_xyah(tlwh))
        self.mean = np.concatenate([self.mean, mean])
        self.cov = np.concatenate([self.cov, cov])
        self._born(n)
