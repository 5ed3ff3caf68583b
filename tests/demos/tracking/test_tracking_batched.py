"""Chunks of frames through the detector and embedder give the tracks of frames one at a time."""

from __future__ import annotations

import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torchvision")
pytest.importorskip("scipy")

from zbench.demos.tracking import detector as det  # noqa: E402
from zbench.demos.tracking import pipeline, sources  # noqa: E402
from zbench.demos.tracking.deepsort import DeepSortParams, DeepSortTracker  # noqa: E402
from zbench.demos.tracking.embedder import Embedder, ReidNet  # noqa: E402
from zbench.demos.tracking.scene import SceneConfig  # noqa: E402


@pytest.fixture(scope="module")
def models():
    torch.manual_seed(0)
    model = det.build_detector(min_size=128, max_size=224, max_detections=12)
    with torch.no_grad():  # an untrained head scores nothing above 0.05: make it find boxes
        model.roi_heads.box_predictor.cls_score.bias[1] += 4.0
    return det.Detector(model), Embedder(ReidNet())


@pytest.fixture(scope="module")
def frames():
    return list(sources.generated(SceneConfig(320, 192, 6, 10, seed=3), "cpu"))


def _pipe(models) -> pipeline.Pipeline:
    detector, embedder = models
    tracker = DeepSortTracker(DeepSortParams(n_init=1))
    return pipeline.Pipeline(tracker, detector, embedder, "model", save_detections={})


def test_chunks_give_the_serial_detections_features_and_tracks_on_the_cpu(models, frames):
    """fp32 on the CPU: the same detections and features up to rounding (oneDNN may pick another
    convolution algorithm for another batch size; here they come out bit-equal), and the same
    tracks."""
    serial = _pipe(models)
    for f in frames:
        serial.step(f)
    batched = _pipe(models)
    sizes: list[int] = []
    detector = batched.detector
    calls = detector.batch

    def spy(x):
        sizes.append(len(x))
        return calls(x)

    detector.batch = spy  # type: ignore[method-assign]
    try:
        batched.run_batched(frames, batch=4, warmup=1)
    finally:
        del detector.batch
    assert sizes == [4, 4, 4]  # the last 2 frames padded to the graph's batch
    assert serial.save_detections is not None and batched.save_detections is not None
    assert sorted(batched.save_detections) == list(range(1, 11))
    for t, (tlwh, score, feat) in serial.save_detections.items():
        b_tlwh, b_score, b_feat = batched.save_detections[t]
        assert len(tlwh) > 0
        np.testing.assert_allclose(b_tlwh, tlwh, rtol=1e-5, atol=1e-3)
        np.testing.assert_allclose(b_score, score, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(b_feat, feat, rtol=1e-4, atol=1e-5)
    assert batched.results == serial.results and len({r[1] for r in serial.results}) > 3
    times = batched.times
    assert (times.warmup_frames, times.frames) == (4, 6)  # the warm-up chunk is timed apart
    assert times.warmup > 0 and times.detector > 0 and times.embedder > 0 and times.tracker > 0
    assert times.detections == sum(len(serial.save_detections[t][0]) for t in range(5, 11))


def test_a_run_no_longer_than_the_warm_up_is_timed_whole(models, frames):
    pipe = _pipe(models)
    wall = pipe.run_batched(frames[:3], batch=4, warmup=1)
    assert (pipe.times.warmup_frames, pipe.times.frames, pipe.times.warmup) == (0, 3, 0.0)
    assert pipe.times.total == pytest.approx(wall, rel=0.05)


def test_a_batch_below_one_is_refused(models, frames):
    with pytest.raises(ValueError, match="batch must be >= 1"):
        _pipe(models).run_batched(frames, batch=0)


def test_one_frame_chunks_run_at_the_short_switch_interval_and_it_is_restored(models, frames):
    seen: list[float] = []
    before = sys.getswitchinterval()
    _pipe(models).run_batched(
        frames[:2], 1, on_tracks=lambda *_: seen.append(sys.getswitchinterval())
    )
    assert seen == pytest.approx([pipeline.SWITCH_INTERVAL_S] * 2) and before > 1e-3
    assert sys.getswitchinterval() == before
    _pipe(models).run_batched(  # chunks of several frames keep Python's own interval
        frames[:2], 2, on_tracks=lambda *_: seen.append(sys.getswitchinterval())
    )
    assert seen[-1] == pytest.approx(pipeline.PYTHON_SWITCH_INTERVAL_S)
    _pipe(models).run_batched(
        frames[:1],
        1,
        on_tracks=lambda *_: seen.append(sys.getswitchinterval()),
        switch_interval=2e-3,
    )
    assert seen[-1] == pytest.approx(2e-3)
    assert sys.getswitchinterval() == before
