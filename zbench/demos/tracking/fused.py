"""A tracker that uses what came after Deep SORT: two passes, an appearance average, fused costs.

From ByteTrack (Zhang et al. 2022): detections above ``high_thresh`` are matched first, and the
tracks still unmatched then take the low-score detections (occluded people score low) by IoU, so a
partly hidden person keeps its track instead of ending it. From BoT-SORT (Aharon et al. 2022):
the first pass's cost is the smaller of the IoU distance (fused with the score) and half the
cosine distance to the track's appearance, where the appearance counts only under
``appearance_thresh`` and for boxes that overlap the prediction (IoU distance under
``proximity_thresh``). From StrongSORT (Du et al. 2023): each track keeps one appearance, an
exponential moving average of its detections' features (``ema`` 0.9), rather than a gallery of
100. Added here: a lost track whose predicted box no longer overlaps anything (after a long
occlusion its Kalman prediction drifts) may still take a detection by appearance alone inside
Deep SORT's Mahalanobis gate, so it comes back with its own id.

All tracks live in arrays, and the Kalman filter is Deep SORT's block form (``kalman.*_rows``):
a frame is a few [T, N] matrices and at most three small assignments.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from zbench.demos.tracking import kalman
from zbench.demos.tracking.boxes import iou_matrix, tlwh_to_xyah, xyah_to_tlwh
from zbench.demos.tracking.deepsort import TrackOut
from zbench.demos.tracking.tracks import LOST, TRACKED, TrackArrays, assign


@dataclass(frozen=True)
class FusedParams:
    """Thresholds: ByteTrack's passes, BoT-SORT's fusion, StrongSORT's average."""

    high_thresh: float = 0.5  # first pass; new tracks need high_thresh + new_margin
    low_thresh: float = 0.1  # second pass takes (low_thresh, high_thresh]
    new_margin: float = 0.1
    match_thresh: float = 0.8  # first pass's cost ceiling
    proximity_thresh: float = 0.5  # appearance counts only where the IoU distance is below
    appearance_thresh: float = 0.25  # half the cosine distance must be below
    reid_thresh: float = 0.15  # a lost track's appearance-only match (half cosine distance)
    ema: float = 0.9  # appearance = ema * appearance + (1 - ema) * feature
    track_buffer: int = 30  # frames a lost track is kept (at 30 frames/s)


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)


class FusedTracker(TrackArrays):
    """``update(tlwh, scores, features)`` once per frame; returns the frame's confirmed tracks."""

    STATE = ("rows", "feat")

    def __init__(self, params: FusedParams | None = None, frame_rate: float = 30.0) -> None:
        super().__init__()
        self.params = params or FusedParams()
        self.max_lost = max(1, int(frame_rate / 30.0 * self.params.track_buffer))
        self.rows = np.zeros((0, kalman.ROW))
        self.feat = np.zeros((0, 0))

    def tlwh(self, idx: np.ndarray | slice = slice(None)) -> np.ndarray:
        """Tracks' boxes (all, or ``idx``) from the Kalman means."""
        return xyah_to_tlwh(self.rows[idx])

    def update(self, tlwh: np.ndarray, scores: np.ndarray, features=None) -> list[TrackOut]:
        p = self.params
        self.frame += 1
        tlwh = np.asarray(tlwh, np.float64).reshape(-1, 4)
        scores = np.asarray(scores, np.float64).reshape(-1)
        feats = None if features is None else _unit(np.asarray(features, np.float64))
        if feats is not None and self.feat.shape[1] != feats.shape[1]:
            self.feat = np.zeros((len(self.ids), feats.shape[1]))
        high = np.flatnonzero(scores > p.high_thresh)
        low = np.flatnonzero((scores > p.low_thresh) & (scores <= p.high_thresh))
        if len(self.ids):
            kalman.predict_rows(self.rows)
        boxes = self.tlwh()
        pool = np.flatnonzero(self.activated)  # tracked and lost
        unconfirmed = np.flatnonzero(~self.activated)

        # 1. High-score detections against tracked and lost tracks, fused cost.
        cost = self._fused(pool, boxes, tlwh, scores, feats, high)
        m1, u_pool, u_high = assign(cost, p.match_thresh)
        self._apply(pool, high, m1, tlwh, feats)
        # 2. Low-score detections against the tracks still tracked, IoU alone (their crops are
        # occluded: their features would spoil the average, so it is left as it is).
        rest = pool[u_pool]
        rest = rest[self.status[rest] == TRACKED]
        m2, u_rest, _ = assign(1.0 - self._iou(boxes[rest], tlwh[low]), 0.5)
        self._apply(rest, low, m2, tlwh, None)
        self.status[rest[u_rest]] = LOST
        # 3. Unconfirmed tracks (seen once) against the leftover high-score detections.
        left = high[u_high]
        cost = self._fused(unconfirmed, boxes, tlwh, scores, feats, left)
        m3, u_unc, u_left = assign(cost, 0.7)
        self._apply(unconfirmed, left, m3, tlwh, feats)
        alive = np.ones(len(self.ids), bool)
        alive[unconfirmed[u_unc]] = False
        # 4. Lost tracks past the buffer go; new tracks from confident detections.
        alive &= ~((self.status == LOST) & (self.frame - self.end_frame > self.max_lost))
        self._keep(alive)
        new = left[u_left]
        new = new[scores[new] >= p.high_thresh + p.new_margin]
        self._initiate(tlwh[new], None if feats is None else feats[new])
        out = np.flatnonzero((self.status == TRACKED) & self.activated)
        return [
            TrackOut(int(i), (float(b[0]), float(b[1]), float(b[2]), float(b[3])))
            for i, b in zip(self.ids[out].tolist(), self.tlwh(out).tolist(), strict=True)
        ]

    @staticmethod
    def _iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return iou_matrix(a, b) if len(a) and len(b) else np.zeros((len(a), len(b)))

    def _fused(self, tracks, boxes, tlwh, scores, feats, dets) -> np.ndarray:
        """First-pass cost ``[len(tracks), len(dets)]``: min(IoU x score distance, appearance)."""
        p = self.params
        iou = self._iou(boxes[tracks], tlwh[dets])
        cost = 1.0 - iou * scores[dets][None, :]
        if feats is None or cost.size == 0:
            return cost
        emb = (1.0 - self.feat[tracks] @ feats[dets].T) / 2.0
        near = (1.0 - iou) <= p.proximity_thresh
        cost = np.minimum(cost, np.where(near & (emb <= p.appearance_thresh), emb, 1.0))
        # A lost track's prediction drifts: inside the motion gate, a close appearance is enough.
        lost = self.status[tracks] == LOST
        if lost.any():
            gate = kalman.gating_distance_rows(self.rows[tracks[lost]], tlwh_to_xyah(tlwh[dets]))
            ok = (gate <= kalman.CHI2_95_4DOF) & (emb[lost] <= p.reid_thresh)
            cost[lost] = np.minimum(cost[lost], np.where(ok, emb[lost], 1.0))
        return cost

    def _apply(self, tracks, dets, pairs, tlwh, feats) -> None:
        if not pairs:
            return
        pr = np.array(pairs)
        t, d = tracks[pr[:, 0]], dets[pr[:, 1]]
        self.rows[t] = kalman.update_rows(self.rows[t], tlwh_to_xyah(tlwh[d]))
        if feats is not None:
            a = self.params.ema
            self.feat[t] = _unit(a * self.feat[t] + (1.0 - a) * feats[d])
        self._seen(t)

    def _initiate(self, tlwh: np.ndarray, feats: np.ndarray | None) -> None:
        n = len(tlwh)
        if not n:
            return
        self.rows = np.concatenate([self.rows, kalman.initiate_rows(tlwh_to_xyah(tlwh))])
        if feats is not None:
            self.feat = np.concatenate([self.feat, feats])
        else:
            self.feat = np.concatenate([self.feat, np.zeros((n, self.feat.shape[1]))])
        self._born(n)
