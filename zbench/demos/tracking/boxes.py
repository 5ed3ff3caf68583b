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


def tlwh_to_tlbr(tlwh: np.ndarray) -> np.ndarray:
    tlwh = np.asarray(tlwh, dtype=np.float64).reshape(-1, 4)
    out = tlwh.copy()
    out[:, 2:] += out[:, :2]
    return out


def iou_matrix(a_tlwh: np.ndarray, b_tlwh: np.ndarray) -> np.ndarray:
    """Intersection over union of every box of ``a`` with every box of ``b``: ``[len(a), len(b)]``."""
    a, b = tlwh_to_tlbr(a_tlwh), tlwh_to_tlbr(b_tlwh)
    tl = np.maximum(a[:, None, :2], b[None, :, :2])
    br = np.minimum(a[:, None, 2:], b[None, :, 2:])
    wh = np.maximum(br - tl, 0.0)  # np.clip(x, 0, None) with a quarter of the call overhead
    inter = wh[..., 0] * wh[..., 1]
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    union = area_a[:, None] + area_b[None, :] - inter
    return np.where(union > 0, inter / np.maximum(union, 1e-12), 0.0)
