"""Training: rendered (or user video) frame pairs, reconstruction + equivariance losses, checkpoints.

The published method uses a pretrained VGG perceptual loss; no pretrained weights are available
offline, so reconstruction is an L1 loss on an image pyramid down to 8 px, with a perceptual term on
a frozen random network's features (the recipes: `RECIPES`, docs/demos-motion.md).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from zbench.demos.motion import renderer, warp
from zbench.demos.motion.model import MotionConfig, MotionModel, downscale

CHECKPOINT = "motion.pt"


@dataclass
class TrainStatus:
    """What a progress callback sees after each step; `sample` holds one source/driving/prediction."""

    step: int
    total: int | None
    elapsed: float
    losses: dict[str, float]
    sample: dict[str, torch.Tensor] = field(default_factory=dict)


class RenderedPairs:
    """Endless batches of (source, driving) frames of the same rendered head in two poses.

    With `near`, the driving pose lies 10-50 % of the way from the source's to another random
    pose, so the reconstruction loss sees smaller moves. `landmarks` keeps the last batch's true
    landmarks (source, driving), for diagnostics that are given them.
    """

    def __init__(
        self, size: int, batch: int, device: torch.device | str, seed: int = 0, near: bool = False
    ) -> None:
        self.size, self.batch, self.device = size, batch, torch.device(device)
        self.gen = torch.Generator().manual_seed(seed)
        self.near = near
        self.landmarks: tuple[torch.Tensor, torch.Tensor] | None = None

    def next(self) -> tuple[torch.Tensor, torch.Tensor]:
        n = self.batch
        ident = renderer.sample_identity(self.gen, n)
        both = {k: torch.cat([v, v]) for k, v in ident.items()}
        pa, pb = renderer.sample_pose(self.gen, n), renderer.sample_pose(self.gen, n)
        if self.near:
            t = torch.rand(n, generator=self.gen) * 0.4 + 0.1
            pb = {k: pa[k] + t * (pb[k] - pa[k]) for k in pa}
        pose = {k: torch.cat([pa[k], pb[k]]) for k in pa}
        heads = renderer.render(both, pose, self.size, self.device)
        self.landmarks = (heads.landmarks[:n], heads.landmarks[n:])
        return heads.images[:n], heads.images[n:]


class VideoPairs:
    """Batches of two frames of one clip from a folder of videos (layout in docs/demos-motion.md)."""

    def __init__(self, folder: Path, size: int, batch: int, device, seed: int = 0) -> None:
        from zbench.demos.motion import video

        self.clips = [c for c in video.load_folder(folder, size) if len(c) >= 2]
        if not self.clips:
            raise ValueError(f"no clip with two or more frames in {folder}")
        self.batch, self.device = batch, torch.device(device)
        self.gen = torch.Generator().manual_seed(seed)

    def next(self) -> tuple[torch.Tensor, torch.Tensor]:
        src, drv = [], []
        for _ in range(self.batch):
            clip = self.clips[int(torch.randint(len(self.clips), (1,), generator=self.gen))]
            i, j = torch.randint(len(clip), (2,), generator=self.gen).tolist()
            src.append(clip[i])
            drv.append(clip[j])
        return self._tensor(src), self._tensor(drv)

    def _tensor(self, frames: list[np.ndarray]) -> torch.Tensor:
        t = torch.from_numpy(np.stack(frames)).to(self.device)
        return t.permute(0, 3, 1, 2).float() / 255


def random_affine(b: int, device, sigma: float = 0.05, gen: torch.Generator | None = None):
    """Random near-identity affine maps (B, 2, 3) for the equivariance constraint."""
    noise = torch.randn(b, 2, 3, generator=gen) * sigma
    eye = torch.tensor([[1.0, 0, 0], [0, 1.0, 0]])
    return (eye + noise).to(device)


def pyramid_levels(size: int, coarsest: int = 8) -> int:
    """Levels of a halving pyramid from `size` pixels down to `coarsest` (4 at 64 px, 6 at 256)."""
    return max(1, int(math.log2(max(size, coarsest) / coarsest)) + 1)


def pyramid_l1(pred: torch.Tensor, target: torch.Tensor, levels: int = 4) -> torch.Tensor:
    """L1 summed over `levels` scales (full, 1/2, 1/4, ...). The coarse levels are what pull a warp
    that is many pixels off towards the head: at 64 px the four default levels reach 8 px, at
    256 px they stop at 32 px, where a head turned by 30 pixels is still out of reach of a local
    gradient; `pyramid_levels(size)` keeps the 8 px level at every size."""
    loss = pred.new_zeros(())
    for i in range(levels):
        s = 0.5**i
        loss = loss + (downscale(pred, s) - downscale(target, s)).abs().mean()
    return loss


class RandomFeatures(nn.Module):
    """A frozen VGG-like stack with seeded He-normal weights, for a perceptual loss term.

    The published model's perceptual loss uses ImageNet-trained VGG19 features, which cannot be
    downloaded here; features of a fixed random network still compare images by local structure
    at several receptive-field sizes instead of pixel by pixel.
    """

    def __init__(self, seed: int = 1234, finest: int = 64) -> None:
        super().__init__()
        # The finest scale compared, in pixels: frames larger than this are downscaled first, so
        # the term sees the same structure at every training size. At 64 x 64 it helped the
        # keypoints follow the head; at 256 x 256 on the full frame its 3x3 stacks saw only local
        # texture, dominated the loss and the model never left the source (docs/demos-motion.md).
        self.finest = finest
        g = torch.Generator().manual_seed(seed)
        self.blocks = nn.ModuleList()
        for a, b in itertools.pairwise([3, 32, 64, 128]):
            convs = [nn.Conv2d(a, b, 3, padding=1), nn.Conv2d(b, b, 3, padding=1)]
            for c in convs:
                with torch.no_grad():
                    fan_in = c.weight[0].numel()
                    c.weight.copy_(torch.randn(c.weight.shape, generator=g) * (2 / fan_in) ** 0.5)
                    nn.init.zeros_(c.bias)
            self.blocks.append(nn.Sequential(convs[0], nn.ReLU(), convs[1], nn.ReLU()))
        self.requires_grad_(False)

    def forward(self, x: torch.Tensor) -> list[torch.Tensor]:
        out, x = [], (x - 0.5) / 0.25
        for i, block in enumerate(self.blocks):
            x = block(F.avg_pool2d(x, 2) if i else x)
            out.append(x)
        return out

    def distance(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """Mean L1 between the features of `pred` and `target` with the frames at `finest`
        pixels (or their own size, if smaller), then 1/2 and 1/4 of that."""
        loss = pred.new_zeros((), dtype=torch.float32)
        top = min(1.0, self.finest / max(pred.shape[-2:]))
        for s in (top, top / 2, top / 4):
            a, b = self(downscale(pred.float(), s)), self(downscale(target.float(), s))
            loss = loss + sum((x - y).abs().mean() for x, y in zip(a, b, strict=True))
        return loss


def compute_losses(
    model: MotionModel,
    source: torch.Tensor,
    driving: torch.Tensor,
    theta: torch.Tensor,
    features: RandomFeatures | None = None,
    sep_sigma: float | None = None,
    levels: int = 4,
) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
    """Loss terms for one batch and the prediction. theta: (B, 2, 3) equivariance transforms;
    with `features`, a perceptual term `perc` too; with `sep_sigma`, a separation term `sep`;
    `levels`: the reconstruction pyramid's (`pyramid_levels`)."""
    h, w = driving.shape[2:]
    kp_s, j_s = model.kp(source)
    kp_d, j_d = model.kp(driving)
    out = model.animate(source, kp_s, j_s, kp_d, j_d)["prediction"]
    recon = pyramid_l1(out.float(), driving, levels)
    # Equivariance: detect on T(driving); mapping those keypoints through T must give kp_d back.
    grid = warp.make_grid(h, w, driving.device)
    tgrid = torch.einsum(
        "hwj,bij->bhwi", torch.cat([grid, torch.ones_like(grid[..., :1])], -1), theta
    )
    transformed = F.grid_sample(driving, tgrid, padding_mode="reflection", align_corners=True)
    kp_t, j_t = model.kp(transformed)
    kp_back = torch.einsum(
        "bkj,bij->bki", torch.cat([kp_t, torch.ones_like(kp_t[..., :1])], -1), theta
    )
    eq_value = (kp_d - kp_back).abs().mean()
    a = theta[:, None, :, :2]  # Jacobian of T
    eye = torch.eye(2, device=driving.device)
    eq_jac = (eye - warp.inv2x2(j_d) @ (a @ j_t)).abs().mean()
    terms = {"recon": recon, "eq_value": eq_value, "eq_jacobian": eq_jac}
    if features is not None:
        terms["perc"] = features.distance(out, driving)
    if sep_sigma is not None:
        terms["sep"] = 0.5 * (separation(kp_s, sep_sigma) + separation(kp_d, sep_sigma))
    return terms, out


def separation(kp: torch.Tensor, sigma: float) -> torch.Tensor:
    """Mean of exp(-|k_i - k_j|^2 / 2 sigma^2) over keypoint pairs i != j (kp: (B, K, 2)): the
    separation prior of Zhang et al. (CVPR 2018), which keeps unsupervised keypoints from drawing
    together; 0 when they are far apart, 1 when they coincide."""
    k = kp.shape[1]
    d2 = (kp[:, :, None, :].float() - kp[:, None, :, :].float()).pow(2).sum(-1)
    off = ~torch.eye(k, dtype=torch.bool, device=kp.device)
    return torch.exp(-d2 / (2 * sigma**2))[:, off].mean()


@dataclass(frozen=True)
class Recipe:
    """What a named training recipe turns on (`RECIPES`)."""

    near: bool  # near pose pairs (`RenderedPairs(near=True)`)
    perceptual: bool  # the random-feature perceptual term `perc` (weight `WEIGHTS["perc"]`)
    deep: bool  # the reconstruction pyramid down to 8 px at any size (`pyramid_levels`)


def recipe_losses(recipe: str, size: int, device: torch.device | str) -> LossFn:
    """The loss function of a named training recipe (`RECIPES`) at `size` pixels."""
    if recipe not in RECIPES:
        raise ValueError(f"unknown recipe {recipe!r}; choose from {', '.join(RECIPES)}")
    r = RECIPES[recipe]
    return functools.partial(
        compute_losses,
        features=RandomFeatures().to(device) if r.perceptual else None,
        levels=pyramid_levels(size) if r.deep else 4,
    )


def recipe_near(recipe: str) -> bool:
    """Whether a recipe trains on near pose pairs (`RenderedPairs(near=True)`)."""
    return RECIPES[recipe].near


LossFn = Callable[
    [MotionModel, torch.Tensor, torch.Tensor, torch.Tensor],
    tuple[dict[str, torch.Tensor], torch.Tensor],
]
# Training recipes (benchmarks/motion_ablation.py compares them; docs/demos-motion.md has the
# figures): base: pyramid L1 (4 levels) + equivariance; perc_near: near pose pairs and the
# random-feature perceptual term; deep: the pyramid down to 8 px at any size; deep_perc_near: both,
# the demo's default (on the H200 at 256 px its AKD is 0.40 of the estimated affine warp's; the
# others reach 0.86-1.15 in the same steps).
RECIPES = {
    "base": Recipe(near=False, perceptual=False, deep=False),
    "perc_near": Recipe(near=True, perceptual=True, deep=False),
    "deep": Recipe(near=False, perceptual=False, deep=True),
    "deep_perc_near": Recipe(near=True, perceptual=True, deep=True),
}
DEFAULT_RECIPE = "deep_perc_near"
WEIGHTS = {"recon": 10.0, "eq_value": 10.0, "eq_jacobian": 10.0, "perc": 10.0, "sep": 1.0}
SEP_SIGMA = 0.1  # in [-1, 1] image units: keypoints closer than about 0.2 push each other apart
LR = 1e-3  # with warm-up and cosine decay (lr_factor); 2e-4 barely moves in a few minutes


def make_optimizer(model: MotionModel, lr: float = LR) -> torch.optim.Optimizer:
    """Adam over all the motion model's parameters, with betas (0.5, 0.999)."""
    return torch.optim.Adam(model.parameters(), lr=lr, betas=(0.5, 0.999))


def lr_factor(done: float, warmup: float = 0.02, floor: float = 0.05) -> float:
    """Learning-rate multiplier for the fraction of the budget `done`: short linear warm-up, then a
    cosine down to `floor`, so a run of any length ends with small, settling steps."""
    if done < warmup:
        return (done + 1e-3) / (warmup + 1e-3)
    x = min(1.0, (done - warmup) / (1 - warmup))
    return floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * x))


def autocast(device: torch.device, bf16: bool):
    """A bf16 autocast context on CUDA when ``bf16`` is set, otherwise one that does nothing."""
    if bf16 and device.type == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def train(
    model: MotionModel,
    pairs: RenderedPairs | VideoPairs,
    *,
    steps: int | None = None,
    seconds: float | None = None,
    lr: float = LR,
    bf16: bool = True,
    optimizer: torch.optim.Optimizer | None = None,
    callback: Callable[[TrainStatus], None] | None = None,
    sample_every: int = 50,
    seed: int = 0,
    losses: LossFn | None = None,
    weights: dict[str, float] | None = None,
) -> tuple[torch.optim.Optimizer, list[dict[str, float]]]:
    """Train until `steps` or `seconds` run out (whichever comes first); returns the loss history.

    `losses` and `weights` replace `compute_losses` and `WEIGHTS` (benchmarks/motion_ablation.py
    tries other terms with them)."""
    if steps is None and seconds is None:
        raise ValueError("give steps or seconds")
    loss_fn, weight = losses or compute_losses, weights or WEIGHTS
    device = next(model.parameters()).device
    opt = optimizer or make_optimizer(model, lr)
    for group in opt.param_groups:
        group.setdefault("initial_lr", group["lr"])
    gen = torch.Generator().manual_seed(seed + 1)
    model.train()
    history: list[dict[str, float]] = []
    start = time.perf_counter()
    step = 0
    while True:
        elapsed = time.perf_counter() - start
        if (steps is not None and step >= steps) or (seconds is not None and elapsed >= seconds):
            break
        done = max(step / steps if steps else 0.0, elapsed / seconds if seconds else 0.0)
        for group in opt.param_groups:
            group["lr"] = group["initial_lr"] * lr_factor(done)
        source, driving = pairs.next()
        theta = random_affine(source.shape[0], device, gen=gen)
        with autocast(device, bf16):
            terms, pred = loss_fn(model, source, driving, theta)
        loss = sum(weight[k] * v for k, v in terms.items())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 10.0)
        opt.step()
        step += 1
        want_sample = callback is not None and (step % sample_every == 0 or step == 1)
        if callback is not None and (want_sample or step % 10 == 0):
            row = {k: float(v.detach()) for k, v in terms.items()} | {"total": float(loss.detach())}
            history.append({"step": step, **row})
            sample = {}
            if want_sample:
                sample = {"source": source[0], "driving": driving[0], "prediction": pred[0].float()}
            callback(TrainStatus(step, steps, time.perf_counter() - start, row, sample))
        elif callback is None and step % 10 == 0:
            history.append({"step": step, "total": float(loss.detach())})
    if not history or history[-1]["step"] != step:
        history.append({"step": step, "total": float(loss.detach()) if step else float("nan")})
    model.eval()
    return opt, history


def save(model: MotionModel, directory: Path, opt=None, step: int = 0) -> Path:
    """Write the config, weights, step (and optimizer state) as the checkpoint; return its path."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / CHECKPOINT
    state = {"config": model.cfg.to_dict(), "model": model.state_dict(), "step": step}
    if opt is not None:
        state["optimizer"] = opt.state_dict()
    torch.save(state, path)
    return path


def load(directory: Path, device="cpu") -> tuple[MotionModel, dict]:
    """Model (eval mode, on `device`) and the raw checkpoint dict (optimizer state, step)."""
    path = directory / CHECKPOINT if directory.is_dir() else directory
    from zbench.demos.checkpoint import BadInput, load

    state = load(path, device)
    if not isinstance(state, dict) or "config" not in state or "model" not in state:
        raise BadInput(f"{path}: not a motion checkpoint zbench wrote")
    model = MotionModel(MotionConfig(**state["config"])).to(device)
    model.load_state_dict(state["model"])
    return model.eval(), state
