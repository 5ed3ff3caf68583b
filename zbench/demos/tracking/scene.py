"""Procedural pedestrian scenes: walking figures, depth-ordered occlusion, exact ground truth.

Figures differ in clothing colours, skin and hair, and size (taller nearer the camera); they enter
at the left or right edge, cross each other and leave. Nearer figures (feet lower in the frame) are
drawn over farther ones, and each figure's visibility is the fraction of its silhouette that is
neither hidden nor outside the frame, counted on a quarter-resolution ownership map. Motion, sizes
and colours come from a NumPy generator (deterministic for a seed); drawing is a handful of
rectangle fills per figure on a torch tensor, on any device, so 1080p frames render on the GPU
faster than a detector consumes them. Camera noise (Gaussian, per-frame gain) uses a torch
generator on the drawing device.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import torch

#: Body parts as fractions of the figure box (x0, y0, x1, y1) and the colour slot they take:
#: 0 hair, 1 skin, 2 shirt, 3 trousers, 4 shoes. Legs (rows 5-6) swing with the walking phase.
PARTS = np.array(
    [
        [0.33, 0.00, 0.67, 0.05, 0],  # hair
        [0.35, 0.04, 0.65, 0.16, 1],  # face
        [0.15, 0.16, 0.85, 0.56, 2],  # torso
        [0.02, 0.18, 0.15, 0.50, 2],  # left arm
        [0.85, 0.18, 0.98, 0.50, 2],  # right arm
        [0.18, 0.56, 0.48, 0.95, 3],  # left leg
        [0.52, 0.56, 0.82, 0.95, 3],  # right leg
        [0.16, 0.94, 0.48, 1.00, 4],  # left shoe
        [0.52, 0.94, 0.84, 1.00, 4],  # right shoe
    ]
)
ASPECT = 0.38  # figure width / height
SKIN = np.array([[255, 219, 172], [241, 194, 125], [198, 134, 66], [141, 85, 36], [92, 58, 33]])


@dataclass(frozen=True)
class SceneConfig:
    """A sequence's size, crowd and noise; `targets` is the crowd size kept on screen."""

    width: int = 1920
    height: int = 1080
    targets: int = 50
    frames: int = 300
    seed: int = 0
    noise: float = 4.0  # Gaussian camera noise, standard deviation in 8-bit levels
    fps: int = 25

    def scaled(self, width: int, height: int) -> SceneConfig:
        return replace(self, width=width, height=height)


@dataclass(frozen=True)
class FrameTruth:
    """Ground truth of one frame: ids ``[N]``, boxes ``[N, 4]`` tlwh (pixels), visibility ``[N]``."""

    ids: np.ndarray
    tlwh: np.ndarray
    visibility: np.ndarray
    identity: np.ndarray | None = None  # palette index, when the scene draws from a palette


class Scene:
    """``next()`` gives ``(image uint8 [3, H, W] on device, FrameTruth)`` for successive frames."""

    def __init__(
        self,
        cfg: SceneConfig,
        device: str | torch.device = "cpu",
        palette: np.ndarray | None = None,
    ) -> None:
        self.cfg = cfg
        self.palette = palette  # [K, 5, 3] identities to draw clothes from (re-id training)
        self.device = torch.device(device)
        self.rng = np.random.default_rng(cfg.seed)
        self.gen = torch.Generator(device=self.device).manual_seed(cfg.seed)
        self.k = cfg.height / 1080.0
        n = 0
        self.ids = np.zeros(n, np.int64)
        self.x = np.zeros(n)  # centre x
        self.foot = np.zeros(n)  # feet y
        self.scale = np.zeros(n)  # per-figure size factor
        self.vx = np.zeros(n)
        self.vy = np.zeros(n)
        self.phase = np.zeros(n)
        self.colours = np.zeros((n, 5, 3), np.uint8)
        self.identity = np.zeros(n, np.int64)
        self._next_id = 1
        self.frame = 0
        self.background = self._background()
        self._spawn(cfg.targets, anywhere=True)

    # -- simulation -------------------------------------------------------------------------
    def heights(self) -> np.ndarray:
        """Nearer (lower) figures are taller: perspective on a flat ground."""
        depth = np.clip(self.foot / self.cfg.height, 0.3, 1.1)
        return self.k * 240 * depth * self.scale

    def _spawn(self, n: int, anywhere: bool = False) -> None:
        if n <= 0:
            return
        r, c = self.rng, self.cfg
        foot = r.uniform(0.42, 1.02, n) * c.height
        scale = r.uniform(0.75, 1.25, n)
        h = self.k * 240 * np.clip(foot / c.height, 0.3, 1.1) * scale
        speed = r.uniform(0.8, 5.0, n) * self.k * np.clip(foot / c.height, 0.3, 1.1)
        right = r.random(n) < 0.5
        if anywhere:
            x = r.uniform(0, c.width, n)
        else:
            x = np.where(right, -h * ASPECT / 2, c.width + h * ASPECT / 2)
        colours = np.zeros((n, 5, 3), np.uint8)
        colours[:, 0] = r.integers(10, 90, (n, 3))  # hair
        colours[:, 1] = SKIN[r.integers(0, len(SKIN), n)]
        colours[:, 2] = r.integers(0, 256, (n, 3))  # shirt
        colours[:, 3] = r.integers(0, 200, (n, 3))  # trousers
        colours[:, 4] = r.integers(0, 60, (n, 3))  # shoes
        identity = np.full(n, -1)
        if self.palette is not None:
            identity = r.integers(0, len(self.palette), n)
            colours = self.palette[identity]
        self.identity = np.concatenate([self.identity, identity])
        self.ids = np.concatenate([self.ids, np.arange(self._next_id, self._next_id + n)])
        self._next_id += n
        self.x = np.concatenate([self.x, x])
        self.foot = np.concatenate([self.foot, foot])
        self.scale = np.concatenate([self.scale, scale])
        self.vx = np.concatenate([self.vx, np.where(right, speed, -speed)])
        self.vy = np.concatenate([self.vy, r.normal(0, 0.3 * self.k, n)])
        self.phase = np.concatenate([self.phase, r.uniform(0, 2 * np.pi, n)])
        self.colours = np.concatenate([self.colours, colours])

    def _advance(self) -> None:
        c = self.cfg
        self.x += self.vx
        self.foot = np.clip(self.foot + self.vy, 0.42 * c.height, 1.02 * c.height)
        self.vy += self.rng.normal(0, 0.05 * self.k, len(self.vy))
        self.phase += np.abs(self.vx) / np.maximum(self.heights(), 1) * 6
        w = self.heights() * ASPECT
        inside = (self.x + w / 2 > 0) & (self.x - w / 2 < c.width)
        for name in ("ids", "x", "foot", "scale", "vx", "vy", "phase", "colours", "identity"):
            setattr(self, name, getattr(self, name)[inside])
        self._spawn(min(c.targets - len(self.ids), max(1, c.targets // 20)))

    # -- geometry -----------------------------------------------------------------------------
    def boxes(self) -> np.ndarray:
        """Every figure's full box ``[N, 4]`` tlwh, parts outside the frame included."""
        h = self.heights()
        w = h * ASPECT
        return np.stack([self.x - w / 2, self.foot - h, w, h], axis=1)

    def part_rects(self) -> np.ndarray:
        """``[N, P, 4]`` part rectangles x0, y0, x1, y1 in pixels (legs swung by the phase)."""
        box = self.boxes()
        frac = np.broadcast_to(PARTS[None, :, :4], (len(box), len(PARTS), 4)).copy()
        swing = 0.07 * np.sin(self.phase)[:, None]
        frac[:, [5, 7], 0::2] += swing[:, :, None]
        frac[:, [6, 8], 0::2] -= swing[:, :, None]
        x = box[:, None, 0:1] + frac[..., 0::2] * box[:, None, 2:3]
        y = box[:, None, 1:2] + frac[..., 1::2] * box[:, None, 3:4]
        return np.stack([x[..., 0], y[..., 0], x[..., 1], y[..., 1]], axis=-1)

    def order(self) -> np.ndarray:
        """Drawing order, far to near (painter's algorithm)."""
        return np.argsort(self.foot, kind="stable")

    def visibility(self, rects: np.ndarray, order: np.ndarray, sub: int = 4) -> np.ndarray:
        """Visible fraction of each silhouette, from a ``1/sub`` resolution ownership map."""
        c = self.cfg
        hh, ww = -(-c.height // sub), -(-c.width // sub)
        owner = np.full((hh, ww), -1, np.int64)
        total = np.zeros(len(rects))
        for i in order:
            r = np.round(rects[i] / sub).astype(np.int64)
            x0, y0 = r[:, 0].min(), r[:, 1].min()
            local = np.zeros((max(r[:, 3].max() - y0, 1), max(r[:, 2].max() - x0, 1)), bool)
            for a, b, e, d in r:
                local[b - y0 : d - y0, a - x0 : e - x0] = True
            total[i] = local.sum()
            ys, xs = np.nonzero(local)
            ys, xs = ys + y0, xs + x0
            ok = (ys >= 0) & (ys < hh) & (xs >= 0) & (xs < ww)
            owner[ys[ok], xs[ok]] = i
        seen = np.bincount(owner[owner >= 0], minlength=len(rects))[: len(rects)]
        return np.where(total > 0, seen / np.maximum(total, 1), 0.0)

    # -- drawing ------------------------------------------------------------------------------
    def _background(self) -> torch.Tensor:
        c, r = self.cfg, self.rng
        img = torch.empty(3, c.height, c.width, dtype=torch.float32)
        horizon = int(0.35 * c.height)
        t = torch.linspace(0, 1, horizon)[None, :, None]
        sky_top, sky_low = torch.tensor(r.uniform(60, 200, 3)), torch.tensor(r.uniform(150, 250, 3))
        img[:, :horizon] = sky_top[:, None, None] * (1 - t) + sky_low[:, None, None] * t
        for _ in range(r.integers(4, 10)):  # buildings on the horizon
            x0 = int(r.uniform(0, c.width))
            bw, bh = int(r.uniform(0.05, 0.2) * c.width), int(r.uniform(0.1, 0.3) * c.height)
            img[:, max(horizon - bh, 0) : horizon, x0 : x0 + bw] = torch.tensor(
                r.uniform(40, 180, 3), dtype=torch.float32
            )[:, None, None]
        ground = torch.tensor(r.uniform(70, 160, 3), dtype=torch.float32)
        img[:, horizon:] = ground[:, None, None]
        for _ in range(r.integers(3, 8)):  # paving stripes and patches
            y0 = int(r.uniform(horizon, c.height))
            img[:, y0 : y0 + int(r.uniform(4, 30) * self.k)] *= float(r.uniform(0.8, 1.15))
        return img.clamp(0, 255).to(self.device)

    def draw(self, rects: np.ndarray, order: np.ndarray) -> torch.Tensor:
        c = self.cfg
        img = self.background.clone()
        colours = torch.from_numpy(self.colours.astype(np.float32)).to(self.device)
        ri = np.round(rects).astype(np.int64)
        ri[..., 0::2] = np.clip(ri[..., 0::2], 0, c.width)
        ri[..., 1::2] = np.clip(ri[..., 1::2], 0, c.height)
        slots = PARTS[:, 4].astype(np.int64)
        for i in order:
            for p, (x0, y0, x1, y1) in enumerate(ri[i]):
                if x1 > x0 and y1 > y0:
                    img[:, y0:y1, x0:x1] = colours[i, slots[p], :, None, None]
        if c.noise > 0:
            gain = 1.0 + 0.03 * torch.randn(1, generator=self.gen, device=self.device)
            noise = torch.randn(img.shape, generator=self.gen, device=self.device) * c.noise
            img = img * gain + noise
        return img.clamp_(0, 255).to(torch.uint8)

    def render(self) -> tuple[torch.Tensor, FrameTruth]:
        """The current frame and its truth (boxes clipped to the frame)."""
        rects, order = self.part_rects(), self.order()
        return self.draw(rects, order), self.truth(rects, order)

    def truth(self, rects: np.ndarray | None = None, order: np.ndarray | None = None) -> FrameTruth:
        """The current frame's truth without drawing it."""
        rects = self.part_rects() if rects is None else rects
        order = self.order() if order is None else order
        vis = self.visibility(rects, order)
        box = self.boxes()
        x0 = np.clip(box[:, 0], 0, self.cfg.width)
        y0 = np.clip(box[:, 1], 0, self.cfg.height)
        x1 = np.clip(box[:, 0] + box[:, 2], 0, self.cfg.width)
        y1 = np.clip(box[:, 1] + box[:, 3], 0, self.cfg.height)
        tlwh = np.stack([x0, y0, x1 - x0, y1 - y0], axis=1)
        keep = (tlwh[:, 2] > 1) & (tlwh[:, 3] > 1)
        return FrameTruth(self.ids[keep].copy(), tlwh[keep], vis[keep], self.identity[keep].copy())

    def __iter__(self) -> Iterator[tuple[torch.Tensor, FrameTruth]]:
        for _ in range(self.cfg.frames):
            if self.frame:
                self._advance()
            self.frame += 1
            yield self.render()

    def next(self, draw: bool = True) -> tuple[torch.Tensor | None, FrameTruth]:
        """The next frame (the first call gives the first frame); ``draw=False``: truth only."""
        if self.frame:
            self._advance()
        self.frame += 1
        return self.render() if draw else (None, self.truth())


def random_palette(n: int, seed: int) -> np.ndarray:
    """``[n, 5, 3]`` clothing sets (hair, skin, shirt, trousers, shoes) for identity training."""
    r = np.random.default_rng(seed)
    pal = np.zeros((n, 5, 3), np.uint8)
    pal[:, 0] = r.integers(10, 90, (n, 3))
    pal[:, 1] = SKIN[r.integers(0, len(SKIN), n)]
    pal[:, 2] = r.integers(0, 256, (n, 3))
    pal[:, 3] = r.integers(0, 200, (n, 3))
    pal[:, 4] = r.integers(0, 60, (n, 3))
    return pal


def to_hwc(image: torch.Tensor) -> np.ndarray:
    """``[3, H, W]`` uint8 tensor -> ``[H, W, 3]`` uint8 NumPy (RGB)."""
    return image.permute(1, 2, 0).contiguous().cpu().numpy()


def to_unit(frames: torch.Tensor) -> torch.Tensor:
    """uint8 frames (``[3, H, W]`` or ``[B, 3, H, W]``) as float32 in [0, 1], as the models take."""
    return frames.float().div_(255)


def write_sequence(folder: Path, cfg: SceneConfig, name: str | None = None) -> Path:
    """Render a sequence to a MOTChallenge folder: img1/*.jpg, gt/gt.txt, seqinfo.ini."""
    from zbench.demos.tracking import mot_io

    folder = Path(folder)
    rows = []
    images = []
    for t, (img, truth) in enumerate(Scene(cfg), start=1):
        images.append(to_hwc(img))
        rows += mot_io.truth_rows(t, truth)
    mot_io.write_mot_folder(folder, images, np.array(rows).reshape(-1, 9), cfg.fps, name)
    return folder
