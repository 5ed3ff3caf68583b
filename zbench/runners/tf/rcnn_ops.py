"""Box arithmetic of a two-stage detector, batched and with static shapes (XLA-friendly where the
ops allow): anchors, IoU, box coding, anchor/proposal matching and sampling, multi-scale RoI Align.

Conventions follow torchvision's Faster R-CNN: boxes are x1 y1 x2 y2 in input pixels; ground truth
is padded to a fixed count with label 0, which never matches.
"""

from __future__ import annotations

import math

import numpy as np
import tensorflow as tf

BBOX_CLIP = math.log(1000.0 / 16)  # largest log-scale a decoded box may grow by (torchvision)


def anchors_for_level(
    feature: int, stride: int, size: int, ratios: tuple[float, ...]
) -> np.ndarray:
    """(feature*feature*len(ratios), 4) anchors, location-major like a conv head's reshape."""
    h_ratios = np.sqrt(np.asarray(ratios))
    w_ratios = 1.0 / h_ratios
    ws, hs = w_ratios * size, h_ratios * size
    base = np.round(np.stack([-ws, -hs, ws, hs], axis=1) / 2)  # (A, 4)
    shifts = np.arange(feature, dtype=np.float32) * stride
    sy, sx = np.meshgrid(shifts, shifts, indexing="ij")
    shift = np.stack([sx, sy, sx, sy], axis=-1).reshape(-1, 1, 4)
    return (shift + base[None]).reshape(-1, 4).astype(np.float32)


def pairwise_iou(a: tf.Tensor, b: tf.Tensor) -> tf.Tensor:
    """IoU of (B, N, 4) against (B, M, 4) -> (B, N, M)."""
    a = a[:, :, None, :]
    b = b[:, None, :, :]
    lt = tf.maximum(a[..., :2], b[..., :2])
    rb = tf.minimum(a[..., 2:], b[..., 2:])
    wh = tf.maximum(rb - lt, 0.0)
    inter = wh[..., 0] * wh[..., 1]
    area_a = (a[..., 2] - a[..., 0]) * (a[..., 3] - a[..., 1])
    area_b = (b[..., 2] - b[..., 0]) * (b[..., 3] - b[..., 1])
    return inter / tf.maximum(area_a + area_b - inter, 1e-6)


def encode(gt: tf.Tensor, ref: tf.Tensor, weights: tuple[float, ...]) -> tf.Tensor:
    """Regression targets taking ``ref`` boxes to ``gt`` boxes (same leading shape)."""
    rw, rh = ref[..., 2] - ref[..., 0], ref[..., 3] - ref[..., 1]
    rx, ry = ref[..., 0] + 0.5 * rw, ref[..., 1] + 0.5 * rh
    gw = tf.maximum(gt[..., 2] - gt[..., 0], 1e-3)
    gh = tf.maximum(gt[..., 3] - gt[..., 1], 1e-3)
    gx, gy = gt[..., 0] + 0.5 * gw, gt[..., 1] + 0.5 * gh
    rw, rh = tf.maximum(rw, 1e-3), tf.maximum(rh, 1e-3)
    wx, wy, ww, wh = weights
    return tf.stack(
        [
            wx * (gx - rx) / rw,
            wy * (gy - ry) / rh,
            ww * tf.math.log(gw / rw),
            wh * tf.math.log(gh / rh),
        ],
        axis=-1,
    )


def decode(deltas: tf.Tensor, ref: tf.Tensor, weights: tuple[float, ...]) -> tf.Tensor:
    """Boxes (x1, y1, x2, y2) from regression deltas on reference boxes, size deltas clipped."""
    rw, rh = ref[..., 2] - ref[..., 0], ref[..., 3] - ref[..., 1]
    rx, ry = ref[..., 0] + 0.5 * rw, ref[..., 1] + 0.5 * rh
    wx, wy, ww, wh = weights
    dx, dy = deltas[..., 0] / wx, deltas[..., 1] / wy
    dw = tf.minimum(deltas[..., 2] / ww, BBOX_CLIP)
    dh = tf.minimum(deltas[..., 3] / wh, BBOX_CLIP)
    cx, cy = dx * rw + rx, dy * rh + ry
    w, h = tf.exp(dw) * rw, tf.exp(dh) * rh
    return tf.stack([cx - 0.5 * w, cy - 0.5 * h, cx + 0.5 * w, cy + 0.5 * h], axis=-1)


def clip_boxes(boxes: tf.Tensor, size: int) -> tf.Tensor:
    """Boxes clipped to a ``size`` x ``size`` image."""
    return tf.clip_by_value(boxes, 0.0, float(size))


def match(iou: tf.Tensor, gt_valid: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
    """Best ground truth per row of (B, N, G) IoU, ignoring padded ground truth: (index, IoU)."""
    iou = tf.where(gt_valid[:, None, :], iou, -1.0)
    return tf.argmax(iou, axis=-1, output_type=tf.int32), tf.reduce_max(iou, axis=-1)


def sample_mask(positive: tf.Tensor, negative: tf.Tensor, total: int, fraction: float) -> tf.Tensor:
    """Random balanced sample, as torchvision's BalancedPositiveNegativeSampler: up to
    ``total * fraction`` positives, negatives for the rest. (B, N) bool masks -> (B, N) bool."""
    noise = tf.random.uniform(tf.shape(positive))
    max_pos = int(total * fraction)
    num_pos = tf.minimum(tf.reduce_sum(tf.cast(positive, tf.int32), axis=1), max_pos)
    num_neg = tf.minimum(tf.reduce_sum(tf.cast(negative, tf.int32), axis=1), total - num_pos)
    return _top_by_noise(positive, noise, num_pos, max_pos) | _top_by_noise(
        negative, noise, num_neg, total
    )


def _top_by_noise(mask: tf.Tensor, noise: tf.Tensor, count: tf.Tensor, k: int) -> tf.Tensor:
    score = tf.where(mask, noise, -1.0)
    k = min(k, int(mask.shape[1]))
    top = tf.math.top_k(score, k=k).values  # (B, k), descending
    kth = tf.gather(top, tf.maximum(count - 1, 0), batch_dims=1)  # the count-th largest
    return mask & (score >= kth[:, None]) & (count[:, None] > 0)


def sample_indices(
    positive: tf.Tensor, negative: tf.Tensor, total: int, fraction: float
) -> tuple[tf.Tensor, tf.Tensor]:
    """Like :func:`sample_mask` but returns ``total`` row indices per image and their validity
    (positives first), so the sampled RoIs can be gathered into a fixed-size batch."""
    noise = tf.random.uniform(tf.shape(positive))
    n = int(positive.shape[1])
    max_pos = min(int(total * fraction), n)
    num_pos = tf.minimum(tf.reduce_sum(tf.cast(positive, tf.int32), axis=1), max_pos)
    num_neg = tf.minimum(tf.reduce_sum(tf.cast(negative, tf.int32), axis=1), total - num_pos)
    pos_idx = tf.math.top_k(tf.where(positive, noise, -1.0), k=max_pos).indices
    neg_idx = tf.math.top_k(tf.where(negative, noise, -1.0), k=min(total, n)).indices
    slot = tf.tile(tf.range(total)[None, :], [tf.shape(positive)[0], 1])
    from_pos = tf.gather(pos_idx, tf.minimum(slot, max_pos - 1), batch_dims=1)
    neg_slot = tf.clip_by_value(slot - num_pos[:, None], 0, min(total, n) - 1)
    from_neg = tf.gather(neg_idx, neg_slot, batch_dims=1)
    idx = tf.where(slot < num_pos[:, None], from_pos, from_neg)
    valid = slot < (num_pos + num_neg)[:, None]
    return idx, valid


def fpn_level(boxes: tf.Tensor, levels: int = 4) -> tf.Tensor:
    """Which of P2..P5 (0..3) a RoI is pooled from (FPN paper eq. 1, canonical 224 at P4)."""
    area = tf.maximum((boxes[..., 2] - boxes[..., 0]) * (boxes[..., 3] - boxes[..., 1]), 1e-6)
    k = tf.floor(4.0 + tf.math.log(tf.sqrt(area) / 224.0) / math.log(2.0) + 1e-6)
    return tf.cast(tf.clip_by_value(k, 2.0, 1.0 + levels), tf.int32) - 2


def roi_align(
    features: list[tf.Tensor],
    strides: list[int],
    rois: tf.Tensor,
    output: int = 7,
    xla: bool = False,
) -> tf.Tensor:
    """Multi-scale RoI Align of (B, R, 4) RoIs -> (B*R, output, output, C).

    Built on tf.image.crop_and_resize, TensorFlow's bilinear crop: the box is shrunk by half a bin
    on each side so that the ``output`` x ``output`` samples fall on the bin centres (RoI Align with
    one sample per bin). Every RoI is cropped from every level and the right level is kept: four
    times the crop work, but static shapes, so the whole step stays one graph. XLA has no
    CropAndResize kernel: with ``xla`` the same samples are taken by :func:`_bilinear_crops`.
    """
    b, r = tf.shape(rois)[0], int(rois.shape[1])
    flat = tf.reshape(rois, (-1, 4))
    box_index = tf.repeat(tf.range(b), r)
    level = tf.reshape(fpn_level(rois, len(features)), (-1,))
    out = None
    for i, (fmap, stride) in enumerate(zip(features, strides, strict=True)):
        size = tf.cast(tf.shape(fmap)[1], tf.float32)
        x1, y1, x2, y2 = tf.unstack(flat / stride - 0.5, axis=1)  # feature-pixel coordinates
        half_w, half_h = (x2 - x1) / (2 * output), (y2 - y1) / (2 * output)
        denom = tf.maximum(size - 1.0, 1.0)
        norm = tf.stack([y1 + half_h, x1 + half_w, y2 - half_h, x2 - half_w], axis=1) / denom
        if xla:
            crops = _bilinear_crops(fmap, norm * denom, box_index, output)
        else:
            crops = tf.image.crop_and_resize(fmap, norm, box_index, (output, output))
        crops = tf.cast(crops, fmap.dtype)
        keep = tf.cast(tf.equal(level, i), fmap.dtype)[:, None, None, None]
        out = crops * keep if out is None else out + crops * keep
    assert out is not None
    return out


def _bilinear_crops(
    fmap: tf.Tensor, boxes: tf.Tensor, box_index: tf.Tensor, output: int
) -> tf.Tensor:
    """crop_and_resize's sampling written with gathers (which XLA compiles): ``boxes`` are
    (N, 4) y1 x1 y2 x2 in feature pixels; returns (N, output, output, C) float32, zero outside."""
    h, w = tf.shape(fmap)[1], tf.shape(fmap)[2]
    steps = tf.linspace(0.0, 1.0, output) if output > 1 else tf.constant([0.5])
    y1, x1, y2, x2 = tf.unstack(boxes, axis=1)
    ys = y1[:, None] + (y2 - y1)[:, None] * steps[None]  # (N, output)
    xs = x1[:, None] + (x2 - x1)[:, None] * steps[None]
    y0, x0 = tf.floor(ys), tf.floor(xs)
    wy, wx = (ys - y0)[:, :, None, None], (xs - x0)[:, None, :, None]
    inside = (
        (ys >= 0)[:, :, None]
        & (ys <= tf.cast(h - 1, tf.float32))[:, :, None]
        & (xs >= 0)[:, None, :]
        & (xs <= tf.cast(w - 1, tf.float32))[:, None, :]
    )
    fmap = tf.cast(fmap, tf.float32)
    n = tf.shape(boxes)[0]
    bi = tf.broadcast_to(box_index[:, None, None], (n, output, output))

    def at(yy: tf.Tensor, xx: tf.Tensor) -> tf.Tensor:
        yi = tf.clip_by_value(tf.cast(yy, tf.int32), 0, h - 1)
        xi = tf.clip_by_value(tf.cast(xx, tf.int32), 0, w - 1)
        grid_y = tf.broadcast_to(yi[:, :, None], (n, output, output))
        grid_x = tf.broadcast_to(xi[:, None, :], (n, output, output))
        return tf.gather_nd(fmap, tf.stack([bi, grid_y, grid_x], axis=-1))

    top = at(y0, x0) * (1 - wx) + at(y0, x0 + 1) * wx
    bottom = at(y0 + 1, x0) * (1 - wx) + at(y0 + 1, x0 + 1) * wx
    crops = top * (1 - wy) + bottom * wy
    return tf.where(inside[..., None], crops, 0.0)


def smooth_l1(x: tf.Tensor, beta: float) -> tf.Tensor:
    """Elementwise smooth-L1 loss: quadratic below ``beta``, linear above."""
    ax = tf.abs(x)
    return tf.where(ax < beta, 0.5 * ax * ax / beta, ax - 0.5 * beta)
