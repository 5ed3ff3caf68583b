"""Tracking maths: Kalman filter and gating against hand-computed values, association on crossings."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("scipy")

from zbench.demos.tracking import kalman, reference
from zbench.demos.tracking.boxes import iou_matrix, tlwh_to_xyah
from zbench.demos.tracking.bytetrack import ByteTracker
from zbench.demos.tracking.deepsort import DeepSortTracker


def test_initiate_sets_deep_sort_published_covariance():
    mean, cov = kalman.initiate(np.array([[100.0, 50.0, 0.5, 200.0]]))
    assert mean[0].tolist() == [100, 50, 0.5, 200, 0, 0, 0, 0]
    # std: 2 * h / 20 = 20 for x, y, h; 1e-2 for a; 10 * h / 160 = 12.5 for velocities; 1e-5 for va.
    assert np.allclose(np.diag(cov[0]), [400, 400, 1e-4, 400, 156.25, 156.25, 1e-10, 156.25])


def test_predict_moves_by_the_velocity_and_adds_process_noise():
    mean = np.array([[10.0, 20.0, 0.5, 100.0, 2.0, -1.0, 0.0, 0.5]])
    cov = np.zeros((1, 8, 8))
    m, c = kalman.predict(mean, cov)
    assert np.allclose(m[0], [12, 19, 0.5, 100.5, 2, -1, 0, 0.5])
    # process noise: (h/20)^2 = 25 on x, y, h; (h/160)^2 on velocities.
    assert np.allclose(np.diag(c[0]), [25, 25, 1e-4, 25, 0.390625, 0.390625, 1e-10, 0.390625])


def test_update_with_the_predicted_measurement_keeps_the_mean_and_shrinks_the_covariance():
    mean, cov = kalman.initiate(np.array([[100.0, 50.0, 0.5, 200.0]]))
    m, c = kalman.update(mean, cov, mean[:, :4])
    assert np.allclose(m, mean)
    # Kalman gain on x: P / (P + R) with P = 400, R = (200/20)^2 = 100 -> posterior 400 * 100 / 500.
    assert c[0, 0, 0] == pytest.approx(80.0)
    assert np.all(np.linalg.eigvalsh(c[0]) > 0)


def test_gating_distance_is_the_hand_computed_mahalanobis_distance():
    mean, cov = kalman.initiate(np.array([[0.0, 0.0, 1.0, 100.0]]))
    # Innovation covariance: P + R = (2*100/20)^2 + (100/20)^2 = 125 on x, y and h; 1e-4 + 1e-2 on a.
    d = kalman.gating_distance(mean, cov, np.array([[10.0, 0.0, 1.0, 100.0], [0, 0, 1.0, 90.0]]))
    assert d[0].tolist() == pytest.approx([100 / 125, 100 / 125])
    assert d[0, 0] < kalman.CHI2_95_4DOF
    far = kalman.gating_distance(mean, cov, np.array([[50.0, 0.0, 1.0, 100.0]]))
    assert far[0, 0] == pytest.approx(2500 / 125) and far[0, 0] > kalman.CHI2_95_4DOF


def test_iou_and_box_conversions():
    assert iou_matrix(
        np.array([[0, 0, 10, 10]]), np.array([[5, 0, 10, 10], [20, 20, 5, 5]])
    ).tolist() == [[pytest.approx(50 / 150), 0.0]]
    assert tlwh_to_xyah(np.array([[10, 20, 30, 60]])).tolist() == [[25, 50, 0.5, 60]]


def _crossing(frames: int = 40, gap: float = 0.0):
    """Two walkers crossing head-on at the same height (full overlap mid-way), distinct looks."""
    rng = np.random.default_rng(0)
    look = np.eye(128)[:2] + 0.01 * rng.normal(size=(2, 128))
    seq = []
    for t in range(frames):
        a = [100 + 8 * t, 200 + gap, 40, 100]
        b = [100 + 8 * (frames - 1) - 8 * t, 200, 40, 100]
        feats = look + 0.02 * rng.normal(size=(2, 128))
        seq.append((np.array([a, b], float), np.array([0.9, 0.9]), feats))
    return seq


def _owner_ids(tracker, seq) -> dict[int, set[int]]:
    """Which track ids reported each walker (by the nearer of the two true boxes)."""
    owners: dict[int, set[int]] = {0: set(), 1: set()}
    for boxes, scores, feats in seq:
        for out in tracker.update(boxes, scores, feats):
            c = np.array(out.tlwh[:2])
            who = int(np.argmin(np.abs(boxes[:, :2] - c).sum(1)))
            owners[who].add(out.track_id)
    return owners


def test_deepsort_keeps_identities_through_a_crossing_when_appearance_differs():
    owners = _owner_ids(DeepSortTracker(), _crossing())
    assert len(owners[0]) == 1 and len(owners[1]) == 1 and owners[0] != owners[1]


def test_deepsort_does_not_split_tracks_of_identical_looking_walkers():
    seq = [(b, s, np.ones_like(f)) for b, s, f in _crossing(gap=30)]
    owners = _owner_ids(DeepSortTracker(), seq)
    assert len(owners[0] | owners[1]) == 2  # two tracks, no fragmentation


def test_bytetrack_follows_crossing_walkers_by_motion():
    owners = _owner_ids(ByteTracker(), _crossing(gap=10))
    assert len(owners[0]) == 1 and len(owners[1]) == 1 and owners[0] != owners[1]


def test_bytetrack_second_stage_keeps_a_track_on_a_low_score_detection():
    tk = ByteTracker()
    ids = []
    for t in range(10):
        score = 0.3 if t == 5 else 0.9  # below track_thresh: only the second stage can take it
        out = tk.update(np.array([[10.0 + 5 * t, 10, 20, 50]]), np.array([score]))
        ids.append([o.track_id for o in out])
    assert ids[5] == ids[4] == ids[9] and len(ids[9]) == 1


def test_deepsort_drops_detections_below_min_confidence_and_deletes_tentative_tracks():
    tk = DeepSortTracker()
    box, feat = np.array([[10.0, 10, 20, 50]]), np.ones((1, 128))
    assert tk.update(box, np.array([0.1]), feat) == [] and len(tk.ids) == 0
    tk.update(box, np.array([0.9]), feat)
    tk.update(np.zeros((0, 4)), np.zeros(0), np.zeros((0, 128)))  # a miss while tentative
    assert len(tk.ids) == 0


@pytest.mark.slow
@pytest.mark.skipif(not reference.available(), reason="deep-sort-realtime not installed")
def test_same_identities_as_deep_sort_realtime_on_a_scripted_sequence():
    from zbench.demos.tracking.pipeline import noisy_truth
    from zbench.demos.tracking.scene import Scene, SceneConfig

    cfg = SceneConfig(width=480, height=270, targets=10, frames=40, seed=5, noise=0)
    scene, rng, frng = Scene(cfg), np.random.default_rng(1), np.random.default_rng(2)
    looks = frng.normal(size=(1000, 128))
    ours, ref = DeepSortTracker(), reference.ReferenceDeepSort()
    for _ in range(cfg.frames):
        _, truth = scene.next(draw=False)
        b, s, ids = noisy_truth(truth, rng, cfg.width, cfg.height)
        f = looks[ids % 1000] + 0.3 * frng.normal(size=(len(ids), 128))
        a = sorted((o.track_id, o.tlwh) for o in ours.update(b, s, f))
        r = sorted((o.track_id, o.tlwh) for o in ref.update(b, s, f))
        assert [x[0] for x in a] == [x[0] for x in r]
        assert np.allclose([x[1] for x in a], [x[1] for x in r], atol=1e-3)
