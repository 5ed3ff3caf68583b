"""Deep SORT association as published (Wojke, Bewley, Paulus 2017), with all tracks in arrays.

The algorithm, its order of operations and its defaults are nwojke/deep_sort's: predict every track;
a matching cascade by time since the last update over confirmed tracks, with the cosine distance to
each track's gallery of appearance features gated by the Mahalanobis distance (chi-square 0.95, 4
dof); then IoU matching for unconfirmed tracks and tracks missed for one frame; tentative tracks are
confirmed after ``n_init`` hits and deleted at their first miss; confirmed tracks are deleted after
``max_age`` misses. Detections below ``min_confidence`` are dropped first.

Where deep-sort-realtime 1.3.2 (the published tracker's port that the tests and
benchmarks/tracking.py compare with) departs from nwojke/deep_sort or leaves the outcome to
rounding and order, this follows it, so that both assign the same identities in every frame:
confirmed tracks hand their latest feature to the gallery again every frame (`_repeat_last`); the
IoU stage takes the tracks the cascade left in a Python set's order (`_set_order`); boxes are
float32, as its detections hold them, and read in float32 where it reads them so (`_xyah32`,
`_iou_cost`, the filter's first covariance and process noise). The last two only decide which of
several pairs at a cost ceiling the Hungarian solver picks, hence the ids that new tracks take.

Why our own: the maintained PyPI packages (deep-sort-realtime 1.3.2 is a faithful port) keep one
Python object per track and recompute every gallery per frame: 14 frames/s at 50 targets on a 2-core
host, far from the 1,000 frames/s a tracker must manage so that the detector sets the pace. Here a
track is one row of a float array (its Kalman filter in block form, ``kalman.predict_rows``) and one
of an integer array; the galleries live in one ``[slots, budget, dim]`` pool, and a frame costs one
batched matrix product for appearance, a few elementwise operations for the filter and gating, and
one Hungarian assignment per cascade level with a detection close enough. At 50 targets (46.5
detections per frame) on a 2-core dev host, ``benchmarks/tracker_speed.py`` measured 2,235
frames/s against 819 for the earlier array version timed alongside, both with the corrections
above (2.73 times, median of 9 runs; 2.4 times when both are fed frame by frame in turn and share
the caches); before the corrections, 2,407 frames/s. ``tests/demos/tracking`` checks that it
assigns the same identities as deep-sort-realtime, and as that earlier version frame by frame.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment

from zbench.demos.tracking import kalman
from zbench.demos.tracking.boxes import xyah_to_tlwh

INFTY_COST = 1e5
TENTATIVE, CONFIRMED = 0, 1
# Columns of the integer track array.
ID, HITS, TSU, STATE, SLOT = range(5)  # TSU: frames since the last update


@dataclass(frozen=True)
class DeepSortParams:
    """Deep SORT's published defaults (deep_sort_app.py and the README's MOT16 run)."""

    max_cosine_distance: float = 0.2
    nn_budget: int = 100
    max_iou_distance: float = 0.7
    max_age: int = 30
    n_init: int = 3
    min_confidence: float = 0.3


@dataclass(frozen=True)
class TrackOut:
    """One track reported for a frame: confirmed and updated in this frame."""

    track_id: int
    tlwh: tuple[float, float, float, float]


class DeepSortTracker:
    """``update(tlwh, scores, features)`` once per frame; returns the frame's confirmed tracks."""

    def __init__(self, params: DeepSortParams | None = None, feature_dim: int = 128) -> None:
        self.params = params or DeepSortParams()
        self.dim = feature_dim
        self.rows = np.zeros((0, kalman.ROW))  # each track's filter, block form
        self.info = np.zeros((0, 5), dtype=np.int64)  # ID, HITS, TSU, STATE, SLOT
        # The appearance gallery of each track: a ring of its last nn_budget features in a pool
        # slot, so that tracks coming and going do not copy every gallery each frame. Free slots
        # are taken lowest first, which keeps the slots in use at the front of the pool.
        self.pool = np.zeros((64, self.params.nn_budget, feature_dim), dtype=np.float32)
        self.slot_n = np.zeros(64, dtype=np.int64)  # features ever added to each slot
        self.slot_used = np.zeros(64, dtype=bool)
        self._next_id = 1
        self._fresh = 0

    @property
    def ids(self) -> np.ndarray:
        """Every track's id, ``[T]``."""
        return self.info[:, ID]

    # -- the published loop --------------------------------------------------------------
    def update(self, tlwh: np.ndarray, scores: np.ndarray, features: np.ndarray) -> list[TrackOut]:
        p = self.params
        scores = np.asarray(scores, dtype=np.float64).reshape(-1)
        keep = scores >= p.min_confidence
        # Boxes in float32, as the reference's detections hold them (`_xyah32`).
        tlwh = np.asarray(tlwh, dtype=np.float32).reshape(-1, 4)[keep]
        features = np.asarray(features, dtype=np.float32)
        if features.ndim == 2 and features.shape[1] != self.dim and not self.slot_used.any():
            # Features of another size (a detection file's own network): the empty gallery
            # pool takes their size before any track holds one.
            self.dim = features.shape[1]
            self.pool = np.zeros((len(self.pool), self.params.nn_budget, self.dim), np.float32)
        features = features.reshape(-1, self.dim)
        features = _normalize(features[keep])
        if len(self.rows):
            kalman.predict_rows(self.rows, len(self.rows) - self._fresh)
            self.info[:, TSU] += 1
        xyah32 = _xyah32(tlwh)
        xyah = xyah32.astype(np.float64)
        t_idx, d_idx, new = self._match(tlwh, xyah, features)
        info = self.info
        self._repeat_last(info[:, STATE] == CONFIRMED)
        if len(t_idx):
            self.rows[t_idx] = kalman.update_rows(self.rows[t_idx], xyah[d_idx])
            hit = info[t_idx]
            hit[:, HITS] += 1
            hit[:, TSU] = 0
            confirm = (hit[:, STATE] == TENTATIVE) & (hit[:, HITS] >= p.n_init)
            hit[confirm, STATE] = CONFIRMED
            info[t_idx] = hit
            # Every matched feature goes to the track's ring at once. The published metric keeps
            # a tentative track's features aside until it is confirmed, but only confirmed tracks
            # are compared by appearance and a ring's content does not depend on when it was
            # written, so the galleries the cascade reads are the same.
            slots = hit[:, SLOT]
            written = self.slot_n[slots]
            self.pool[slots, written % p.nn_budget] = features[d_idx]
            self.slot_n[slots] = written + 1
            if confirm.any():
                self._fill_rings(slots[confirm].tolist())
        dead = (info[:, STATE] == TENTATIVE) | (info[:, TSU] > p.max_age)
        dead[t_idx] = False
        if dead.any():
            self._drop(dead)
        self._fresh = len(new)  # the tracks started this frame: the last rows
        if len(new):
            self._initiate(xyah32[new], features[new])
        info = self.info
        out = (info[:, STATE] == CONFIRMED) & (info[:, TSU] <= 1)
        boxes = xyah_to_tlwh(self.rows[out])
        return list(map(TrackOut, info[out, ID].tolist(), map(tuple, boxes.tolist())))

    def tlwh(self) -> np.ndarray:
        """Every track's predicted or corrected box as ``[T, 4]`` top-left, width, height."""
        return xyah_to_tlwh(self.rows)

    # -- steps -----------------------------------------------------------------------------
    def _match(
        self, tlwh: np.ndarray, xyah: np.ndarray, features: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Matched track rows, their detections, and the unmatched detections in published order.

        The order of the unmatched detections matters: new tracks take their ids in that order.
        """
        p = self.params
        state, tsu = self.info[:, STATE], self.info[:, TSU]
        confirmed = (state == CONFIRMED).nonzero()[0]
        dets = np.arange(len(tlwh))
        tracks: list[np.ndarray] = []
        matched: list[np.ndarray] = []
        left = np.full(len(confirmed), True)  # confirmed tracks the cascade left
        if len(confirmed) and len(dets):
            ceiling = p.max_cosine_distance
            cost = _ceiling(self._gated_appearance_cost(confirmed, xyah, features), ceiling)
            close = np.logical_or.reduce(cost <= ceiling, axis=1)  # tracks with a close detection
            # The cascade's levels (1 .. max_age frames since update), only those with tracks,
            # each level's tracks in their order. A level with no detection close enough to any
            # of its tracks only moves the first min(tracks, detections) detections to the end
            # (`_nothing_close`): a rotation, so consecutive ones add up and apply at once.
            tsu_c = tsu[confirmed]
            order = tsu_c.argsort(kind="stable")
            sizes = np.bincount(tsu_c)
            levels = sizes.nonzero()[0]
            starts = (sizes.cumsum() - sizes)[levels]
            near = np.logical_or.reduceat(close[order], starts)  # levels with a close detection
            shift = 0
            for level, start, size, any_near in zip(
                levels.tolist(), starts.tolist(), sizes[levels].tolist(), near.tolist(), strict=True
            ):
                if not 1 <= level <= p.max_age:
                    continue
                if not len(dets):
                    break
                if not any_near:
                    shift += min(size, len(dets))
                    continue
                dets, shift = _rotate(dets, shift), 0
                rows = order[start : start + size]
                r, d, dets = _min_cost_matching(cost[rows][:, dets], ceiling, dets)
                left[rows[r]] = False
                tracks.append(confirmed[rows[r]])
                matched.append(d)
            dets = _rotate(dets, shift)
        iou_tracks = (state != CONFIRMED).nonzero()[0]  # unconfirmed tracks, then those missed once
        if len(dets):
            iou_tracks = np.concatenate([iou_tracks, _set_order(confirmed, left, tsu)])
        if len(iou_tracks) and len(dets):
            cost = _iou_cost(xyah_to_tlwh(self.rows[iou_tracks]), tlwh[dets])
            cost[tsu[iou_tracks] > 1] = INFTY_COST
            cost = _ceiling(cost, p.max_iou_distance)
            r, d, dets = _min_cost_matching(cost, p.max_iou_distance, dets)
            tracks.append(iou_tracks[r])
            matched.append(d)
        if not tracks:
            return np.zeros(0, np.int64), np.zeros(0, np.int64), dets
        return np.concatenate(tracks), np.concatenate(matched), dets

    def _gated_appearance_cost(
        self, tracks: np.ndarray, xyah: np.ndarray, features: np.ndarray
    ) -> np.ndarray:
        """Smallest cosine distance from each track's gallery to each detection inside its gate.

        Pairs outside the Mahalanobis gate cost ``INFTY_COST`` whatever they look like, so only
        pairs inside it are compared. Reading the galleries is the cost: each track's first pair
        takes one batched product over the pool's slots in use, and the few tracks with more
        than one detection in their gate (wide gates of tracks missed for a while) one product
        each for the rest.
        """
        inside = kalman.gating_distance_rows(self.rows[tracks], xyah) <= kalman.CHI2_95_4DOF
        cost = np.full(inside.shape, INFTY_COST)
        rows, cols = inside.nonzero()  # row-major: each track's pairs are contiguous
        if len(rows) == 0:
            return cost
        counts = np.bincount(rows)
        start = counts.cumsum() - counts
        k = np.arange(len(rows)) - start[rows]  # rank within the row
        slot_of = self.info[tracks, SLOT]
        slots = slot_of[rows]
        first = k == 0
        hi = int(slots.max()) + 1
        probe = np.zeros((hi, self.dim), dtype=np.float32)
        probe[slots[first]] = features[cols[first]]
        best = (self.pool[:hi] @ probe[:, :, None]).max(axis=1)[slots, 0]
        # The other pairs of tracks with several detections in their gate, track by track.
        for r in (counts > 1).nonzero()[0].tolist():
            a, b = int(start[r]) + 1, int(start[r] + counts[r])
            best[a:b] = (features[cols[a:b]] @ self.pool[slot_of[r]].T).max(axis=1)
        cost[rows, cols] = 1.0 - best
        return cost

    def _initiate(self, xyah: np.ndarray, features: np.ndarray) -> None:
        n = len(xyah)
        free = (~self.slot_used).nonzero()[0]
        if len(free) < n:
            cap = len(self.pool)
            grow = max(cap, n - len(free))
            shape = (grow, *self.pool.shape[1:])
            self.pool = np.concatenate([self.pool, np.zeros(shape, np.float32)])
            self.slot_n = np.concatenate([self.slot_n, np.zeros(grow, np.int64)])
            self.slot_used = np.concatenate([self.slot_used, np.zeros(grow, bool)])
            free = (~self.slot_used).nonzero()[0]
        slots = free[:n]
        self.slot_used[slots] = True
        self.pool[slots, 0] = features
        self.slot_n[slots] = 1
        info = np.empty((n, 5), dtype=np.int64)
        info[:, ID] = np.arange(self._next_id, self._next_id + n)
        info[:, HITS] = 1
        info[:, TSU] = 0
        info[:, STATE] = TENTATIVE
        info[:, SLOT] = slots
        self._next_id += n
        self.rows = np.concatenate([self.rows, kalman.initiate_rows(xyah)])
        self.info = np.concatenate([self.info, info])

    def _repeat_last(self, confirmed: np.ndarray) -> None:
        """Every track confirmed before this frame writes its latest feature to its ring again.

        deep-sort-realtime's tracker hands each confirmed track's features to the metric once per
        frame and then keeps the latest (``track.features = [track.features[-1]]``, where
        nwojke/deep_sort empties the list), so the metric receives that feature again in every
        later frame, before the frame's new one: a ring of ``nn_budget`` entries then holds fewer
        distinct features. Written after the matching, as the metric is updated at the end of the
        frame.
        """
        if not confirmed.any():
            return
        slots = self.info[confirmed, SLOT]
        written = self.slot_n[slots]
        budget = self.params.nn_budget
        self.pool[slots, written % budget] = self.pool[slots, (written - 1) % budget]
        self.slot_n[slots] = written + 1

    def _fill_rings(self, slots: list[int]) -> None:
        """Newly confirmed tracks' rings: the entries not written yet become copies of the first.

        The largest similarity over the whole ring is then the largest over the features written,
        so the cascade reads every ring whole, with no mask.
        """
        for s in slots:
            self.pool[s, self.slot_n[s] :] = self.pool[s, 0]

    def _drop(self, dead: np.ndarray) -> None:
        self.slot_used[self.info[dead, SLOT]] = False
        alive = ~dead
        self.rows, self.info = self.rows[alive], self.info[alive]


def _xyah32(tlwh: np.ndarray) -> np.ndarray:
    """Float32 boxes ``[N, 4]`` to centre x, y, aspect and height, computed in float32.

    deep-sort-realtime's ``Detection`` stores a box in float32 and converts it in float32; the
    state starts from that measurement and every update reads it. Float64 boxes moved IoU costs
    by about 1e-6 against the reference's, enough now and then to change which of the pairs at
    the ceiling the Hungarian solver picks, hence the order of new tracks.
    """
    out = tlwh.copy()
    out[:, :2] += out[:, 2:] / 2
    out[:, 2] /= out[:, 3]
    return out


def _iou_cost(boxes: np.ndarray, cand: np.ndarray) -> np.ndarray:
    """1 - IoU of float64 track boxes ``[T, 4]`` with float32 detections ``[N, 4]`` (tlwh).

    The reference's arithmetic (deep_sort ``iou_matching.iou``): the detections' bottom-right
    corners and areas in float32, the rest in float64.
    """
    cand_br = cand[:, :2] + cand[:, 2:]
    tl = np.maximum(boxes[:, None, :2], cand[None, :, :2])
    br = np.minimum((boxes[:, :2] + boxes[:, 2:])[:, None, :], cand_br[None, :, :])
    wh = np.maximum(br - tl, 0.0)
    inter = wh[..., 0] * wh[..., 1]
    union = (boxes[:, 2] * boxes[:, 3])[:, None] + (cand[:, 2] * cand[:, 3])[None, :] - inter
    return 1.0 - np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)


def _normalize(features: np.ndarray) -> np.ndarray:
    # np.linalg.norm(features, axis=1, keepdims=True) computes exactly this, after a few
    # microseconds of argument checks.
    norm = np.sqrt(np.add.reduce(features * features, axis=1, keepdims=True))
    return features / np.maximum(norm, 1e-12)


def _ceiling(cost: np.ndarray, max_distance: float) -> np.ndarray:
    """Costs above ``max_distance`` become ``max_distance + 1e-5``, as the reference does."""
    return np.where(cost > max_distance, max_distance + 1e-5, cost)


_NONE = np.zeros(0, dtype=np.int64)  # no matches (read only)


def _set_order(confirmed: np.ndarray, left: np.ndarray, tsu: np.ndarray) -> np.ndarray:
    """The confirmed tracks the cascade left and missed for one frame, in the reference's order.

    The published cascade returns its unmatched tracks as ``list(set(track_indices) -
    set(matched))``: the iteration order of a Python set, not ascending once an index reaches the
    size of the set's table. The order of the IoU stage's rows decides which pairs at the ceiling
    scipy's solver picks, hence the order of the unmatched detections and the ids of the tracks
    they start. The same expression on the same indices gives the same order.
    """
    cand = confirmed[left & (tsu[confirmed] == 1)]
    if len(cand) < 2:
        return cand
    wanted = set(cand.tolist())
    unmatched = set(confirmed.tolist()) - set(confirmed[~left].tolist())
    return np.array([k for k in unmatched if k in wanted], dtype=np.int64)


def _nothing_close(dets: np.ndarray, n_rows: int) -> np.ndarray:
    """The unmatched detections after an assignment where every cost is at the ceiling.

    Nothing can match and every assignment costs the same; scipy's solver then assigns row i to
    column i (its search takes the lowest unassigned column among equal costs), so the first
    min(rows, columns) detections go to the end. ``test_tracking_speedup`` checks this on scipy.
    """
    return _rotate(dets, min(n_rows, len(dets)))


def _rotate(dets: np.ndarray, m: int) -> np.ndarray:
    """The first ``m`` detections (modulo their number) moved to the end."""
    m = m % len(dets) if len(dets) else 0
    return np.concatenate([dets[m:], dets[:m]]) if m else dets


def _min_cost_matching(
    cost: np.ndarray, max_distance: float, dets: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Hungarian assignment of ceiled costs: matched rows, their detections, unmatched detections.

    The unmatched detections come in the reference's order: those left out of the assignment,
    then those assigned above the ceiling, by row. Every cost at the ceiling (a level of tracks
    with no detection close enough: half of all calls) skips the solver (`_nothing_close`).
    """
    if not (cost <= max_distance).any():
        return _NONE, _NONE, _nothing_close(dets, len(cost))
    rows, cols = linear_sum_assignment(cost)
    good = cost[rows, cols] <= max_distance
    taken = np.zeros(len(dets), dtype=bool)
    taken[cols] = True
    return rows[good], dets[cols[good]], np.concatenate([dets[~taken], dets[cols[~good]]])
