"""Deep SORT as it was before the speed-up (f668a57): the reference for the equality test and bench.

Kalman filter, box functions and tracker copied from there (docstrings trimmed), then given the
corrections that the current tracker received later, so that both assign deep-sort-realtime's
identities and still compare frame by frame: boxes in float32 as the reference's detections hold
them (`tlwh_to_xyah32`, `iou_cost32`, the first covariances and process noise from float32
values), the IoU stage's confirmed tracks in the order of a Python set, and each confirmed track's
latest feature handed to the gallery again every frame. Otherwise do not edit.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment

from zbench.demos.tracking.deepsort import DeepSortParams, TrackOut

NDIM = 4
#: 0.95 quantile of the chi-square distribution with 4 degrees of freedom (Deep SORT's gate).
CHI2_95_4DOF = 9.4877

_STD_POS = 1.0 / 20
_STD_VEL = 1.0 / 160

_F = np.eye(2 * NDIM)
_F[:NDIM, NDIM:] = np.eye(NDIM)  # dt = 1 frame
_H = np.eye(NDIM, 2 * NDIM)


def initiate(xyah: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """New tracks from measurements ``[N, 4]``: means ``[N, 8]`` and covariances ``[N, 8, 8]``."""
    xyah = np.asarray(xyah).reshape(-1, NDIM)  # float32 measurements: float32 deviations
    n = len(xyah)
    mean = np.concatenate([xyah, np.zeros((n, NDIM))], axis=1)
    h = xyah[:, 3]
    std = np.stack(
        [
            2 * _STD_POS * h,
            2 * _STD_POS * h,
            np.full(n, 1e-2),
            2 * _STD_POS * h,
            10 * _STD_VEL * h,
            10 * _STD_VEL * h,
            np.full(n, 1e-5),
            10 * _STD_VEL * h,
        ],
        axis=1,
    )
    cov = np.zeros((n, 2 * NDIM, 2 * NDIM))
    idx = np.arange(2 * NDIM)
    cov[:, idx, idx] = std**2
    return mean, cov


def predict(mean: np.ndarray, cov: np.ndarray, fresh: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One frame ahead for every track; ``fresh`` tracks' noise from their float32 height."""
    h = mean[:, 3]
    n = len(mean)
    std = np.stack(
        [
            _STD_POS * h,
            _STD_POS * h,
            np.full(n, 1e-2),
            _STD_POS * h,
            _STD_VEL * h,
            _STD_VEL * h,
            np.full(n, 1e-5),
            _STD_VEL * h,
        ],
        axis=1,
    )
    if fresh.any():
        h32 = mean[fresh, 3:4].astype(np.float32)
        std[np.ix_(fresh, [0, 1, 3])] = h32 * np.float32(_STD_POS)
        std[np.ix_(fresh, [4, 5, 7])] = h32 * np.float32(_STD_VEL)
    new_mean = mean @ _F.T
    new_cov = _F @ cov @ _F.T
    idx = np.arange(2 * NDIM)
    new_cov[:, idx, idx] += std**2
    return new_mean, new_cov


def project(mean: np.ndarray, cov: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Measurement-space means ``[T, 4]`` and innovation covariances ``[T, 4, 4]``."""
    h = mean[:, 3]
    n = len(mean)
    std = np.stack([_STD_POS * h, _STD_POS * h, np.full(n, 1e-1), _STD_POS * h], axis=1)
    proj_cov = _H @ cov @ _H.T
    idx = np.arange(NDIM)
    proj_cov[:, idx, idx] += std**2
    return mean[:, :NDIM].copy(), proj_cov


def update(mean: np.ndarray, cov: np.ndarray, xyah: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Correct tracks ``[T]`` with one measurement each ``[T, 4]``."""
    proj_mean, proj_cov = project(mean, cov)
    # K = P H^T S^-1, computed as a solve against S (symmetric positive definite).
    pht = cov @ _H.T  # [T, 8, 4]
    gain = np.linalg.solve(proj_cov, np.swapaxes(pht, 1, 2))  # S^-1 (P H^T)^T: [T, 4, 8]
    gain = np.swapaxes(gain, 1, 2)  # [T, 8, 4]
    innovation = np.asarray(xyah, dtype=np.float64) - proj_mean
    new_mean = mean + np.einsum("tij,tj->ti", gain, innovation)
    new_cov = cov - gain @ proj_cov @ np.swapaxes(gain, 1, 2)
    return new_mean, new_cov


def gating_distance(mean: np.ndarray, cov: np.ndarray, xyah: np.ndarray) -> np.ndarray:
    """Squared Mahalanobis distance ``[T, N]`` of N measurements to T tracks' predictions."""
    proj_mean, proj_cov = project(mean, cov)
    chol = np.linalg.cholesky(proj_cov)  # [T, 4, 4]
    d = np.asarray(xyah, dtype=np.float64)[None, :, :] - proj_mean[:, None, :]  # [T, N, 4]
    # Solve L z = d for every track (lower triangular); |z|^2 is the distance.
    z = np.linalg.solve(chol, np.swapaxes(d, 1, 2))  # [T, 4, N]
    return np.sum(z * z, axis=1)


def tlwh_to_xyah32(tlwh: np.ndarray) -> np.ndarray:
    """``[N, 4]`` top-left x, y, width, height to centre x, y, aspect (w/h), height, in float32."""
    out = np.asarray(tlwh, dtype=np.float32).reshape(-1, 4).copy()
    out[:, :2] += out[:, 2:] / 2
    out[:, 2] /= out[:, 3]
    return out


def iou_cost32(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """1 - IoU of float64 boxes ``a`` with float32 boxes ``b``, as deep_sort's ``iou`` computes it."""
    b_br = b[:, :2] + b[:, 2:]  # float32
    tl = np.maximum(a[:, None, :2], b[None, :, :2])
    br = np.minimum((a[:, :2] + a[:, 2:])[:, None, :], b_br[None, :, :])
    wh = np.maximum(br - tl, 0.0)
    inter = wh[..., 0] * wh[..., 1]
    union = (a[:, 2] * a[:, 3])[:, None] + (b[:, 2] * b[:, 3])[None, :] - inter
    return 1.0 - np.where(union > 0, inter / np.maximum(union, 1e-12), 0.0)


INFTY_COST = 1e5
TENTATIVE, CONFIRMED = 0, 1


class DeepSortBefore:
    """``update(tlwh, scores, features)`` once per frame; returns the frame's confirmed tracks."""

    def __init__(self, params: DeepSortParams | None = None, feature_dim: int = 128) -> None:
        self.params = params or DeepSortParams()
        self.dim = feature_dim
        p = self.params
        self.mean = np.zeros((0, 8))
        self.cov = np.zeros((0, 8, 8))
        self.ids = np.zeros(0, dtype=np.int64)
        self.hits = np.zeros(0, dtype=np.int64)
        self.tsu = np.zeros(0, dtype=np.int64)  # frames since the last update
        self.state = np.zeros(0, dtype=np.int8)
        # The appearance gallery of confirmed tracks: a ring of the last nn_budget features per
        # track, in a pool of slots that grows by doubling, so that tracks coming and going do
        # not copy every gallery each frame.
        self.pool = np.zeros((16, p.nn_budget, feature_dim), dtype=np.float32)
        self.free = list(range(16))
        self.slot = np.zeros(0, dtype=np.int64)  # each track's pool slot
        self.gallery_n = np.zeros(0, dtype=np.int64)  # features ever added (ring position)
        self.pending: list[list[np.ndarray]] = []  # features not yet in the gallery
        self._next_id = 1

    # -- the published loop --------------------------------------------------------------
    def update(self, tlwh: np.ndarray, scores: np.ndarray, features: np.ndarray) -> list[TrackOut]:
        p = self.params
        tlwh = np.asarray(tlwh, dtype=np.float32).reshape(-1, 4)
        scores = np.asarray(scores, dtype=np.float64).reshape(-1)
        features = np.asarray(features, dtype=np.float32).reshape(-1, self.dim)
        keep = scores >= p.min_confidence
        tlwh, features = tlwh[keep], _normalize(features[keep])
        self._predict()
        xyah = tlwh_to_xyah32(tlwh)
        matches, unmatched_tracks, unmatched_dets = self._match(tlwh, xyah, features)
        if matches:
            t_idx = np.array([m[0] for m in matches])
            d_idx = np.array([m[1] for m in matches])
            self.mean[t_idx], self.cov[t_idx] = update(
                self.mean[t_idx], self.cov[t_idx], xyah[d_idx]
            )
            self.hits[t_idx] += 1
            self.tsu[t_idx] = 0
            for t, d in matches:
                self.pending[t].append(features[d])
            confirm = t_idx[(self.state[t_idx] == TENTATIVE) & (self.hits[t_idx] >= p.n_init)]
            self.state[confirm] = CONFIRMED
        alive = np.ones(len(self.ids), dtype=bool)
        for t in unmatched_tracks:
            if self.state[t] == TENTATIVE or self.tsu[t] > p.max_age:
                alive[t] = False
        self._keep(alive)
        if unmatched_dets:
            self._initiate(xyah[unmatched_dets], features[unmatched_dets])
        self._fill_galleries()
        out = (self.state == CONFIRMED) & (self.tsu <= 1)
        return [
            TrackOut(i, tuple(box))
            for i, box in zip(self.ids[out].tolist(), self.tlwh()[out].tolist(), strict=True)
        ]

    def tlwh(self) -> np.ndarray:
        """Every track's predicted or corrected box as ``[T, 4]`` top-left, width, height."""
        box = self.mean[:, :4].copy()
        box[:, 2] *= box[:, 3]
        box[:, :2] -= box[:, 2:] / 2
        return box

    # -- steps -----------------------------------------------------------------------------
    def _predict(self) -> None:
        if len(self.ids):
            fresh = (self.hits == 1) & (self.tsu == 0)
            self.mean, self.cov = predict(self.mean, self.cov, fresh)
            self.tsu += 1

    def _match(
        self, tlwh: np.ndarray, xyah: np.ndarray, features: np.ndarray
    ) -> tuple[list[tuple[int, int]], list[int], list[int]]:
        p = self.params
        n_det = len(tlwh)
        confirmed = np.flatnonzero(self.state == CONFIRMED).tolist()
        unconfirmed = np.flatnonzero(self.state != CONFIRMED).tolist()
        dets = list(range(n_det))
        matches_a: list[tuple[int, int]] = []
        if confirmed and n_det:
            gate = gating_distance(self.mean[confirmed], self.cov[confirmed], xyah)
            cost = self._gated_appearance_cost(confirmed, gate <= CHI2_95_4DOF, features)
            # The cascade's levels (1 .. max_age frames since update), only those with tracks.
            tsu = self.tsu[confirmed]
            for level in np.unique(tsu[(tsu >= 1) & (tsu <= p.max_age)]).tolist():
                if not dets:
                    break
                rows = np.flatnonzero(tsu == level)
                tracks_l = [confirmed[r] for r in rows.tolist()]
                sub = cost[np.ix_(rows, np.asarray(dets, dtype=np.int64))]
                m, _, dets = _min_cost_matching(sub, p.max_cosine_distance, tracks_l, dets)
                matches_a += m
        matched_a = {t for t, _ in matches_a}
        unmatched_a = list(set(confirmed) - matched_a)  # the published cascade's order
        iou_tracks = unconfirmed + [t for t in unmatched_a if self.tsu[t] == 1]
        unmatched_a = [t for t in unmatched_a if self.tsu[t] != 1]
        matches_b: list[tuple[int, int]] = []
        unmatched_b = iou_tracks
        if iou_tracks and dets:
            boxes = self.tlwh()[iou_tracks]
            cost = iou_cost32(boxes, tlwh[dets])
            cost[self.tsu[iou_tracks] > 1] = INFTY_COST
            matches_b, unmatched_b, dets = _min_cost_matching(
                cost, p.max_iou_distance, iou_tracks, dets
            )
        return matches_a + matches_b, sorted(set(unmatched_a + unmatched_b)), dets

    def _gated_appearance_cost(
        self, tracks: list[int], inside: np.ndarray, features: np.ndarray
    ) -> np.ndarray:
        """Smallest cosine distance from each track's gallery to each detection inside its gate.

        Pairs outside the Mahalanobis gate cost ``INFTY_COST`` whatever they look like, so only
        pairs inside it are compared: a few per track instead of every detection.
        """
        cost = np.full(inside.shape, INFTY_COST)
        rows, cols = np.nonzero(inside)  # row-major: each track's pairs are contiguous
        if len(rows) == 0:
            return cost
        cut = (np.flatnonzero(np.diff(rows)) + 1).tolist()
        slots = self.slot[tracks].tolist()
        sizes = np.minimum(self.gallery_n[tracks], self.params.nn_budget).tolist()
        row_list = rows.tolist()
        for start, end in zip([0, *cut], [*cut, len(rows)], strict=True):
            row = row_list[start]
            if sizes[row] == 0:
                continue
            c = cols[start:end]
            gallery = self.pool[slots[row], : sizes[row]]
            cost[row, c] = 1.0 - (gallery @ features[c].T).max(axis=0)
        return cost

    def _initiate(self, xyah: np.ndarray, features: np.ndarray) -> None:
        n = len(xyah)
        mean, cov = initiate(xyah)
        self.mean = np.concatenate([self.mean, mean])
        self.cov = np.concatenate([self.cov, cov])
        self.ids = np.concatenate([self.ids, np.arange(self._next_id, self._next_id + n)])
        self._next_id += n
        self.hits = np.concatenate([self.hits, np.ones(n, dtype=np.int64)])
        self.tsu = np.concatenate([self.tsu, np.zeros(n, dtype=np.int64)])
        self.state = np.concatenate([self.state, np.full(n, TENTATIVE, dtype=np.int8)])
        budget = self.params.nn_budget
        if len(self.free) < n:
            cap = len(self.pool)
            grow = max(cap, n - len(self.free))
            self.pool = np.concatenate([self.pool, np.zeros((grow, budget, self.dim), np.float32)])
            self.free += range(cap, cap + grow)
        self.slot = np.concatenate([self.slot, np.array(self.free[:n], dtype=np.int64)])
        del self.free[:n]
        self.gallery_n = np.concatenate([self.gallery_n, np.zeros(n, dtype=np.int64)])
        self.pending += [[f] for f in features]

    def _keep(self, alive: np.ndarray) -> None:
        if alive.all():
            return
        self.free += self.slot[~alive].tolist()
        for name in ("mean", "cov", "ids", "hits", "tsu", "state", "slot", "gallery_n"):
            setattr(self, name, getattr(self, name)[alive])
        self.pending = [f for f, a in zip(self.pending, alive, strict=True) if a]

    def _fill_galleries(self) -> None:
        """Confirmed tracks hand their new features to the gallery (the metric's partial_fit)."""
        budget = self.params.nn_budget
        for t in np.flatnonzero(self.state == CONFIRMED):
            for f in self.pending[t]:
                self.pool[self.slot[t], self.gallery_n[t] % budget] = f
                self.gallery_n[t] += 1
            self.pending[t] = self.pending[t][-1:]  # deep-sort-realtime keeps the latest


def _normalize(features: np.ndarray) -> np.ndarray:
    norm = np.linalg.norm(features, axis=1, keepdims=True)
    return features / np.maximum(norm, 1e-12)


def _min_cost_matching(
    cost: np.ndarray, max_distance: float, tracks: list[int], dets: list[int]
) -> tuple[list[tuple[int, int]], list[int], list[int]]:
    """Hungarian assignment with a ceiling, in the reference's order of unmatched lists."""
    if not tracks or not dets:
        return [], list(tracks), list(dets)
    cost = np.where(cost > max_distance, max_distance + 1e-5, cost)
    rows, cols = linear_sum_assignment(cost)
    col_set, row_set = set(cols.tolist()), set(rows.tolist())
    unmatched_dets = [d for c, d in enumerate(dets) if c not in col_set]
    unmatched_tracks = [t for r, t in enumerate(tracks) if r not in row_set]
    matches: list[tuple[int, int]] = []
    for r, c in zip(rows, cols, strict=True):
        if cost[r, c] > max_distance:
            unmatched_tracks.append(tracks[r])
            unmatched_dets.append(dets[c])
        else:
            matches.append((tracks[r], dets[c]))
    return matches, unmatched_tracks, unmatched_dets
