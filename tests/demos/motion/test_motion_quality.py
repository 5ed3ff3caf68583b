"""Motion demo: identity start of the model, head masks, landmark transport and the quality measure."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from zbench.demos.motion import evaluate, renderer, train, warp  # noqa: E402
from zbench.demos.motion.demo import SMOKE_CONFIG  # noqa: E402
from zbench.demos.motion.infer import animate  # noqa: E402
from zbench.demos.motion.model import MotionModel  # noqa: E402
from zbench.demos.motion.model import downscale as model_downscale  # noqa: E402


def _pair(size: int = 64, seed: int = 3):
    g = torch.Generator().manual_seed(seed)
    ident = renderer.sample_identity(g, 1)
    both = {k: torch.cat([v, v]) for k, v in ident.items()}
    pose = renderer.sample_pose(g, 2)
    heads = renderer.render(both, pose, size)
    return heads.images[:1], heads.images[1:]


def test_untrained_model_returns_the_source_not_a_blur():
    # The generator adds a zero-initialised residual to the warped source and the masks favour the
    # no-motion channel: training starts from "copy the source".
    torch.manual_seed(0)
    model = MotionModel(SMOKE_CONFIG).eval()
    src, drv = _pair()
    same = animate(model, src, src, bf16=False)
    assert (same["prediction"] - src).abs().max() < 1e-4
    assert 0.3 < float(same["occlusion"].mean()) < 0.7  # not saturated either way
    moved = animate(model, src, drv, bf16=False)["prediction"]
    # Some motion may start (random keypoints), but no tint or blur: far closer to the source
    # than the driving frame is.
    assert (moved - src).abs().mean() < 0.5 * (drv - src).abs().mean()
    assert abs(float(moved.mean() - src.mean())) < 0.01


def test_head_mask_covers_the_head_and_not_the_corners():
    g = torch.Generator().manual_seed(1)
    heads = renderer.render(renderer.sample_identity(g, 4), renderer.neutral_pose(4), 64)
    m = heads.masks
    assert m.shape == (4, 1, 64, 64) and 0.1 < float(m.mean()) < 0.8
    assert float(m[:, :, :4, :4].max()) < 0.05 and float(m[:, :, :4, -4:].max()) < 0.05
    px = ((heads.landmarks + 1) * 63 / 2).round().long()  # every landmark is on the head
    for b in range(4):
        assert float(m[b, 0, px[b, :, 1], px[b, :, 0]].min()) > 0.9


def test_transport_points_inverts_affine_warps_at_any_flow_resolution():
    p = torch.rand(2, 7, 2) * 1.6 - 0.8
    ident = warp.make_grid(32, 32)[None].expand(2, 32, 32, 2)
    assert torch.allclose(warp.transport_points(ident, p, 32), p, atol=1e-5)
    a = torch.tensor([[0.9, 0.1], [-0.05, 1.1]])
    t = torch.tensor([0.03, -0.02])
    grid = (warp.make_grid(16, 16) @ a.T + t)[None].expand(2, 16, 16, 2)
    out = warp.transport_points(grid, p, 128)  # the output pixel that samples each point
    assert torch.allclose(out @ a.T + t, p, atol=1e-4)


def test_quality_reports_true_landmark_distances_for_the_baselines():
    clips, lms, masks = evaluate.held_out_clips(2, 3, 64, "cpu")
    q = evaluate.quality(MotionModel(SMOKE_CONFIG), clips, lms, masks, bf16=False)
    assert set(q) == {"source", "affine", "affine_oracle", "model"}
    assert set(q["model"]) == {"l1", "l1_head", "akd_px"}
    # The unwarped source leaves every landmark where it was in the first frame.
    true_move = (lms - lms[:, :1]).norm(dim=-1).mean() * 63 / 2
    assert q["source"]["akd_px"] == pytest.approx(float(true_move), abs=1e-3)
    # The head region is where the frames differ: its error is larger than the whole frame's.
    assert q["source"]["l1_head"] > 1.5 * q["source"]["l1"]
    # The oracle affine warp is fitted to five of the landmarks it is scored on.
    assert q["affine_oracle"]["akd_px"] < 0.5 * q["source"]["akd_px"]
    # The estimated one sees only the images: it follows the head part of the way, and on the
    # head beats doing nothing.
    assert q["affine_oracle"]["akd_px"] < q["affine"]["akd_px"] < q["source"]["akd_px"]
    assert q["affine"]["l1_head"] < q["source"]["l1_head"]


class _FixedClip:
    """Training pairs that are always the same clip: its first frame drives each of the others."""

    def __init__(self, images: torch.Tensor) -> None:
        self.images = images  # (1, T, 3, H, W)

    def next(self):
        frames = self.images[0]
        return frames[:1].expand_as(frames), frames


@pytest.mark.slow
def test_a_few_training_steps_beat_the_unwarped_source_on_a_fixed_clip():
    # The first model trained to a blurry, tinted frame and lost to doing nothing; this one starts
    # at the source and must improve on it within a few steps, on the head as on the whole frame.
    torch.manual_seed(0)
    clips, lms, masks = evaluate.held_out_clips(1, 6, 64, "cpu", seed=11)
    model = MotionModel(SMOKE_CONFIG)
    train.train(model, _FixedClip(clips), steps=40, lr=1e-3, bf16=False)
    q = evaluate.quality(model, clips, lms, masks, bf16=False)
    assert q["model"]["l1"] < 0.9 * q["source"]["l1"], q
    assert q["model"]["l1_head"] < 0.9 * q["source"]["l1_head"], q
    assert q["model"]["l1"] < q["affine_oracle"]["l1"], q


def test_quality_scores_a_given_drive_and_the_oracle_drive_beats_the_source():
    """`quality(drive=...)` scores the drive's outputs: an identity flow scores exactly as the
    unwarped source, and the affine warp fitted to the true landmarks (handed in as a flow) scores
    its AKD; pairs are handed over in order, by their first index."""
    images, landmarks, masks = evaluate.held_out_clips(2, 3, 64, "cpu")
    model = MotionModel(SMOKE_CONFIG).eval()
    n, t = landmarks.shape[:2]
    firsts: list[int] = []

    def identity(model, source, driving, first):
        firsts.append(first)
        b, _, h, w = source.shape
        return {"prediction": source, "flow": warp.make_grid(h, w)[None].expand(b, h, w, 2)}

    q = evaluate.quality(model, images, landmarks, masks, bf16=False, chunk=4, drive=identity)
    assert firsts == list(range(0, n * t, 4))
    for key in ("l1", "l1_head", "akd_px"):
        assert q["model"][key] == pytest.approx(q["source"][key], rel=1e-5)
    lm_src = landmarks[:, :1].expand(n, t, -1, -1).reshape(n * t, -1, 2)
    lm_drv = landmarks.reshape(n * t, -1, 2)
    fit = renderer.FIT_LANDMARKS

    def oracle(model, source, driving, first):
        b, _, h, w = source.shape
        grid = warp.affine_grid_from_points(
            lm_src[first : first + b, :fit], lm_drv[first : first + b, :fit], h, w
        )
        return {"prediction": warp.warp(source, grid, padding="border"), "flow": grid}

    q = evaluate.quality(model, images, landmarks, masks, bf16=False, chunk=4, drive=oracle)
    assert q["model"]["akd_px"] == pytest.approx(q["affine_oracle"]["akd_px"], rel=1e-4)
    assert q["model"]["akd_px"] < 0.5 * q["source"]["akd_px"]


def test_train_uses_the_given_losses_and_weights():
    """`train(losses=..., weights=...)` calls the given loss on every step's batch and weights its
    terms: a term weighted 0 leaves every parameter where it was."""
    model = MotionModel(SMOKE_CONFIG)
    before = {k: v.clone() for k, v in model.state_dict().items() if v.dtype.is_floating_point}
    calls: list[tuple[int, ...]] = []

    def losses(model, source, driving, theta):
        calls.append(tuple(source.shape))
        out = model.animate(source, *model.kp(source), *model.kp(driving))["prediction"]
        return {"only": (out - driving).abs().mean()}, out

    pairs = train.RenderedPairs(64, 2, "cpu", seed=1)
    train.train(model, pairs, steps=3, bf16=False, losses=losses, weights={"only": 0.0})
    assert calls == [(2, 3, 64, 64)] * 3
    after = model.state_dict()
    changed = [k for k, v in before.items() if "running" not in k and not torch.equal(v, after[k])]
    assert not changed, changed


def test_near_pairs_move_less_and_the_perceptual_term_sees_structure():
    """`near` pairs keep the driving pose between the source's and a random one (their true
    landmarks move less than independent pairs'); the random-feature distance is zero for equal
    images and grows with a shift of the same picture."""
    moves = {}
    for near in (False, True):
        pairs = train.RenderedPairs(64, 16, "cpu", seed=5, near=near)
        pairs.next()
        assert pairs.landmarks is not None
        src, drv = pairs.landmarks
        moves[near] = float((drv - src).norm(dim=-1).mean())
    assert moves[True] < 0.6 * moves[False]
    feats = train.RandomFeatures()
    a, _ = _pair()
    assert float(feats.distance(a, a)) == 0.0
    shifted = [torch.roll(a, k, dims=3) for k in (1, 4)]
    d1, d4 = (float(feats.distance(s, a)) for s in shifted)
    assert 0 < d1 < d4
    terms, _ = train.compute_losses(MotionModel(SMOKE_CONFIG), a, a, torch.eye(2, 3)[None], feats)
    assert set(terms) == {"recon", "eq_value", "eq_jacobian", "perc"}


def test_the_separation_prior_is_one_for_coincident_keypoints_and_pushes_them_apart():
    """`separation` is 1 when every keypoint sits on the same spot, near 0 when they are far apart
    beside sigma, and its gradient moves two close keypoints away from each other."""
    same = torch.zeros(2, 4, 2)
    assert float(train.separation(same, 0.1)) == pytest.approx(1.0)
    spread = torch.tensor([[[-0.8, -0.8], [0.8, -0.8], [-0.8, 0.8], [0.8, 0.8]]])
    assert float(train.separation(spread, 0.1)) < 1e-6
    close = torch.tensor([[[-0.05, 0.0], [0.05, 0.0]]], requires_grad=True)
    train.separation(close, 0.1).backward()
    assert close.grad is not None
    assert close.grad[0, 0, 0] > 0 > close.grad[0, 1, 0]  # descent moves the left one left
    a, b = _pair()
    model = MotionModel(SMOKE_CONFIG)
    terms, _ = train.compute_losses(model, a, b, torch.eye(2, 3)[None], sep_sigma=train.SEP_SIGMA)
    assert set(terms) == {"recon", "eq_value", "eq_jacobian", "sep"}
    assert 0 < float(terms["sep"].detach()) <= 1


def test_the_deep_pyramid_reaches_8_px_at_every_size_and_adds_its_coarse_levels():
    """`pyramid_levels` keeps the 8 px level: 4 levels at 64 px (the old default), 6 at 256;
    the extra levels add exactly their own L1 to the reconstruction term."""
    assert [train.pyramid_levels(s) for s in (8, 64, 128, 256)] == [1, 4, 5, 6]
    a, b = _pair(256)
    four, six = train.pyramid_l1(a, b, 4), train.pyramid_l1(a, b, 6)
    coarse = sum(
        (model_downscale(a, s) - model_downscale(b, s)).abs().mean() for s in (1 / 16, 1 / 32)
    )
    assert float(six - four) == pytest.approx(float(coarse), rel=1e-5)


def test_recipes_name_their_terms_and_an_unknown_one_is_refused():
    a, b = _pair()
    model, theta = MotionModel(SMOKE_CONFIG), torch.eye(2, 3)[None]
    terms, _ = train.recipe_losses("deep_perc_near", 64, "cpu")(model, a, b, theta)
    assert set(terms) == {"recon", "eq_value", "eq_jacobian", "perc"}
    terms, _ = train.recipe_losses("deep", 64, "cpu")(model, a, b, theta)
    assert set(terms) == {"recon", "eq_value", "eq_jacobian"}
    assert train.recipe_near(train.DEFAULT_RECIPE) and not train.recipe_near("deep")
    with pytest.raises(ValueError, match="unknown recipe 'fancy'"):
        train.recipe_losses("fancy", 64, "cpu")


def test_the_perceptual_term_sees_frames_at_64_px_at_most(monkeypatch: pytest.MonkeyPatch):
    """At 256 px the random features compare the frames at 64, 32 and 16 px, as at 64 px training
    (on the full 256 px frame the term dominated the loss and the model never moved)."""
    feats = train.RandomFeatures()
    seen: list[int] = []
    forward = feats.forward
    monkeypatch.setattr(feats, "forward", lambda x: seen.append(x.shape[-1]) or forward(x))
    a, b = _pair(256)
    feats.distance(a, b)
    assert seen == [64, 64, 32, 32, 16, 16]
    seen.clear()
    a, b = _pair(32)
    feats.distance(a, b)
    assert seen == [32, 32, 16, 16, 8, 8]
