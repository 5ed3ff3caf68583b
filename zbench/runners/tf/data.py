"""Where a tf runner's batches come from: synthetic on the device, synthetic through tf.data on the
host, or a real dataset (``zbench.runners.tf.datasets``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorflow as tf

from zbench.runners.tf.workloads import Workload, synthetic_numpy

NextBatch = Callable[[], Any]

# Distinct samples behind the host-side synthetic stream (it repeats them): enough that a batch is
# assembled from several, few enough to stay small in memory.
HOST_SAMPLES_PER_REPLICA_BATCH = 2


def synthetic_device(
    strategy: tf.distribute.Strategy,
    workload: Workload,
    per_replica: int,
    image_size: int,
    num_classes: int,
    seed: int,
) -> NextBatch:
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
) -> NextBatch:
    """Random samples held as numpy arrays on the host and streamed through tf.data (batched,
    prefetched, copied to the devices every step): exercises the input path without decoding."""
    global_batch = per_replica * strategy.num_replicas_in_sync
    count = global_batch * HOST_SAMPLES_PER_REPLICA_BATCH
    x, y = synthetic_numpy(workload, count, image_size, num_classes, seed)
    ds = (
        tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(global_batch, drop_remainder=True)
    )
    return distribute(strategy, ds.prefetch(tf.data.AUTOTUNE))


def distribute(strategy: tf.distribute.Strategy, ds: tf.data.Dataset) -> NextBatch:
    """Split a globally batched dataset over the replicas; returns the iterator's ``next``."""
    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.DATA
    iterator = iter(strategy.experimental_distribute_dataset(ds.with_options(options)))
    return lambda: next(iterator)
