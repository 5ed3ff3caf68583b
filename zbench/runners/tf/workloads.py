"""What each workload is in TensorFlow: its model, its synthetic batch, its loss and its steps.

A workload's batch is ``(inputs, targets)``. Classification and segmentation take integer labels
(per image, per pixel, per voxel); Faster R-CNN takes padded boxes and labels (label 0 = padding).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import keras
import numpy as np
import tensorflow as tf

from zbench.contract.workloads import WORKLOADS as CONTRACT_WORKLOADS
from zbench.runners.tf import models

Batch = tuple[Any, Any]

# Synthetic detection targets: this many random boxes per image (as the PyTorch side).
SYNTHETIC_BOXES = 3
# Real VOC images carry at most 42 objects; batches are padded to this many boxes.
MAX_BOXES = 64


@dataclass(frozen=True)
class Workload:
    """A row of the contract's workload table, as the tf runners use it."""

    name: str
    default_image_size: int
    default_classes: int
    in_channels: int
    spatial_dims: int  # 2 for images, 3 for volumes
    kind: str  # "classification" | "segmentation" | "detection"
    dice: bool = False  # the loss adds a soft Dice term to the cross-entropy

    def input_shape(self, image_size: int) -> tuple[int, ...]:
        return (image_size,) * self.spatial_dims + (self.in_channels,)

    def build(self, num_classes: int, image_size: int, xla: bool = False) -> keras.Model:
        return models.build_model(self.name, num_classes, image_size, xla=xla)


WORKLOADS: dict[str, Workload] = {
    w.name: Workload(
        w.name, w.image_size, w.num_classes, w.in_channels, w.spatial_dims, w.task, "dice" in w.loss
    )
    for w in CONTRACT_WORKLOADS.values()
}


def synthetic_numpy(
    workload: Workload, batch: int, image_size: int, num_classes: int, seed: int
) -> Batch:
    """One random batch as numpy arrays (the host-side synthetic source repeats these)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, *workload.input_shape(image_size)), dtype=np.float32)
    if workload.kind == "classification":
        y: Any = rng.integers(0, num_classes, size=(batch,), dtype=np.int32)
    elif workload.kind == "segmentation":
        y = rng.integers(0, num_classes, size=(batch,) + (image_size,) * workload.spatial_dims)
        y = y.astype(np.int32)
    else:
        y = random_boxes(rng, batch, image_size, num_classes)
    return x, y


def random_boxes(
    rng: np.random.Generator, batch: int, image_size: int, num_classes: int
) -> tuple[np.ndarray, np.ndarray]:
    """Random boxes (xyxy, pixels, at least 1/8 of the image wide) and labels 1..num_classes-1,
    padded to MAX_BOXES with label 0."""
    boxes = np.zeros((batch, MAX_BOXES, 4), np.float32)
    labels = np.zeros((batch, MAX_BOXES), np.int32)
    lo = rng.uniform(0, 0.6, (batch, SYNTHETIC_BOXES, 2))
    size = rng.uniform(0.125, 0.4, (batch, SYNTHETIC_BOXES, 2))
    boxes[:, :SYNTHETIC_BOXES, :2] = lo * image_size
    boxes[:, :SYNTHETIC_BOXES, 2:] = (lo + size) * image_size
    labels[:, :SYNTHETIC_BOXES] = rng.integers(1, num_classes, (batch, SYNTHETIC_BOXES))
    return boxes, labels


def loss_fn(workload: Workload, model: keras.Model, batch: Batch, training: bool) -> tf.Tensor:
    """Mean loss of one (per-replica) batch, float32."""
    x, y = batch
    if workload.kind == "detection":
        losses = model(x, targets=y, training=training)
        return tf.add_n([tf.cast(v, tf.float32) for v in losses.values()])
    logits = tf.cast(model(x, training=training), tf.float32)
    per_item = keras.losses.sparse_categorical_crossentropy(y, logits, from_logits=True)
    loss = tf.reduce_mean(per_item)
    if workload.dice:
        loss = loss + soft_dice_loss(logits, y)  # MLPerf's DiceCELoss, as the PyTorch side
    return loss


def soft_dice_loss(logits: tf.Tensor, target: tf.Tensor) -> tf.Tensor:
    """1 - mean over images and classes of the soft Dice score (channels last)."""
    probs = tf.nn.softmax(logits, axis=-1)
    onehot = tf.one_hot(target, tf.shape(logits)[-1], dtype=probs.dtype)
    axes = list(range(1, len(logits.shape) - 1))
    inter = tf.reduce_sum(probs * onehot, axis=axes)
    union = tf.reduce_sum(probs, axis=axes) + tf.reduce_sum(onehot, axis=axes)
    return 1.0 - tf.reduce_mean((2 * inter + 1e-6) / (union + 1e-6))


def infer_fn(workload: Workload, model: keras.Model, batch: Batch) -> tf.Tensor:
    """Forward pass in inference mode; returns a scalar depending on every output, so fetching it
    waits for the whole batch."""
    x, _ = batch
    if workload.kind == "detection":
        detections = model(x, training=False)
        return tf.reduce_sum(tf.cast(detections["scores"], tf.float32))
    return tf.reduce_sum(tf.cast(model(x, training=False), tf.float32))
