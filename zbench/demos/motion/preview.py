"""Half-block terminal pictures as data: each character cell shows two pixels (`▀` fg over bg).

Renderer-free on purpose: it returns rows of (top, bottom) hex colours; the TUI or a Rich console
draws them (`to_rich_text` imports Rich only when called).
"""

from __future__ import annotations

import numpy as np

UPPER_HALF = "\u2580"


def downscale(rgb: np.ndarray, width: int) -> np.ndarray:
    """Area-average an (H, W, 3) uint8 image to `width` columns, keeping the aspect (even height)."""
    h, w = rgb.shape[:2]
    height = max(2, round(h * width / w / 2) * 2)
    ys = (np.arange(height + 1) * h / height).astype(int)
    xs = (np.arange(width + 1) * w / width).astype(int)
    csum = np.cumsum(np.cumsum(np.pad(rgb.astype(np.float64), ((1, 0), (1, 0), (0, 0))), 0), 1)
    tot = csum[ys[1:]][:, xs[1:]] - csum[ys[:-1]][:, xs[1:]] - csum[ys[1:]][:, xs[:-1]]
    tot += csum[ys[:-1]][:, xs[:-1]]
    area = np.outer(np.diff(ys), np.diff(xs))[..., None]
    return (tot / np.maximum(area, 1) + 0.5).astype(np.uint8)


def halfblock_cells(rgb: np.ndarray) -> list[list[tuple[str, str]]]:
    """(H, W, 3) uint8 with even H -> H/2 rows of W cells, each (top colour, bottom colour) '#rrggbb'."""
    arr = np.asarray(rgb, np.uint8)
    if arr.ndim != 3 or arr.shape[2] != 3:
        raise ValueError(f"expected an (H, W, 3) image, got shape {arr.shape}")
    if arr.shape[0] % 2:
        arr = np.concatenate([arr, arr[-1:]], 0)
    hexes = np.array([f"#{r:02x}{g:02x}{b:02x}" for r, g, b in arr.reshape(-1, 3)]).reshape(
        arr.shape[:2]
    )
    return [list(zip(hexes[y], hexes[y + 1], strict=True)) for y in range(0, arr.shape[0], 2)]


def to_rich_text(rgb: np.ndarray):
    """A rich.text.Text of half blocks, for consoles and Textual Static widgets."""
    from rich.text import Text

    text = Text()
    for i, row in enumerate(halfblock_cells(rgb)):
        if i:
            text.append("\n")
        for top, bottom in row:
            text.append(UPPER_HALF, style=f"{top} on {bottom}")
    return text
