"""The fast Deep SORT against its earlier version and deep-sort-realtime, frame by frame."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("scipy")

from scipy.optimize import linear_sum_assignment

from tests.demos.tracking.deepsort_before import DeepSortBefore
from zbench.demos.tracking import deepsort, kalman, reference
from zbench.demos.tracking.boxes import iou_matrix
from zbench.demos.tracking.deepsort import DeepSortParams, DeepSortTracker


def walkers(seed: int, frames: int = 150, targets: int = 30) -> list:
    """Walkers on three lanes (so they cross), entering and leaving at random frames, hidden for
    1-40 frames at a time, missed now and then, with false alarms, low scores and shuffled rows."""
    rng = np.random.default_rng(seed)
    looks = rng.normal(size=(targets, 128))
    looks[1::7] = looks[::7][: len(looks[1::7])] + 0.3 * rng.normal(size=(len(looks[1::7]), 128))
    enter = rng.integers(0, frames * 2 // 3, targets)
    leave = enter + rng.integers(15, frames, targets)
    height = rng.uniform(60, 200, targets)
    lane = rng.integers(0, 3, targets) * 150.0 + 100
    x0 = np.where(rng.random(targets) < 0.5, -50.0, 1300.0)
    speed = np.sign(600 - x0) * rng.uniform(3, 12, targets)
    hidden = np.zeros((frames, targets), dtype=bool)
    for t in range(targets):
        for _ in range(rng.integers(0, 3)):
            a = rng.integers(0, frames)
            hidden[a : a + rng.integers(1, 41), t] = True
    seq = []
    for f in range(frames):
        on = (enter <= f) & (f < leave) & ~hidden[f] & (rng.random(targets) < 0.9)
        idx = np.flatnonzero(on)
        h = height[idx] * np.exp(rng.normal(0, 0.03, len(idx)))
        w = 0.4 * h
        x = x0[idx] + speed[idx] * (f - enter[idx]) + rng.normal(0, 2, len(idx))
        y = lane[idx] + 0.1 * height[idx] + rng.normal(0, 2, len(idx))
        boxes = np.stack([x, y, w, h], axis=1)
        feats = looks[idx] + 0.3 * rng.normal(size=(len(idx), 128))
        n_fp = rng.poisson(1.0)
        fp_boxes = np.stack(
            [
                rng.uniform(0, 1200, n_fp),
                rng.uniform(0, 600, n_fp),
                np.full(n_fp, 40.0),
                np.full(n_fp, 100.0),
            ],
            axis=1,
        )
        boxes = np.concatenate([boxes, fp_boxes])
        feats = np.concatenate([feats, rng.normal(size=(n_fp, 128))])
        scores = rng.uniform(0.2, 1.0, len(boxes))
        order = rng.permutation(len(boxes))
        seq.append((boxes[order], scores[order], feats[order]))
    return seq


def run(tracker, seq) -> list[list]:
    return [[(o.track_id, o.tlwh) for o in tracker.update(b, s, f)] for b, s, f in seq]


def assert_same(ours: list[list], theirs: list[list]) -> None:
    for frame, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        assert [x[0] for x in a] == [x[0] for x in b], f"identities differ in frame {frame}"
        if a:
            assert np.allclose([x[1] for x in a], [x[1] for x in b], rtol=1e-7, atol=1e-6)


PARAMS = {
    "published": DeepSortParams(),
    "small rings": DeepSortParams(nn_budget=5),  # rings wrap around many times
    "quick": DeepSortParams(n_init=1, max_age=5),  # many confirmations and deletions
}


@pytest.mark.parametrize("name", list(PARAMS))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_same_tracks_as_the_earlier_version_frame_by_frame(name, seed):
    seq = walkers(seed)
    ours = run(DeepSortTracker(PARAMS[name]), seq)
    assert_same(ours, run(DeepSortBefore(PARAMS[name]), seq))
    ids = {i for frame in ours for i, _ in frame}
    assert len(ids) > 25 and sum(map(len, ours)) > 1000  # the sequence exercises the tracker


def test_the_galleries_are_those_of_the_earlier_version():
    """Same features per confirmed track; ring entries not written yet repeat written ones."""
    seq, params = walkers(3, frames=120), DeepSortParams(nn_budget=30)
    ours, before = DeepSortTracker(params), DeepSortBefore(params)
    young = 0
    for frame, (b, s, f) in enumerate(seq):
        ours.update(b, s, f)
        before.update(b, s, f)
        if frame % 4:
            continue
        confirmed = np.flatnonzero(ours.info[:, deepsort.STATE] == deepsort.CONFIRMED)
        for t in confirmed.tolist():
            slot = ours.info[t, deepsort.SLOT]
            n = min(ours.slot_n[slot], 30)
            old = {tuple(x) for x in before.pool[before.slot[t], :n].tolist()}
            assert ours.info[t, deepsort.ID] == before.ids[t]
            assert {tuple(x) for x in ours.pool[slot, :n].tolist()} == old
            assert {tuple(x) for x in ours.pool[slot].tolist()} == old
            young += n < 30
    assert young > 20


@pytest.mark.parametrize("shape", [(1, 1), (1, 6), (3, 3), (2, 7), (6, 2), (9, 40), (40, 9)])
def test_a_level_with_nothing_close_reorders_detections_as_scipy_does(shape):
    """The shortcut for all-ceiling cost matrices gives scipy's assignment, not just an optimum."""
    ceiling = 0.2 + 1e-5
    cost = np.full(shape, ceiling)
    dets = np.arange(100, 100 + shape[1])
    _, cols = linear_sum_assignment(cost)
    free = np.ones(shape[1], dtype=bool)
    free[cols] = False
    expected = np.concatenate([dets[free], dets[cols]])  # every pair is above the ceiling
    r, d, left = deepsort._min_cost_matching(cost, 0.2, dets)
    assert len(r) == len(d) == 0
    assert left.tolist() == expected.tolist()


def test_min_cost_matching_orders_unmatched_detections_like_the_reference():
    cost = np.array([[0.1, 0.5, 0.5], [0.5, 0.5, 0.5]])  # row 1 is assigned above the ceiling
    r, d, left = deepsort._min_cost_matching(
        np.where(cost > 0.2, 0.2 + 1e-5, cost), 0.2, np.array([7, 8, 9])
    )
    _, cols = linear_sum_assignment(np.where(cost > 0.2, 0.2 + 1e-5, cost))
    assert r.tolist() == [0] and d.tolist() == [7]
    assert left.tolist() == [x for x in (8, 9) if x - 7 not in cols] + [7 + cols[1]]


def test_block_kalman_filter_equals_the_full_matrix_filter():
    rng = np.random.default_rng(4)
    z = rng.uniform(50, 900, (12, 4))
    z[:, 2] = rng.uniform(0.3, 0.6, 12)
    mean, cov = kalman.initiate(z)
    rows = kalman.initiate_rows(z)
    for step in range(30):
        mean, cov = kalman.predict(mean, cov)
        kalman.predict_rows(rows)
        meas = z + rng.normal(0, 3, z.shape) + step * np.array([4.0, 1.0, 0.0, 0.5])
        meas[:, 2] = z[:, 2]
        assert np.allclose(
            kalman.gating_distance_rows(rows, meas),
            kalman.gating_distance(mean, cov, meas),
            rtol=1e-9,
        )
        if step % 4 != 3:  # some frames without a measurement
            mean, cov = kalman.update(mean, cov, meas)
            rows = kalman.update_rows(rows, meas)
    assert np.allclose(rows[:, kalman.MEAN], mean, rtol=1e-10, atol=1e-9)
    i = np.arange(4)
    for block, (a, b) in (
        (kalman.PP, (i, i)),
        (kalman.PV, (i, i + 4)),
        (kalman.VV, (i + 4, i + 4)),
    ):
        assert np.allclose(rows[:, block], cov[:, a, b], rtol=1e-9, atol=1e-12)
    # Every entry outside the blocks stays zero in the full filter.
    mask = np.ones((8, 8), dtype=bool)
    mask[i, i] = mask[i, i + 4] = mask[i + 4, i] = mask[i + 4, i + 4] = False
    assert np.all(cov[:, mask] == 0)


def test_iou_matrix_keeps_the_earlier_values_bit_for_bit():
    """ByteTrack shares iou_matrix: its identities stay unchanged only if every value does."""
    rng = np.random.default_rng(6)
    a = np.concatenate([rng.uniform(0, 300, (40, 4)), [[0, 0, 10, 10], [5, 5, 0, 0]]])
    b = np.concatenate([rng.uniform(0, 300, (30, 4)), [[10, 0, 10, 10], [0, 0, 10, 10]]])
    ta, tb = a.copy(), b.copy()
    ta[:, 2:] += ta[:, :2]
    tb[:, 2:] += tb[:, :2]
    tl = np.maximum(ta[:, None, :2], tb[None, :, :2])
    wh = np.clip(np.minimum(ta[:, None, 2:], tb[None, :, 2:]) - tl, 0, None)
    inter = wh[..., 0] * wh[..., 1]
    area_a = (ta[:, 2] - ta[:, 0]) * (ta[:, 3] - ta[:, 1])
    area_b = (tb[:, 2] - tb[:, 0]) * (tb[:, 3] - tb[:, 1])
    union = area_a[:, None] + area_b[None, :] - inter
    before = np.where(union > 0, inter / np.maximum(union, 1e-12), 0.0)
    assert np.array_equal(iou_matrix(a, b), before)
    assert 0 < np.count_nonzero(before) < before.size


@pytest.mark.slow
@pytest.mark.skipif(not reference.available(), reason="deep-sort-realtime not installed")
def test_same_identities_as_deep_sort_realtime_on_walkers():
    seq = walkers(5, frames=100, targets=20)
    ours = run(DeepSortTracker(), seq)
    theirs = run(reference.ReferenceDeepSort(), seq)
    for a, b in zip(ours, theirs, strict=True):
        assert sorted(x[0] for x in a) == sorted(x[0] for x in b)


@pytest.mark.slow
def test_speed_benchmark_times_both_versions_and_checks_their_identities(tmp_path, capsys):
    from benchmarks import tracker_speed

    out = tmp_path / "speed.json"
    assert (
        tracker_speed.main(["--targets", "8", "--frames", "30", "--runs", "2", "--out", str(out)])
        == 0
    )
    res = json.loads(out.read_text())
    assert res["same_identities"] is True and res["frames"] == 30
    assert len(res["fps_runs"]["before"]) == len(res["fps_runs"]["now"]) == 2
    assert res["speedup"] > 0 and "speed-up" in capsys.readouterr().out
    capsys.readouterr()
    for bad in (["--runs", "0"], ["--frames", "x"]):
        with pytest.raises(SystemExit) as stop:
            tracker_speed.main([*bad, "--out", str(out)])
        err = capsys.readouterr().err.strip().splitlines()
        assert stop.value.code == 2 and len(err) == 1 and err[0].startswith("tracker_speed.py:")
