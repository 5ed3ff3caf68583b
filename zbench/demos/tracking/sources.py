"""What a tracking run tracks: a generated sequence, a MOT folder, a video file, a webcam or a Deep
SORT .npy detection file, as `Frame`s with their rate, name and count.

A `Frame` carries an image (uint8 ``[3, H, W]`` tensor on the device, or None when detections come
from a file), the ground truth rows when known, and precomputed detections (public det.txt, Deep
SORT .npy files) when given."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch

from zbench.contract.demos import TRACKING_GENERATED_FRAMES
from zbench.demos.tracking import mot_io
from zbench.demos.tracking.scene import FrameTruth, Scene, SceneConfig

if TYPE_CHECKING:
    from zbench.demos.tracking.demo import TrackingOptions


@dataclass
class Frame:
    """One frame: index from 1, image or None, gt rows ``[M, 9]`` or None, given detections."""

    index: int
    image: torch.Tensor | None
    gt: np.ndarray | None = None
    truth: FrameTruth | None = None
    detections: tuple[np.ndarray, np.ndarray, np.ndarray | None] | None = None  # tlwh, conf, feat


def generated(cfg: SceneConfig, device) -> Iterator[Frame]:
    """Frames of a rendered scene, numbered from 1, each with its truth (MOT rows and objects)."""
    for t, (img, truth) in enumerate(Scene(cfg, device), start=1):
        yield Frame(t, img, np.array(mot_io.truth_rows(t, truth)).reshape(-1, 9), truth)


def _gt_by_frame(path: Path | None) -> dict[int, np.ndarray] | None:
    return mot_io.rows_by_frame(mot_io.read_gt(path)) if path is not None else None


def mot_folder(
    folder: Path, device, limit: int | None, public: bool, gt_path: Path | None = None
) -> Iterator[Frame]:
    """A MOT folder's frames; ground truth from ``gt_path``, else the folder's gt/gt.txt."""
    seq = mot_io.MotFolder(folder)
    gt = (
        _gt_by_frame(gt_path)
        if gt_path
        else mot_io.rows_by_frame(seq.gt)
        if seq.gt is not None
        else None
    )
    if public and seq.det is None:
        raise ValueError(f"{folder}: detector='public' needs det/det.txt")
    dets = mot_io.rows_by_frame(seq.det) if public and seq.det is not None else {}
    for t, rgb in enumerate(seq.frames(limit), start=1):
        d = dets.get(t, np.zeros((0, 10)))
        yield Frame(
            t,
            torch.from_numpy(rgb).permute(2, 0, 1).to(device),
            gt.get(t, np.zeros((0, 9))) if gt is not None else None,
            detections=(d[:, 2:6], d[:, 6], None) if public else None,
        )


def video(
    source: str | int, device, limit: int | None, gt_path: Path | None = None
) -> Iterator[Frame]:
    """A video file's or webcam's frames; ground truth by frame number from ``gt_path``."""
    gt = _gt_by_frame(gt_path)
    for t, rgb in enumerate(mot_io.iter_video(source, limit), start=1):
        yield Frame(
            t,
            torch.from_numpy(rgb).permute(2, 0, 1).to(device),
            gt.get(t, np.zeros((0, 9))) if gt is not None else None,
        )


def deepsort_npy(path: Path, gt: Path | None, limit: int | None) -> Iterator[Frame]:
    """A Deep SORT detection file's frames: its boxes, scores and appearance features."""
    frames = mot_io.read_deepsort_npy(path)
    gt_by = _gt_by_frame(gt)
    last = max(frames) if frames else 0
    if gt_by:
        last = max(last, max(gt_by))
    for t in range(1, (min(last, limit) if limit else last) + 1):
        tlwh, conf, feat = frames.get(t, (np.zeros((0, 4)), np.zeros(0), None))
        yield Frame(
            t,
            None,
            gt_by.get(t, np.zeros((0, 9))) if gt_by is not None else None,
            detections=(tlwh, conf, feat),
        )


# A generated sequence is rendered before tracking (as the benchmark does: the renderer is not the
# tracker), in blocks of at most this many bytes of frames; the tracking pauses, drained, while the
# next block renders, and those seconds are `render_s`, outside the tracking's timing.
PRERENDER_BYTES = 4 << 30


@dataclass
class Source:
    """The frames to track, their rate, a name for the sequence and how many (None: unknown);
    ``render_s``: seconds spent rendering them (a generated sequence, else None), never while
    tracking.

    ``blocks()`` gives the frames as the tracking takes them: ``frames`` as one block, then, for a
    generated sequence over `PRERENDER_BYTES`, the ``rest`` a block of ``block`` frames at a time,
    each rendered once the last is tracked."""

    frames: Iterable[Frame]
    fps: float
    name: str
    total: int | None
    render_s: float | None = None
    rest: Iterator[Frame] | None = None  # frames rendered later, `block` at a time
    block: int = 0

    @property
    def resident(self) -> bool:
        """Whether every frame is rendered before the first is tracked (held on the device)."""
        return self.render_s is not None and self.rest is None

    def blocks(self) -> Iterator[Iterable[Frame]]:
        yield self.frames
        while self.rest is not None:
            t0 = time.perf_counter()
            block = list(itertools.islice(self.rest, self.block))
            self.render_s = round((self.render_s or 0.0) + time.perf_counter() - t0, 2)
            if not block:
                return
            yield block


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
        block = max(1, PRERENDER_BYTES // (3 * cfg.width * cfg.height))
        blocks = f"{block} at a time" if cfg.frames > block else "before tracking"
        emit("phase", phase="render", detail=f"{cfg.frames} frames, {blocks}")
        t0 = time.perf_counter()
        frames = generated(cfg, device)
        first = list(itertools.islice(frames, block))
        rest = frames if cfg.frames > block else None
        render_s = round(time.perf_counter() - t0, 2)
        return Source(first, cfg.fps, name, cfg.frames, render_s, rest, block)
    if o.input.startswith("webcam:"):
        cam = int(o.input.split(":", 1)[1])
        return Source(video(cam, device, o.frames, gt), 30.0, "webcam", o.frames)
    path = Path(o.input)
    if not path.exists():
        raise FileNotFoundError(f"no such input: {o.input}")
    if path.is_dir():
        info = mot_io.read_seqinfo(path)
        frames = mot_folder(path, device, o.frames, o.detector == "public", gt)
        total = _cap(len(mot_io.MotFolder(path)), o.frames)
        return Source(frames, info.frame_rate, info.name, total)
    if path.suffix == ".npy":
        last = int(np.load(path, mmap_mode="r")[:, 0].max(initial=0))
        if gt is not None:
            last = max(last, int(mot_io.read_gt(gt)[:, 0].max(initial=0)))
        frames = deepsort_npy(path, gt, o.frames)
        return Source(frames, 25.0, path.stem, _cap(last, o.frames))
    from zbench.demos.video import video_length

    total = _cap(video_length(path), o.frames)
    return Source(video(str(path), device, o.frames, gt), 25.0, path.stem, total)
