"""The detector's backbone replayed from a CUDA graph gives the eager backbone's detections."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torchvision")

from zbench.demos.tracking import detector as det  # noqa: E402


def _frame(device: str, h: int = 270, w: int = 480, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, 256, (3, h, w), generator=g, dtype=torch.uint8).to(device)


def test_graphs_stay_off_on_the_cpu() -> None:
    torch.manual_seed(0)
    model = det.build_detector(min_size=128, max_size=224)
    d = det.Detector(model, bf16=True, graphs=True)
    assert not d.graphed and d.graph_error is None
    boxes, scores = d(_frame("cpu"))
    assert boxes.shape[1] == 4 and boxes.shape[0] == scores.shape[0]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_graph_replay_matches_eager_on_cuda() -> None:
    torch.manual_seed(0)
    model = det.build_detector(min_size=540, max_size=960).cuda()
    with torch.no_grad():  # a trained detector's scores: raise the box head's bias so some pass
        model.roi_heads.box_predictor.cls_score.bias[1] += 4.0
    eager, graphed = det.Detector(model, graphs=False), None
    frames = [_frame("cuda", 1080, 1920, seed) for seed in range(4)]
    want = [tuple(t.clone() for t in eager(f)) for f in frames]
    graphed = det.Detector(model, graphs=True)
    got = [tuple(t.clone() for t in graphed(f)) for f in frames]
    assert graphed.graphed, graphed.graph_error
    for (wb, ws), (gb, gs) in zip(want, got, strict=True):
        assert len(wb) > 0
        torch.testing.assert_close(gb, wb)
        torch.testing.assert_close(gs, ws)
    # A frame that resizes to another shape is captured apart (720p resizes to 1080p's 544 x 960,
    # a square frame to 544 x 544); the first shape's graph is kept.
    small = graphed(_frame("cuda", 1080, 1080))
    assert len(model.backbone._graphs) == 2 and small[0].shape[1] == 4
