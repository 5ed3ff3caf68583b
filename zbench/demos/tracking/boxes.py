"""Box conversions and overlaps for the tracker, vectorised with NumPy."""

from __future__ import annotations

import numpy as np


def tlwh_to_xyah(tlwh: np.ndarray) -> np.ndarray:
    """``[N, 4]`` top-left x, y, width, height to centre x, y, aspect (w/h), height."""
    tlwh = np.asarray(tlwh, dtype=np.float64).reshape(-1, 4)
    out = tlwh.copy()
    out[:, :2] += out[:, 2:] / 2
    out[:, 2] /= out[:, 3]
    return out


def xyah_to_tlwh(xyah: np.ndarray) -> np.ndarray:
    """The inverse, from the first four columns (a Kalman mean's centre x, y, aspect, height)."""
    box = xyah[:, :4].copy()  # its dtype kept: Deep SORT reads some figures in float32
    box[:, 2] *= box[:, 3]
    box[:, :2] -= box[:, 2:] / 2
    return box


def tlwh_to_tlbr(tlwh: np.ndarray) -> np.ndarray:
    """Boxes from (left, top, width, height) to (left, top, right, bottom), as an (N, 4) array."""
    tlwh = np.asarray(tlwh, dtype=np.float64).reshape(-1, 4)
    out = tlwh.copy()
    out[:, 2:] += out[:, :2]
    return out


def iou_matrix(a_tlwh: np.ndarray, b_tlwh: np.ndarray) -> np.ndarray:
    """Intersection over union of every box of ``a`` with every box of ``b``: ``[len(a), len(b)]``."""
    a = np.asarray(a_tlwh, dtype=np.float64).reshape(-1, 4)
    b = np.asarray(b_tlwh, dtype=np.float64).reshape(-1, 4)
    a_br, b_br = a[:, :2] + a[:, 2:], b[:, :2] + b[:, 2:]  # bottom-right corners, as tlwh_to_tlbr
    tl = np.maximum(a[:, None, :2], b[None, :, :2])
    br = np.minimum(a_br[:, None, :], b_br[None, :, :])
    wh = np.maximum(br - tl, 0.0)
    inter = wh[..., 0] * wh[..., 1]
    area_a = (a_br[:, 0] - a[:, 0]) * (a_br[:, 1] - a[:, 1])
    area_b = (b_br[:, 0] - b[:, 0]) * (b_br[:, 1] - b[:, 1])
    union = area_a[:, None] + area_b[None, :] - inter
    return np.where(union > 0, inter / np.maximum(union, 1e-12), 0.0)
