"""What a tracking run tracks: a generated sequence, a MOT folder, a video file, a webcam or a Deep
SORT .npy detection file, as frames with their rate, name and count."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch

from zbench.contract.demos import TRACKING_GENERATED_FRAMES
from zbench.demos.tracking import mot_io, pipeline
from zbench.demos.tracking.scene import SceneConfig

if TYPE_CHECKING:
    from zbench.demos.tracking.demo import TrackingOptions

# A generated sequence is rendered before tracking (as the benchmark does: the renderer is not the
# tracker) when its frames take no more than this; a longer one is rendered inside the timed loop.
PRERENDER_BYTES = 4 << 30


@dataclass
class Source:
    """The frames to track, their rate, a name for the sequence and how many (None: unknown);
    ``render_s``: seconds spent rendering them beforehand (a generated sequence that fits)."""

    frames: Iterable[pipeline.Frame]
    fps: float
    name: str
    total: int | None
    render_s: float | None = None


def _cap(n: int | None, limit: int | None) -> int | None:
    return n if limit is None else limit if n is None else min(n, limit)


def source(o: TrackingOptions, device: torch.device, emit: Callable[..., None]) -> Source:
    """The frames ``o.input`` names, made on ``device``; a generated sequence that fits in
    PRERENDER_BYTES is rendered first, and the ``render`` phase says so."""
    gt = Path(o.gt) if o.gt else None
    if o.input == "generated":
        cfg = SceneConfig(
            o.width, o.height, o.targets, o.frames or TRACKING_GENERATED_FRAMES, o.seed
        )
        name = f"generated-{o.seed}"
        if cfg.frames * 3 * cfg.width * cfg.height > PRERENDER_BYTES:
            return Source(pipeline.generated(cfg, device), cfg.fps, name, cfg.frames)
        emit("phase", phase="render", detail=f"{cfg.frames} frames, before tracking")
        t0 = time.perf_counter()
        rendered = list(pipeline.generated(cfg, device))
        return Source(rendered, cfg.fps, name, cfg.frames, round(time.perf_counter() - t0, 2))
    if o.input.startswith("webcam:"):
        cam = int(o.input.split(":", 1)[1])
        return Source(pipeline.video(cam, device, o.frames, gt), 30.0, "webcam", o.frames)
    path = Path(o.input)
    if not path.exists():
        raise FileNotFoundError(f"no such input: {o.input}")
    if path.is_dir():
        info = mot_io.read_seqinfo(path)
        frames = pipeline.mot_folder(path, device, o.frames, o.detector == "public", gt)
        total = _cap(len(mot_io.MotFolder(path)), o.frames)
        return Source(frames, info.frame_rate, info.name, total)
    if path.suffix == ".npy":
        last = int(np.load(path, mmap_mode="r")[:, 0].max(initial=0))
        if gt is not None:
            last = max(last, int(mot_io.read_gt(gt)[:, 0].max(initial=0)))
        frames = pipeline.deepsort_npy(path, gt, o.frames)
        return Source(frames, 25.0, path.stem, _cap(last, o.frames))
    from zbench.demos.video import video_length

    total = _cap(video_length(path), o.frames)
    return Source(pipeline.video(str(path), device, o.frames, gt), 25.0, path.stem, total)
