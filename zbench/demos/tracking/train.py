"""Training the detector and the re-identification embedding on rendered scenes, with progress.

Each step renders fresh frames (scenes advanced a few frames between uses and replaced every
``REFRESH`` uses), so nothing is stored on disk and held-out frames come from unseen seeds.
Checkpoints are ``torch.save`` of state dicts, read back with ``torch.load(weights_only=True)``.
"""

from __future__ import annotations

import math
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from zbench.demos.tracking import detector as det
from zbench.demos.tracking.embedder import ReidNet, crop
from zbench.demos.tracking.scene import Scene, SceneConfig, random_palette

REFRESH = 30
HELD_OUT_SEED = 10_000_000
NUM_IDENTITIES = 1000


@dataclass
class TrainStatus:
    """What a progress callback sees after each step."""

    step: int
    total: int | None
    elapsed: float
    loss: float


Callback = Callable[[TrainStatus], None]


class SceneStream:
    """``batch`` scenes at ``width x height``, each advanced ``skip`` frames per draw."""

    def __init__(
        self,
        batch: int,
        width: int,
        height: int,
        device,
        seed: int,
        palette: np.ndarray | None = None,
        skip: int = 4,
    ) -> None:
        self.batch, self.w, self.h, self.device = batch, width, height, device
        self.seed, self.palette, self.skip = seed, palette, skip
        self.rng = np.random.default_rng(seed)
        self.scenes = [self._new() for _ in range(batch)]
        self.uses = 0

    def _new(self) -> Scene:
        cfg = SceneConfig(
            width=self.w,
            height=self.h,
            targets=int(self.rng.integers(5, 60)),
            seed=int(self.rng.integers(1 << 31)),
            noise=float(self.rng.uniform(1, 8)),
        )
        return Scene(cfg, self.device, self.palette)

    def draw(self):
        self.uses += 1
        if self.uses % REFRESH == 0:
            self.scenes = [self._new() for _ in range(self.batch)]
        out = []
        for s in self.scenes:
            for _ in range(self.skip):
                s._advance()
            out.append(s.render())
        return out


class Prefetch:
    """Draws the next batches in a thread while the device trains on this one.

    The training step waits on the device (releasing the GIL) while the renderer's NumPy and
    launch work runs here; ``depth`` batches are kept ready. ``close`` stops the thread.
    """

    def __init__(self, stream: SceneStream, depth: int = 2) -> None:
        self.stream = stream
        self.ready: queue.Queue = queue.Queue(maxsize=depth)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._fill, name="scene-prefetch", daemon=True)
        self.thread.start()

    def _fill(self) -> None:
        while not self.stop.is_set():
            try:
                item: Any = self.stream.draw()
            except BaseException as exc:  # handed to the training thread
                item = exc
            while not self.stop.is_set():
                try:
                    self.ready.put(item, timeout=0.1)
                    break
                except queue.Full:
                    continue
            if isinstance(item, BaseException):
                return

    def draw(self):
        item = self.ready.get()
        if isinstance(item, BaseException):
            raise item
        return item

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=5)


def _lr(base: float, step: int, frac: float, warmup: int = 100) -> float:
    return base * min(1.0, (step + 1) / warmup) * 0.5 * (1 + math.cos(math.pi * min(frac, 1.0)))


def _loop(
    step_fn: Callable[[float], float],
    steps: int | None,
    seconds: float | None,
    callback: Callback | None,
) -> list[float]:
    if steps is None and seconds is None:
        raise ValueError("give steps, seconds or both")
    t0, losses, step = time.monotonic(), [], 0
    while True:
        elapsed = time.monotonic() - t0
        if (steps is not None and step >= steps) or (seconds is not None and elapsed >= seconds):
            break
        frac = max(step / steps if steps else 0.0, elapsed / seconds if seconds else 0.0)
        losses.append(step_fn(frac))
        step += 1
        if callback:
            callback(TrainStatus(step, steps, time.monotonic() - t0, losses[-1]))
    return losses


def _fit(
    model: nn.Module,
    stream: Prefetch,
    opt: torch.optim.Optimizer,
    lr: float,
    loss_fn: Callable[[], torch.Tensor | None],
    steps: int | None,
    seconds: float | None,
    callback: Callback | None,
    clip: float | None = None,
) -> list[float]:
    """Train on ``loss_fn()`` (a batch's loss; None for a batch with nothing to learn from, which
    counts as a NaN loss and takes no optimizer step) under `_loop`'s budget and `_lr`'s schedule;
    then close the stream and leave the model in eval mode."""
    taken = 0  # optimizer steps: the schedule's clock

    def one(frac: float) -> float:
        nonlocal taken
        loss = loss_fn()
        if loss is None:
            return float("nan")
        for g in opt.param_groups:
            g["lr"] = _lr(lr, taken, frac)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if clip is not None:
            nn.utils.clip_grad_norm_(model.parameters(), clip)
        opt.step()
        taken += 1
        return float(loss.detach())

    try:
        out = _loop(one, steps, seconds, callback)
    finally:
        stream.close()
    model.eval()
    return out


def train_detector(
    model: nn.Module,
    *,
    steps: int | None = None,
    seconds: float | None = None,
    batch: int = 8,
    size: tuple[int, int] = (960, 540),
    bf16: bool = True,
    lr: float = 1e-3,
    seed: int = 0,
    callback: Callback | None = None,
) -> list[float]:
    """Faster R-CNN losses on rendered frames; figures under 20 % visible are not targets."""
    device = next(model.parameters()).device
    det.set_bf16(model, bf16 and device.type == "cuda")
    model.train()
    stream = Prefetch(SceneStream(batch, size[0], size[1], device, seed))
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)

    def loss_fn() -> torch.Tensor:
        images, targets = [], []
        for img, truth in stream.draw():
            keep = truth.visibility >= 0.2
            box = torch.as_tensor(truth.tlwh[keep], dtype=torch.float32)
            box[:, 2:] += box[:, :2]
            images.append(img.float().div_(255))
            targets.append(
                {
                    "boxes": box.to(device),
                    "labels": torch.ones(len(box), dtype=torch.int64, device=device),
                }
            )
        return sum(model(images, targets).values())

    return _fit(model, stream, opt, lr, loss_fn, steps, seconds, callback, clip=10.0)


def _jitter(tlwh: np.ndarray, rng: np.random.Generator, amount: float = 0.08) -> np.ndarray:
    """Shift and scale boxes a little, as a detector's boxes would be."""
    out = tlwh.copy()
    out[:, :2] += rng.normal(0, amount, (len(out), 2)) * out[:, 2:]
    out[:, 2:] *= np.exp(rng.normal(0, amount, (len(out), 2)))
    return out


def train_embedder(
    model: ReidNet,
    *,
    steps: int | None = None,
    seconds: float | None = None,
    batch: int = 6,
    size: tuple[int, int] = (960, 540),
    bf16: bool = True,
    lr: float = 2e-3,
    seed: int = 0,
    callback: Callback | None = None,
) -> list[float]:
    """Identity classification over `NUM_IDENTITIES` clothing sets seen in rendered scenes."""
    device = next(model.parameters()).device
    assert model.classifier is not None, "build ReidNet(num_classes=...) to train it"
    model.train()
    palette = random_palette(model.classifier.out_features, seed)
    stream = Prefetch(SceneStream(batch, size[0], size[1], device, seed + 1, palette=palette))
    rng = np.random.default_rng(seed + 2)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=5e-4)
    use_bf16 = bf16 and device.type == "cuda"

    def loss_fn() -> torch.Tensor | None:
        crops, labels = [], []
        for img, truth in stream.draw():
            keep = truth.visibility >= 0.5
            if not keep.any():
                continue
            box = torch.as_tensor(_jitter(truth.tlwh[keep], rng), dtype=torch.float32)
            box[:, 2:] += box[:, :2]
            crops.append(crop(img, box.to(device)))
            labels.append(torch.as_tensor(truth.identity[keep], device=device))
        if not crops:
            return None
        x, y = torch.cat(crops), torch.cat(labels)
        if torch.rand(()) < 0.5:
            x = x.flip(3)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=use_bf16):
            logits = model.classify(x)
        return F.cross_entropy(logits.float(), y, label_smoothing=0.1)

    return _fit(model, stream, opt, lr, loss_fn, steps, seconds, callback)


def held_out(n: int, size: tuple[int, int], device, targets: int = 40):
    """Frames from seeds never used in training: ``[(image, FrameTruth)]``."""
    out = []
    for i in range(n):
        cfg = SceneConfig(width=size[0], height=size[1], targets=targets, seed=HELD_OUT_SEED + i)
        scene = Scene(cfg, device)
        for _ in range(10):
            scene._advance()
        out.append(scene.render())
    return out


def detector_ap(model: nn.Module, frames, bf16: bool = True, min_vis: float = 0.3) -> float:
    """AP@0.5 on held-out frames; figures under `min_vis` visible are ignored (neither way)."""
    d = det.Detector(model, bf16)
    dets, gts = [], []
    for img, truth in frames:
        boxes, scores = d(img)
        dets.append((det.tlbr_to_tlwh(boxes.float().cpu().numpy()), scores.float().cpu().numpy()))
        gts.append((truth.tlwh, truth.visibility < min_vis))
    return det.average_precision(dets, gts, 0.5)


def save(path: Path, model: nn.Module, **meta) -> Path:
    """Save a model's weights and ``meta`` with torch.save, creating the folder; return the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"model": model.state_dict(), **meta}, path)
    return path


def load_state(path: Path, device) -> dict:
    """A checkpoint saved by `save`, or a bare state dict (users' own weights)."""
    from zbench.demos.checkpoint import BadInput, load

    state = load(Path(path), device)
    if not isinstance(state, dict):
        raise BadInput(f"{path}: not a state dict")
    return state if "model" in state else {"model": state}
