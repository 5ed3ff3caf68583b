"""Motion demo: renderer determinism, warping maths, model shapes and dtypes, video round-trip."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("cv2")

from zbench.demos.motion import preview, renderer, video, warp  # noqa: E402
from zbench.demos.motion.demo import SMOKE_CONFIG, MotionOptions  # noqa: E402
from zbench.demos.motion.infer import Animator  # noqa: E402
from zbench.demos.motion.model import MotionModel  # noqa: E402


def _heads(seed: int, n: int = 3, size: int = 48):
    g = torch.Generator().manual_seed(seed)
    return renderer.render(renderer.sample_identity(g, n), renderer.sample_pose(g, n), size)


def test_renderer_is_deterministic_for_a_seed_and_differs_across_seeds():
    a, b, c = _heads(5), _heads(5), _heads(6)
    assert torch.equal(a.images, b.images) and torch.equal(a.landmarks, b.landmarks)
    assert (a.images - c.images).abs().mean() > 0.02
    assert a.images.shape == (3, 3, 48, 48) and a.landmarks.shape == (3, len(renderer.LANDMARKS), 2)
    assert torch.isfinite(a.images).all() and a.images.min() >= 0 and a.images.max() <= 1


def test_renderer_pose_moves_the_landmarks_the_right_way():
    g = torch.Generator().manual_seed(0)
    ident = renderer.sample_identity(g, 1)
    pose = renderer.neutral_pose(1)
    still = renderer.render(ident, pose, 64).landmarks
    moved = renderer.render(ident, {**pose, "tx": torch.tensor([0.2])}, 64).landmarks
    assert torch.allclose(
        moved[..., 0] - still[..., 0], torch.full((1, len(renderer.LANDMARKS)), 0.2), atol=1e-5
    )
    closed = renderer.render(ident, {**pose, "eye_open": torch.tensor([0.0])}, 64).images
    assert (closed - renderer.render(ident, pose, 64).images).abs().sum() > 1


def test_identity_flow_reproduces_the_image():
    img = torch.rand(2, 3, 16, 20)
    grid = warp.make_grid(16, 20)[None].expand(2, 16, 20, 2)
    assert torch.allclose(warp.warp(img, grid), img, atol=1e-5)


def test_pure_translation_shifts_the_image_by_whole_pixels():
    img = torch.rand(1, 3, 17, 17)
    step = 2 / 16  # one pixel in [-1, 1] coordinates with align_corners=True
    out = warp.warp(img, warp.translation_grid(1, 17, 17, 3 * step, -2 * step))
    # The picture moves 3 px right and 2 px up; uncovered pixels are zero.
    assert torch.allclose(out[..., : 17 - 2, 3:], img[..., 2:, : 17 - 3], atol=1e-5)
    assert out[..., :, :3].abs().max() == 0 and out[..., 15:, :].abs().max() == 0


def test_sparse_motion_with_equal_keypoints_is_identity():
    kp = torch.rand(2, 4, 2) * 2 - 1
    jac = torch.eye(2).expand(2, 4, 2, 2) + 0.1 * torch.rand(2, 4, 2, 2)
    m = warp.sparse_motions(8, 8, kp, jac, kp, jac)
    assert m.shape == (2, 5, 8, 8, 2)
    assert torch.allclose(m, warp.make_grid(8, 8).expand_as(m), atol=1e-5)
    inv = warp.inv2x2(jac)
    assert torch.allclose(inv @ jac, torch.eye(2).expand_as(jac), atol=1e-5)


def test_affine_from_points_recovers_a_known_shift():
    src = torch.rand(1, 5, 2)
    grid = warp.affine_grid_from_points(src, src + 0.1, 4, 4)
    assert torch.allclose(grid, warp.make_grid(4, 4)[None] - 0.1, atol=1e-4)


def test_estimated_affine_recovers_a_known_warp_of_a_rendered_frame():
    img = _heads(5, 3, 64).images
    true = torch.tensor(
        [
            [[1.06, 0.07, 0.05], [-0.05, 0.96, -0.04]],
            [[0.95, -0.04, -0.06], [0.03, 1.04, 0.05]],
            [[1.0, 0.0, 0.08], [0.0, 1.0, 0.0]],
        ]
    )
    moved = warp.warp(img, warp.affine_grid(true, 64, 64), padding="border")
    est = warp.estimate_affine(img, moved)
    assert est.shape == (3, 2, 3)
    assert (est - true).abs().max() < 0.01, est - true  # a pixel is 0.032 here
    assert (
        warp.warp(img, warp.affine_grid(est, 64, 64), padding="border") - moved
    ).abs().mean() < 0.01


def test_estimated_affine_of_identical_frames_is_the_identity():
    img = _heads(5, 3, 64).images
    est = warp.estimate_affine(img, img)
    assert torch.allclose(est, torch.eye(2, 3).expand(3, 2, 3), atol=1e-5)
    grid = warp.affine_grid(est, 64, 64)
    assert torch.allclose(grid, warp.make_grid(64, 64).expand(3, 64, 64, 2), atol=1e-5)


def test_model_and_animator_shapes_and_dtypes():
    torch.manual_seed(0)
    model = MotionModel(SMOKE_CONFIG).eval()
    x = torch.rand(2, 3, 64, 64)
    kp, jac = model.kp(x)
    assert kp.shape == (2, 5, 2) and jac.shape == (2, 5, 2, 2) and kp.dtype == torch.float32
    assert kp.abs().max() <= 1
    out = model.animate(x, kp, jac, kp, jac)
    assert out["prediction"].shape == (2, 3, 64, 64) and out["occlusion"].shape == (2, 1, 16, 16)
    assert out["flow"].shape == (2, 16, 16, 2)
    anim = Animator(model, bf16=True)
    anim.set_source(torch.randint(0, 255, (64, 64, 3), dtype=torch.uint8))
    frames = anim(torch.randint(0, 255, (3, 64, 64, 3), dtype=torch.uint8))
    assert frames.shape == (3, 64, 64, 3) and frames.dtype == torch.uint8


def test_the_demos_first_frame_and_the_loops_share_one_compiled_frame(monkeypatch):
    """The first call took a permuted render (channels first in memory) and the loop contiguous
    frames: the compiled frame, specialised on strides, compiled again inside the timed loop."""
    from torch._dynamo.testing import CompileCounter

    from zbench.demos.motion import demo, infer

    counter = CompileCounter()
    real = torch.compile
    monkeypatch.setattr(infer.torch, "compile", lambda fn, **kw: real(fn, backend=counter, **kw))
    torch._dynamo.reset()
    model = MotionModel(SMOKE_CONFIG).eval()
    anim = Animator(model, bf16=False, compile=True)
    anim.set_source(torch.randint(0, 255, (64, 64, 3), dtype=torch.uint8))
    render = demo._u8(_heads(3, n=1, size=64).images[0])  # the demo's first driving frame
    assert not render.flags["C_CONTIGUOUS"]
    anim(torch.from_numpy(render)[None])  # as demo.run makes its first call
    for _ in range(3):  # as live.run_live uploads the rest
        anim(torch.from_numpy(np.ascontiguousarray(render))[None])
    assert counter.frame_count == 1
    torch._dynamo.reset()


def test_animator_needs_a_source():
    with pytest.raises(RuntimeError, match="set_source"):
        Animator(MotionModel(SMOKE_CONFIG))(torch.zeros(1, 64, 64, 3, dtype=torch.uint8))


@pytest.mark.parametrize("suffix", [".mp4", ".gif"])
def test_video_writer_and_reader_round_trip(tmp_path, suffix):
    frames = [np.full((32, 48, 3), (40 * i, 200 - 40 * i, 90), np.uint8) for i in range(5)]
    path = video.write_video(tmp_path / f"clip{suffix}", frames, fps=10)
    back = video.read_video(path, 32)
    assert back.shape == (5, 32, 32, 3) and back.dtype == np.uint8
    # Lossy codecs: colours come back close, in order.
    assert (
        np.abs(back.mean((1, 2)).astype(float) - np.array([f.mean((0, 1)) for f in frames])).max()
        < 12
    )


def test_video_errors_are_clear(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such video"):
        video.read_video(tmp_path / "missing.mp4", 32)
    with pytest.raises(ValueError, match="unsupported video type"):
        video.write_video(tmp_path / "x.webp", [np.zeros((4, 4, 3), np.uint8)])


def test_side_by_side_and_halfblock_preview():
    a = np.zeros((4, 4, 3), np.uint8)
    b = np.full((4, 4, 3), 255, np.uint8)
    strip = video.side_by_side(a, b, gap=2)
    assert strip.shape == (4, 10, 3) and strip[0, 9].tolist() == [255, 255, 255]
    cells = preview.halfblock_cells(strip)
    assert len(cells) == 2 and len(cells[0]) == 10 and cells[0][0] == ("#000000", "#000000")
    assert preview.downscale(np.zeros((64, 64, 3), np.uint8), 48).shape == (48, 48, 3)


def test_options_reject_unknown_keys_and_bad_sizes():
    with pytest.raises(ValueError, match="unknown motion option"):
        MotionOptions.parse({"sise": 3})
    with pytest.raises(ValueError, match="multiple of 32"):
        MotionOptions.parse({"size": 100})


def test_a_real_training_run_does_not_resume_a_smoke_runs_tiny_model(tmp_path: Path) -> None:
    """A folder holding a --smoke model (earlier versions kept it where real runs resume): a real
    training run starts a full-size model and says why; animating it, or a smoke run, loads it."""
    from zbench.demos.motion import train
    from zbench.demos.motion.demo import _model
    from zbench.demos.motion.model import MotionConfig, MotionModel

    train.save(MotionModel(SMOKE_CONFIG), tmp_path, step=6)
    phases: list[str] = []

    def emit(type_: str, **fields: object) -> None:
        phases.append(str(fields.get("detail")))

    def model_for(**opts: object) -> MotionConfig:
        o = MotionOptions.parse({"checkpoint_dir": str(tmp_path), "device": "cpu", **opts})
        return _model(o, torch.device("cpu"), emit)[0].cfg

    assert model_for() == MotionConfig() and "a --smoke run's tiny model" in phases[-1]
    assert model_for(smoke=True) == SMOKE_CONFIG and phases[-1].startswith("loaded")
    assert model_for(minutes=0.0) == SMOKE_CONFIG  # animate what is there, as asked
