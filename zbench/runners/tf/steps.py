"""The compiled training and inference steps, replicated by a tf.distribute strategy."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import keras
import tensorflow as tf

from zbench.runners.tf.workloads import Workload, infer_fn, loss_fn

Step = Callable[[Any], tf.Tensor]


def make_optimizer(precision: str) -> keras.optimizers.Optimizer:
    """SGD (lr 1e-4, momentum 0.9), as the PyTorch side; FP16 wraps it in dynamic loss scaling."""
    optimizer: keras.optimizers.Optimizer = keras.optimizers.SGD(learning_rate=1e-4, momentum=0.9)
    if precision == "fp16":
        optimizer = keras.optimizers.LossScaleOptimizer(optimizer)
    return optimizer


def make_train_step(
    strategy: tf.distribute.Strategy,
    workload: Workload,
    model: keras.Model,
    optimizer: keras.optimizers.Optimizer,
    xla: bool,
) -> Step:
    """One optimizer step over a distributed batch; returns the mean loss over the replicas.

    With ``xla`` the forward and backward pass are compiled by XLA (jit_compile); the optimizer
    update, which all-reduces gradients across replicas, stays outside the XLA cluster so that the
    same step works with one replica and with MirroredStrategy.
    """
    replicas = strategy.num_replicas_in_sync
    scaled = isinstance(optimizer, keras.optimizers.LossScaleOptimizer)
    variables = model.trainable_variables
    with strategy.scope():
        optimizer.build(variables)

    def grads_fn(batch: Any) -> tuple[tf.Tensor, list[tf.Tensor]]:
        with tf.GradientTape() as tape:
            loss = loss_fn(workload, model, batch, training=True)
            # Gradients are summed over replicas: each replica contributes its share of the mean.
            objective = loss / replicas
            if scaled:
                objective = optimizer.scale_loss(objective)
        return loss, tape.gradient(objective, variables)

    if xla and workload.kind != "detection":  # the detector compiles its own dense parts
        grads_fn = tf.function(grads_fn, jit_compile=True)

    def replica_step(batch: Any) -> tf.Tensor:
        loss, grads = grads_fn(batch)
        optimizer.apply(grads, variables)
        return loss

    @tf.function
    def step(batch: Any) -> tf.Tensor:
        losses = strategy.run(replica_step, args=(batch,))
        return strategy.reduce(tf.distribute.ReduceOp.MEAN, losses, axis=None)

    return step


def make_infer_step(
    strategy: tf.distribute.Strategy, workload: Workload, model: keras.Model, xla: bool
) -> Step:
    """One forward pass in inference mode over a distributed batch."""

    def replica_step(batch: Any) -> tf.Tensor:
        return infer_fn(workload, model, batch)

    if xla and workload.kind != "detection":
        replica_step = tf.function(replica_step, jit_compile=True)

    @tf.function
    def step(batch: Any) -> tf.Tensor:
        out = strategy.run(replica_step, args=(batch,))
        return strategy.reduce(tf.distribute.ReduceOp.SUM, out, axis=None)

    return step
