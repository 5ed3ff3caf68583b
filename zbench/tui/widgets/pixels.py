"""``PixelView``: a small RGB image (a demo's ``frame`` panel) drawn as half-block cells.

Each terminal cell shows two pixels: ``▀`` with the top pixel as foreground and the bottom one as
background. A terminal whose locale is not UTF-8 gets one ASCII character per cell instead (a
brightness ramp in the two pixels' mean colour). Boxes ``[x, y, w, h, id]`` in image coordinates
are drawn as outlines, one colour per id. Pure Python over the flat list the event carries: the
TUI never imports numpy for 48x48 pictures.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from rich.color import Color
from rich.segment import Segment
from rich.style import Style
from textual.geometry import Size
from textual.strip import Strip
from textual.widget import Widget

from zbench.glyphs import encoding_is_utf8

RAMP = " .:-=+*#%@"  # ASCII brightness ramp, dark to light
BOX_COLOURS = (
    (230, 25, 75),
    (60, 180, 75),
    (255, 225, 25),
    (0, 130, 200),
    (245, 130, 48),
    (145, 30, 180),
    (70, 240, 240),
    (240, 50, 230),
)

Pixel = tuple[int, int, int]


def to_pixels(flat: Sequence[int], width: int, height: int) -> list[list[Pixel]]:
    """Rows of (r, g, b) from a row-major flat RGB list; a short list is padded with black."""
    width, height = max(width, 0), max(height, 0)
    values = list(flat)[: width * height * 3]
    values += [0] * (width * height * 3 - len(values))
    it = iter(_whole(v) & 255 for v in values)  # a damaged value draws black
    return [[(next(it), next(it), next(it)) for _ in range(width)] for _ in range(height)]


def draw_boxes(pixels: list[list[Pixel]], boxes: Sequence[Sequence[float]]) -> list[list[Pixel]]:
    """A copy of ``pixels`` with each box ``[x, y, w, h, id]`` outlined in its id's colour."""
    out = [list(row) for row in pixels]
    height = len(out)
    width = len(out[0]) if out else 0
    for box in boxes:
        if not isinstance(box, list | tuple) or len(box) < 5 or not all(map(_finite, box[:5])):
            continue  # a damaged box is not drawn
        x, y, w, h = (round(float(v)) for v in box[:4])
        colour = BOX_COLOURS[int(box[4]) % len(BOX_COLOURS)]
        x0, y0 = max(0, x), max(0, y)
        x1, y1 = min(width - 1, x + max(w, 1) - 1), min(height - 1, y + max(h, 1) - 1)
        if x0 > x1 or y0 > y1:
            continue
        for cx in range(x0, x1 + 1):
            out[y0][cx] = out[y1][cx] = colour
        for cy in range(y0, y1 + 1):
            out[cy][x0] = out[cy][x1] = colour
    return out


def _finite(value: Any) -> bool:
    return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))


def _whole(value: Any) -> int:
    """A frame's whole number (width, height, a colour value); 0 for anything else."""
    return int(value) if _finite(value) else 0


def _ascii(top: Pixel, bottom: Pixel) -> Segment:
    mean = tuple((a + b) // 2 for a, b in zip(top, bottom, strict=True))
    luma = (299 * mean[0] + 587 * mean[1] + 114 * mean[2]) / 255_000
    char = RAMP[min(len(RAMP) - 1, int(luma * len(RAMP)))]
    return Segment(char, Style(color=Color.from_rgb(*mean)))


def cells(pixels: list[list[Pixel]], ascii: bool = False) -> list[list[Segment]]:
    """One list of segments per terminal row (two pixel rows each; an odd last row over black)."""
    rows: list[list[Segment]] = []
    for y in range(0, len(pixels), 2):
        top = pixels[y]
        bottom = pixels[y + 1] if y + 1 < len(pixels) else [(0, 0, 0)] * len(top)
        if ascii:
            rows.append([_ascii(t, b) for t, b in zip(top, bottom, strict=True)])
        else:
            rows.append(
                [
                    Segment("▀", Style(color=Color.from_rgb(*t), bgcolor=Color.from_rgb(*b)))
                    for t, b in zip(top, bottom, strict=True)
                ]
            )
    return rows


class PixelView(Widget):
    """An RGB picture, ``width`` cells wide and ``height / 2`` rows high."""

    DEFAULT_CSS = """
    PixelView { width: auto; height: auto; }
    """

    def __init__(
        self, *, ascii: bool | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(id=id, classes=classes)
        self.ascii = (not encoding_is_utf8()) if ascii is None else ascii
        self._rows: list[list[Segment]] = []
        self._width = 0
        self.fit: int | None = None  # the most cells across: a wider picture shows every k-th pixel

    def show(
        self,
        flat: Sequence[int],
        width: int,
        height: int,
        boxes: Sequence[Sequence[float]] = (),
    ) -> None:
        pixels = to_pixels(flat, width, height)
        if boxes:
            pixels = draw_boxes(pixels, boxes)
        k = -(-width // self.fit) if self.fit and width > self.fit else 1
        if k > 1:  # every k-th pixel of every k-th row: the picture keeps its shape
            pixels = [row[::k] for row in pixels[::k]]
        self._rows = cells(pixels, ascii=self.ascii)
        self._width = len(pixels[0]) if pixels else 0
        self.refresh(layout=True)

    def show_event(self, frame: dict[str, Any], panel: str | None = None) -> None:
        """A frame event's panel (motion) or image with boxes (tracking)."""
        w, h = _whole(frame.get("width")), _whole(frame.get("height"))
        if panel is not None:
            panels = frame.get("panels")
            flat = panels.get(panel) if isinstance(panels, dict) else None
            self.show(flat if isinstance(flat, list) else [], w, h)
        else:
            image, boxes = frame.get("image"), frame.get("boxes")
            self.show(
                image if isinstance(image, list) else [],
                w,
                h,
                boxes if isinstance(boxes, list) else (),
            )

    def get_content_width(self, container: Size, viewport: Size) -> int:
        return self._width or 12

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._rows) or 1

    def render_line(self, y: int) -> Strip:
        if y >= len(self._rows):
            return Strip.blank(self.size.width)
        return Strip(self._rows[y]).crop_extend(0, self.size.width, self.rich_style)
