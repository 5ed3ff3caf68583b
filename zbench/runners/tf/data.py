"""Where a tf runner's batches come from: synthetic on the device (default), synthetic streamed
through tf.data from host memory, or a real dataset (``realdata``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import tensorflow as tf

from zbench.contract.config import RunConfig
from zbench.runners.tf.workloads import Workload, synthetic_numpy

# Distinct samples behind the host-side synthetic stream, per global batch (it repeats them).
HOST_BATCHES = 2


@dataclass(frozen=True)
class Batches:
    """A batch source for the tf loop: ``next()`` gives a batch, ``label`` names its origin."""

    next: Callable[[], Any]
    label: str  # "synthetic-device", "synthetic-host", "real:<layout>"
    num_classes: int


def make_batches(strategy: tf.distribute.Strategy, workload: Workload, cfg: RunConfig) -> Batches:
    """The batch source ``cfg`` asks for: a real dataset, or synthetic on the device or the host."""
    assert cfg.batch_size and cfg.image_size
    if cfg.data:
        from zbench.runners.tf.realdata import real_dataset

        ds, layout, classes = real_dataset(workload, cfg, cfg.batch_size * _replicas(strategy))
        return Batches(distribute(strategy, ds), f"real:{layout}", classes)
    classes = workload.default_classes
    if cfg.data_source == "synthetic-host":
        return Batches(
            synthetic_host(strategy, workload, cfg.batch_size, cfg.image_size, classes, cfg.seed),
            "synthetic-host",
            classes,
        )
    return Batches(
        synthetic_device(strategy, workload, cfg.batch_size, cfg.image_size, classes, cfg.seed),
        "synthetic-device",
        classes,
    )


def _replicas(strategy: tf.distribute.Strategy) -> int:
    return int(strategy.num_replicas_in_sync)


def synthetic_device(
    strategy: tf.distribute.Strategy,
    workload: Workload,
    per_replica: int,
    image_size: int,
    num_classes: int,
    seed: int,
) -> Callable[[], Any]:
    """One random batch per replica, created once on that replica's device and reused every step
    (no host-to-device copy in the timed loop, as tf_cnn_benchmarks' synthetic data)."""
    devices = strategy.extended.worker_devices

    def value_fn(ctx: tf.distribute.InputContext) -> Any:
        replica = ctx.replica_id_in_sync_group
        x, y = synthetic_numpy(workload, per_replica, image_size, num_classes, seed + replica)
        with tf.device(devices[replica]):
            return tf.nest.map_structure(lambda a: tf.identity(tf.constant(a)), (x, y))

    batch = strategy.experimental_distribute_values_from_function(value_fn)
    return lambda: batch


def synthetic_host(
    strategy: tf.distribute.Strategy,
    workload: Workload,
    per_replica: int,
    image_size: int,
    num_classes: int,
    seed: int,
) -> Callable[[], Any]:
    """Random samples held in host memory and streamed through tf.data (batched, prefetched, copied
    to the devices every step): the input path without decoding."""
    global_batch = per_replica * _replicas(strategy)
    x, y = synthetic_numpy(workload, global_batch * HOST_BATCHES, image_size, num_classes, seed)
    ds = (
        tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(global_batch, drop_remainder=True)
    )
    return distribute(strategy, ds)


def distribute(strategy: tf.distribute.Strategy, ds: tf.data.Dataset) -> Callable[[], Any]:
    """Split a globally batched dataset over the replicas; returns the iterator's ``next``."""
    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.DATA
    ds = ds.prefetch(tf.data.AUTOTUNE).with_options(options)
    iterator = iter(strategy.experimental_distribute_dataset(ds))
    return lambda: next(iterator)
