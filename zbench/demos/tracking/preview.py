"""`frame` events for live views: a small RGB picture with boxes drawn in, the track table, FPS.

The picture is ready for half-block drawing (`zbench.demos.motion.preview.halfblock_cells`):
even height, ``PREVIEW_PX`` wide, each track's box outlined in its id colour.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from zbench.demos.motion.preview import downscale
from zbench.demos.tracking.mot_io import id_colour

PREVIEW_PX = 96
MAX_TRACK_ROWS = 60


def draw_boxes(img: np.ndarray, boxes: np.ndarray, ids: list[int]) -> np.ndarray:
    """Outline tlwh boxes (already in the picture's pixels) in each id's colour, 1 px wide."""
    out = img.copy()
    h, w = out.shape[:2]
    for (x, y, bw, bh), tid in zip(boxes, ids, strict=True):
        x0, y0 = int(np.clip(round(x), 0, w - 1)), int(np.clip(round(y), 0, h - 1))
        x1, y1 = int(np.clip(round(x + bw), 0, w - 1)), int(np.clip(round(y + bh), 0, h - 1))
        c = id_colour(tid)
        out[y0, x0 : x1 + 1] = c
        out[y1, x0 : x1 + 1] = c
        out[y0 : y1 + 1, x0] = c
        out[y0 : y1 + 1, x1] = c
    return out


class FramePreview:
    """Emits at most `rate` `frame` events per second; `final` sends the last frame if not sent."""

    def __init__(
        self, emit: Callable[..., None], rate: float = 4.0, width: int = PREVIEW_PX
    ) -> None:
        self.emit, self.period, self.width = emit, 1.0 / rate, width
        self.last = -1e9
        self.sent = -1  # the last frame index sent

    def due(self) -> bool:
        return time.monotonic() - self.last >= self.period

    def __call__(
        self,
        index: int,
        total: int | None,
        rgb: np.ndarray | None,
        tracks: list,
        times,
        final: bool = False,
    ) -> None:
        if (not final and not self.due()) or index == self.sent:
            return
        self.last, self.sent = time.monotonic(), index
        ids = [t.track_id for t in tracks]
        boxes = np.array([t.tlwh for t in tracks], np.float64).reshape(-1, 4)
        fields: dict = {"width": 0, "height": 0, "image": None, "boxes": []}
        if rgb is not None:
            scale = self.width / rgb.shape[1]
            small = downscale(rgb, self.width)
            sb = boxes * np.array([scale, small.shape[0] / rgb.shape[0]] * 2)
            small = draw_boxes(small, sb, ids)
            fields = {
                "width": small.shape[1],
                "height": small.shape[0],
                "image": small.reshape(-1).tolist(),
                # [x, y, w, h, id] in the picture's pixels, the frame schema of every demo view.
                "boxes": [
                    [*(round(float(v), 1) for v in b), i] for i, b in zip(ids, sb, strict=True)
                ],
            }
        self.emit(
            "frame",
            demo="tracking",
            step=index,
            total=total,
            tracks=[[i, *(round(float(v), 1) for v in b)] for i, b in zip(ids, boxes, strict=True)][
                :MAX_TRACK_ROWS
            ],
            fps=times.fps(),
            **fields,
        )
