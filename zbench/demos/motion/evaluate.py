"""Quality on held-out rendered clips (vs the unwarped source and global affine warps) and speed."""

from __future__ import annotations

import time
from collections.abc import Callable

import torch

from zbench.demos.motion import renderer, warp
from zbench.demos.motion.infer import Animator, animate
from zbench.demos.motion.model import MotionModel

Drive = Callable[[MotionModel, torch.Tensor, torch.Tensor, int], dict[str, torch.Tensor]]
HELD_OUT_SEED = (
    1_000_003  # training seeds count up from 0; these identities and clips are never seen
)


def held_out_clips(clips: int, frames: int, size: int, device, seed: int = HELD_OUT_SEED):
    """(clips, frames, 3, H, W) images, (clips, frames, L, 2) landmarks, (clips, frames, 1, H, W) masks."""
    g = torch.Generator().manual_seed(seed)
    ident = renderer.sample_identity(g, clips)
    poses = renderer.random_clip_poses(g, clips, frames)
    imgs, lms, masks = [], [], []
    for t in range(frames):
        heads = renderer.render(ident, {k: v[:, t] for k, v in poses.items()}, size, device)
        imgs.append(heads.images)
        lms.append(heads.landmarks)
        masks.append(heads.masks)
    return torch.stack(imgs, 1), torch.stack(lms, 1), torch.stack(masks, 1)


@torch.no_grad()
def quality(
    model: MotionModel,
    images: torch.Tensor,
    landmarks: torch.Tensor,
    masks: torch.Tensor,
    bf16: bool = True,
    chunk: int = 64,
    drive: Drive | None = None,
) -> dict[str, dict[str, float]]:
    """Rebuild each clip from its first frame; L1 (0-1 scale), head-region L1 and landmark distance.

    - `l1`: whole frame. `l1_head`: only where the head is in the source or the driving frame (the
      renderer's coverage), so a static background cannot hide a poor head.
    - Methods: `source` (the unwarped source), `affine` (a global affine warp estimated from the
      two frames alone, `warp.estimate_affine`: the simple baseline any method could use),
      `affine_oracle` (a global affine warp fitted to the true landmarks of both frames: privileged,
      a floor for AKD rather than a rival) and `model`.
    - `akd_px`: the renderer's true landmarks of the source, carried to the output by the method's
      own backward warp (`warp.transport_points`), against the driving frame's true landmarks, in
      pixels. It uses no detector the model trained, so it cannot flatter the model; it measures
      the geometry of the warp (the part of the output the residual paints is not tracked).
    - `drive(model, source, driving, first)`: the model's outputs for a chunk of pairs starting at
      pair `first` (default: `infer.animate`, keypoints from the model's own detector).
    """
    model.eval()
    n, t, _, h, w = images.shape
    src = images[:, :1].expand(n, t, 3, h, w).reshape(n * t, 3, h, w)
    drv = images.reshape(n * t, 3, h, w)
    lm_src = landmarks[:, :1].expand(n, t, -1, -1).reshape(n * t, -1, 2)
    lm_drv = landmarks.reshape(n * t, -1, 2)
    head = torch.maximum(
        masks[:, :1].expand(n, t, 1, h, w).reshape(n * t, 1, h, w), masks.reshape(n * t, 1, h, w)
    )
    fit = renderer.FIT_LANDMARKS
    estimated = torch.cat(
        [
            warp.estimate_affine(src[i : i + chunk], drv[i : i + chunk])
            for i in range(0, n * t, chunk)
        ]
    )
    grids = {
        "source": warp.make_grid(h, w, images.device)[None].expand(n * t, h, w, 2),
        "affine": warp.affine_grid(estimated, h, w),
        "affine_oracle": warp.affine_grid_from_points(lm_src[:, :fit], lm_drv[:, :fit], h, w),
    }
    outputs = {k: warp.warp(src, g, padding="border") for k, g in grids.items()}
    preds, flows = [], []
    for i in range(0, n * t, chunk):
        if drive is None:
            r = animate(model, src[i : i + chunk], drv[i : i + chunk], bf16)
        else:
            r = drive(model, src[i : i + chunk], drv[i : i + chunk], i)
        preds.append(r["prediction"].float())
        flows.append(r["flow"].float())
    outputs["model"], grids["model"] = torch.cat(preds), torch.cat(flows)
    px = (w - 1) / 2
    result = {}
    for name, out in outputs.items():
        err = (out.float().clamp(0, 1) - drv).abs().mean(1, keepdim=True)
        moved = torch.cat(
            [
                warp.transport_points(grids[name][i : i + chunk], lm_src[i : i + chunk], w)
                for i in range(0, n * t, chunk)
            ]
        )
        result[name] = {
            "l1": float(err.mean()),
            "l1_head": float((err * head).sum() / head.sum().clamp(min=1)),
            "akd_px": float((moved - lm_drv).norm(dim=-1).mean() * px),
        }
    return result


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def measure_fps(
    model: MotionModel,
    size: int,
    *,
    batch: int = 1,
    frames: int = 200,
    warmup: int = 20,
    bf16: bool = True,
    compile: bool = False,
) -> dict[str, float]:
    """Driving uint8 frames on the device -> output uint8 frames on the device, frames per second.

    Each call takes `batch` driving frames; the window is synchronised at its edges. Compile time
    (first calls) is reported apart from the measured window.
    """
    device = next(model.parameters()).device
    g = torch.Generator().manual_seed(7)
    ident = renderer.sample_identity(g, 2)
    poses = renderer.scripted_poses(batch * 4)
    first = {k: v[:1] for k, v in ident.items()}
    source = renderer.render(first, renderer.neutral_pose(1), size, device).images
    drv_ident = {k: v[1:].expand(batch * 4) for k, v in ident.items()}
    driving = renderer.render(drv_ident, poses, size, device).images
    to8 = lambda x: (x * 255).round().to(torch.uint8).permute(0, 2, 3, 1).contiguous()  # noqa: E731
    src8, drv8 = to8(source)[0], to8(driving)
    anim = Animator(model, bf16=bf16, compile=compile)
    anim.set_source(src8)
    batches = [drv8[i * batch : (i + 1) * batch] for i in range(4)]
    t0 = time.perf_counter()
    for i in range(warmup):
        anim(batches[i % 4])
    _sync(device)
    warm_s = time.perf_counter() - t0
    calls = max(1, frames // batch)
    t0 = time.perf_counter()
    for i in range(calls):
        anim(batches[i % 4])
    _sync(device)
    dt = time.perf_counter() - t0
    return {
        "fps": calls * batch / dt,
        "batch": batch,
        "ms_per_call": dt / calls * 1000,
        "warmup_s": warm_s,
    }
