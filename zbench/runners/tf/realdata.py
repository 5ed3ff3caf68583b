"""Real datasets through tf.data, read with the framework-free ``runners.datasets`` so TensorFlow
sees the same files, labels and preprocessing as PyTorch. Decoding runs in tf.data's parallel map
(``tf.numpy_function`` around the shared loaders)."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from zbench.contract.config import RunConfig
from zbench.runners import datasets as ds
from zbench.runners.tf.workloads import MAX_BOXES, Workload

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
CROPS_PER_CASE = 8  # random crops taken from each preprocessed KiTS19 case (as the PyTorch side)


def real_dataset(
    workload: Workload, cfg: RunConfig, global_batch: int
) -> tuple[tf.data.Dataset, str, int]:
    """(globally batched endless dataset, layout name, number of classes)."""
    assert cfg.data and cfg.image_size
    size = cfg.image_size
    parallel = cfg.workers or None  # None: sequential map
    index, layout = ds.index_for(workload.kind, cfg.data, "train")
    if workload.kind == "classification":
        out, classes = _classification(index, size, parallel, cfg.seed), index.num_classes
    elif workload.kind == "detection":
        out, classes = _detection(index, size, parallel, cfg.seed), 21
    else:
        out, classes = _volumes(index, size, workload.spatial_dims, cfg.seed), 3
    return out.batch(global_batch, drop_remainder=True), layout, classes


def _classification(
    index: ds.ClassificationIndex, size: int, parallel: int | None, seed: int
) -> tf.data.Dataset:
    files = [str(f) for f in index.files]
    labels = np.asarray(index.labels, np.int32)
    mean = tf.constant(IMAGENET_MEAN) * 255.0
    std = tf.constant(IMAGENET_STD) * 255.0

    def load(i: np.int64) -> np.ndarray:
        return ds.load_image(files[int(i)], size)

    def item(i: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        img = tf.numpy_function(load, [i], tf.uint8, stateful=False)
        img = tf.ensure_shape(img, (size, size, 3))
        return (tf.cast(img, tf.float32) - mean) / std, tf.gather(labels, i)

    order = tf.data.Dataset.range(len(files)).shuffle(len(files), seed=seed).repeat()
    return order.map(item, num_parallel_calls=parallel)


def _detection(
    samples: list[ds.VocSample], size: int, parallel: int | None, seed: int
) -> tf.data.Dataset:
    """Images resized to ``size`` x ``size`` (boxes scaled with them), boxes padded to MAX_BOXES."""

    def load(i: np.int64) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        s = samples[int(i)]
        img = ds.load_image(s.image, None)
        h, w = img.shape[:2]
        n = min(len(s.labels), MAX_BOXES)
        boxes = np.zeros((MAX_BOXES, 4), np.float32)
        labels = np.zeros((MAX_BOXES,), np.int32)
        scale = np.array([size / w, size / h, size / w, size / h], np.float32)
        boxes[:n] = s.boxes[:n] * scale
        labels[:n] = s.labels[:n]
        return img, boxes, labels

    def item(i: tf.Tensor) -> tuple[tf.Tensor, tuple[tf.Tensor, tf.Tensor]]:
        img, boxes, labels = tf.numpy_function(
            load, [i], (tf.uint8, tf.float32, tf.int32), stateful=False
        )
        img = tf.image.resize(tf.ensure_shape(img, (None, None, 3)), (size, size)) / 255.0
        boxes = tf.ensure_shape(boxes, (MAX_BOXES, 4))
        return img, (boxes, tf.ensure_shape(labels, (MAX_BOXES,)))

    order = tf.data.Dataset.range(len(samples)).shuffle(len(samples), seed=seed).repeat()
    return order.map(item, num_parallel_calls=parallel)


def _volumes(cases: list[ds.KitsCase], size: int, dims: int, seed: int) -> tf.data.Dataset:
    """Random crops of preprocessed KiTS19 cases (axial slices for the 2D U-Net), each case loaded
    once per CROPS_PER_CASE crops: resampling a case dominates, so it is not repeated per crop."""
    crop = (size,) * 3 if dims == 3 else (1, size, size)
    shape = (size,) * dims

    def gen() -> object:
        rng = np.random.default_rng(seed)
        while True:
            for case in cases:
                image, label = ds.load_kits_case(case)
                for _ in range(CROPS_PER_CASE):
                    img, lab = ds.random_crop_3d(image, label, crop, rng)
                    yield img.reshape(shape)[..., None], lab.reshape(shape).astype(np.int32)

    signature = (
        tf.TensorSpec((*shape, 1), tf.float32),
        tf.TensorSpec(shape, tf.int32),
    )
    return tf.data.Dataset.from_generator(gen, output_signature=signature)
