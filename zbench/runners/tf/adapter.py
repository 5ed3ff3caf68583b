"""TensorFlow under the harness: devices and strategy, precision and the speed switches, model,
optimizer and tf.data input, the device sync (fetching the step's value), peak memory, OOM."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, ClassVar

from zbench.contract.config import RunConfig
from zbench.contract.protocol import EventWriter
from zbench.runners.harness import Adapter, BadInput, Prepared, Unavailable, dataset_message

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf

from zbench.runners.tf import env
from zbench.runners.tf.data import Batches, make_batches
from zbench.runners.tf.steps import make_infer_step, make_optimizer, make_train_step
from zbench.runners.tf.workloads import WORKLOADS


class TfAdapter(Adapter):
    """The harness's TensorFlow adapter: devices, strategy, precision, data, model, train step."""

    framework: ClassVar[str] = "tf"

    def __init__(self) -> None:
        self.devices: env.Devices | None = None
        self.strategy: tf.distribute.Strategy | None = None
        self.batches: Batches | None = None

    def prepare(self, cfg: RunConfig) -> Prepared:
        assert cfg.precision and cfg.batch_size
        try:
            # On the CPU, --gpus N splits it into N logical devices: the several-replica path.
            self.devices = env.select_devices(cfg.device, cfg.gpus, cpu_replicas=cfg.gpus)
        except env.NoGpuError as exc:
            raise Unavailable(str(exc)) from None
        except env.DeviceError as exc:
            raise BadInput(str(exc)) from None
        precision_detail = env.set_precision(cfg.precision)
        self.strategy = env.make_strategy(self.devices)
        replicas = int(self.strategy.num_replicas_in_sync)
        # Indexes a real dataset now, so bad input is reported before a model is built.
        self.batches = make_batches(self.strategy, WORKLOADS[cfg.workload], cfg)
        tf32 = cfg.precision == "tf32"
        return Prepared(
            data=self.batches.label,
            num_classes=self.batches.num_classes,
            precision_detail=precision_detail,
            tf32={"matmul_allow_tf32": tf32, "cudnn_allow_tf32": tf32},
            memory_format="channels_last",
            gpus=replicas,
            # One process drives every local replica: one step is the whole job's batch.
            process_batch=cfg.batch_size * replicas,
            settings=env.speed_settings(cfg, self.batches.label, self.devices),
            environment=env.environment(self.devices),
            start_extra={"strategy": type(self.strategy).__name__},
        )

    def build(self, cfg: RunConfig) -> Callable[[], Any]:
        assert self.strategy is not None and self.batches is not None
        assert cfg.precision and cfg.image_size
        workload = WORKLOADS[cfg.workload]
        xla = bool(cfg.xla)
        with self.strategy.scope():
            model = workload.build(self.batches.num_classes, cfg.image_size, xla=xla)
            if cfg.mode == "infer":
                step = make_infer_step(self.strategy, workload, model, xla)
            else:
                optimizer = make_optimizer(cfg.precision)
                step = make_train_step(self.strategy, workload, model, optimizer, xla)
        next_batch = self.batches.next
        return lambda: step(next_batch())

    def compile_steps(self, cfg: RunConfig) -> int:
        return 1  # the first step traces the function (and XLA compiles it)

    def sync(self, last: Any) -> None:
        # Copying the step's scalar to the host waits for every kernel the step enqueued.
        # TensorFlow has no per-step device timer without a sync that would change the rate.
        if last is not None:
            last.numpy()

    def peak_memory(self) -> tuple[int | None, int | None]:
        # TensorFlow's allocator reports its peak in use (= torch's "allocated"); with memory
        # growth it has no separate reserved figure.
        assert self.devices is not None
        return env.peak_memory_bytes(self.devices), None

    def is_oom(self, exc: BaseException) -> bool:
        return isinstance(exc, tf.errors.ResourceExhaustedError)

    def bad_input(self, exc: BaseException) -> str | None:
        # A dataset error raised inside tf.data comes back as an op error whose message starts
        # with a {{function_node ...IteratorGetNext...}} prefix and holds the Python traceback.
        if isinstance(exc, tf.errors.OpError) and "DatasetError" in exc.message:
            return dataset_message(exc.message)
        return super().bad_input(exc)


def run(config: RunConfig, writer: EventWriter) -> int:
    """The tf runner's entry: the harness with :class:`TfAdapter`."""
    from zbench.runners import harness

    return harness.run(TfAdapter(), config, writer)
