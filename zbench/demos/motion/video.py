"""Video in and out with OpenCV (and Pillow for GIF): read clips, webcams, write MP4/GIF, strips."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np

from zbench.demos.video import capture_frames
from zbench.demos.video import cv2_module as _cv2

VIDEO_SUFFIXES = (".mp4", ".avi", ".mov", ".mkv", ".webm", ".gif")
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp")


def square(frame: np.ndarray, size: int) -> np.ndarray:
    """Centre-crop to a square and resize to size x size (RGB uint8)."""
    cv2 = _cv2()
    h, w = frame.shape[:2]
    s = min(h, w)
    y, x = (h - s) // 2, (w - s) // 2
    crop = frame[y : y + s, x : x + s]
    interp = cv2.INTER_AREA if s > size else cv2.INTER_LINEAR
    return np.ascontiguousarray(cv2.resize(crop, (size, size), interpolation=interp))


def iter_frames(
    source: str | int | Path, size: int, limit: int | None = None
) -> Iterator[np.ndarray]:
    """RGB uint8 square frames from a video file, an image folder, or a webcam index."""
    cv2 = _cv2()
    path = Path(str(source))
    if not isinstance(source, int) and path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
        for i, f in enumerate(files):
            if limit is not None and i >= limit:
                return
            img = cv2.imread(str(f), cv2.IMREAD_COLOR)
            if img is not None:
                yield square(cv2.cvtColor(img, cv2.COLOR_BGR2RGB), size)
        return
    for frame in capture_frames(source, limit):
        yield square(frame, size)


def read_video(source: str | int | Path, size: int, limit: int | None = None) -> np.ndarray:
    """All frames as (T, size, size, 3) uint8."""
    frames = list(iter_frames(source, size, limit))
    if not frames:
        raise RuntimeError(f"no frames in {source}")
    return np.stack(frames)


def load_folder(folder: Path, size: int, limit: int = 2000) -> list[np.ndarray]:
    """Every clip under `folder`: video files, and sub-folders of numbered images (one clip each)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"no such folder: {folder}")
    clips = []
    for p in sorted(folder.iterdir()):
        if p.is_dir() or p.suffix.lower() in VIDEO_SUFFIXES:
            frames = list(iter_frames(p, size, limit))
            if frames:
                clips.append(np.stack(frames))
    return clips


def write_video(path: Path, frames: np.ndarray | list[np.ndarray], fps: float = 25.0) -> Path:
    """Write RGB uint8 frames to .mp4 (OpenCV, mp4v) or .gif (Pillow); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    frames = [np.asarray(f, dtype=np.uint8) for f in frames]
    if not frames:
        raise ValueError("no frames to write")
    suffix = path.suffix.lower()
    if suffix == ".gif":
        from PIL import Image

        imgs = [Image.fromarray(f) for f in frames]
        imgs[0].save(path, save_all=True, append_images=imgs[1:], duration=int(1000 / fps), loop=0)
        return path
    if suffix not in (".mp4", ".avi"):
        raise ValueError(f"unsupported video type {suffix!r}: use .mp4, .avi or .gif")
    cv2 = _cv2()
    h, w = frames[0].shape[:2]
    fourcc = cv2.VideoWriter_fourcc(*("mp4v" if suffix == ".mp4" else "MJPG"))
    writer = cv2.VideoWriter(str(path), fourcc, fps, (w, h))
    if not writer.isOpened():
        raise RuntimeError(f"OpenCV cannot write {path}")
    try:
        for f in frames:
            writer.write(cv2.cvtColor(f, cv2.COLOR_RGB2BGR))
    finally:
        writer.release()
    return path


def side_by_side(*frames: np.ndarray, gap: int = 2) -> np.ndarray:
    """Frames of equal height joined left to right with a thin dark gap: source | driving | result."""
    h = frames[0].shape[0]
    sep = np.full((h, gap, 3), 16, np.uint8)
    parts: list[np.ndarray] = []
    for f in frames:
        parts += [f, sep]
    return np.concatenate(parts[:-1], 1)


def write_png(path: Path, image: np.ndarray) -> Path:
    """Save an image array as a PNG file, creating its folder; return the path."""
    from PIL import Image

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(np.asarray(image, np.uint8)).save(path)
    return path
