"""Our Deep SORT assigns deep-sort-realtime's identities in every frame, where near ties decide.

Each sequence is a short stretch of benchmarks/tracking.py's association test at its size (50
figures at 1080p, jittered-truth detections with false alarms) with features scattered around each
figure's look so that appearance often fails and the IoU stage decides. Each one once set our
tracker apart from the reference in a different way: the order of the IoU stage's tracks (the
reference's Python set), the float32 boxes of the reference's detections (an IoU off by 1e-6 that
changed which pairs at the ceiling the Hungarian solver chose), and the latest feature that the
reference hands to the gallery again every frame (the smaller rings show it within a few frames).
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("scipy")
pytest.importorskip("deep_sort_realtime.deepsort_tracker")

from zbench.demos.tracking.deepsort import DeepSortParams, DeepSortTracker
from zbench.demos.tracking.pipeline import noisy_truth
from zbench.demos.tracking.reference import ReferenceDeepSort
from zbench.demos.tracking.scene import Scene, SceneConfig


def crowd(seed: int, frames: int, spread: float) -> list:
    """Detections, scores and 128-d features: ``spread`` is the features' noise around a look."""
    cfg = SceneConfig(1920, 1080, targets=50, frames=frames, seed=1000 + seed)
    scene, rng, frng = Scene(cfg), np.random.default_rng(seed), np.random.default_rng(100 + seed)
    looks = frng.normal(size=(1000, 128))
    seq = []
    for _ in range(frames):
        _, truth = scene.next(draw=False)
        boxes, scores, ids = noisy_truth(truth, rng, cfg.width, cfg.height)
        feats = np.where(
            ids[:, None] >= 0, looks[np.maximum(ids, 0) % 1000], frng.normal(size=(len(ids), 128))
        )
        seq.append((boxes, scores, feats + spread * frng.normal(size=feats.shape)))
    return seq


CASES = {
    # name: seed, frames, spread, params
    "iou stage order": (0, 8, 0.5, DeepSortParams()),
    "float32 boxes": (2, 36, 0.55, DeepSortParams()),
    "repeated latest feature": (1, 10, 0.5, DeepSortParams(nn_budget=5)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_same_identities_as_deep_sort_realtime_in_every_frame(name):
    seed, frames, spread, params = CASES[name]
    ours, ref = DeepSortTracker(params), ReferenceDeepSort(params)
    seen: set[int] = set()
    for frame, (boxes, scores, feats) in enumerate(crowd(seed, frames, spread)):
        a = sorted((o.track_id, o.tlwh) for o in ours.update(boxes, scores, feats))
        r = sorted((o.track_id, o.tlwh) for o in ref.update(boxes, scores, feats))
        assert [i for i, _ in a] == [i for i, _ in r], f"identities differ in frame {frame}"
        if a:
            assert np.allclose([b for _, b in a], [b for _, b in r], rtol=1e-9, atol=1e-6)
        seen.update(i for i, _ in a)
    assert len(seen) > 30  # most figures are tracked: the sequence exercises the tracker
