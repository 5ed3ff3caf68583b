"""OpenCV video input shared by the demos: the import guard and RGB frames from a file or webcam."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any


def cv2_module() -> Any:
    """OpenCV, or a one-line error naming the extra that brings it."""
    try:
        import cv2
    except ImportError as exc:  # the `demos` extra brings it
        raise RuntimeError("OpenCV is missing: pip install 'zbench[demos]'") from exc
    return cv2


def capture_frames(source: str | int | Path, limit: int | None = None) -> Iterator[Any]:
    """RGB uint8 frames from a video file or a webcam index, through OpenCV."""
    cv2 = cv2_module()
    if not isinstance(source, int) and not Path(source).is_file():
        raise FileNotFoundError(f"no such video: {source}")
    cap = cv2.VideoCapture(source if isinstance(source, int) else str(source))
    if not cap.isOpened():
        raise RuntimeError(f"cannot open video source {source!r}")
    try:
        n = 0
        while limit is None or n < limit:
            ok, frame = cap.read()
            if not ok:
                break
            n += 1
            yield cv2.cvtColor(frame, cv2.COLOR_BGR2RGB)
    finally:
        cap.release()


def video_length(source: str | Path) -> int | None:
    """A video file's frame count as its container states it, None when it does not."""
    cv2 = cv2_module()
    cap = cv2.VideoCapture(str(source))
    try:
        n = int(cap.get(cv2.CAP_PROP_FRAME_COUNT)) if cap.isOpened() else 0
    finally:
        cap.release()
    return n if n > 0 else None
