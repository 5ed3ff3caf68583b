"""The TensorFlow runner: ``python -m zbench.runners <workload> --framework tf ...`` ends up here."""

from __future__ import annotations

import os
import sys
import traceback
from dataclasses import dataclass, replace
from typing import Any

from zbench.runners.config import WORKLOADS as WORKLOAD_INFO
from zbench.runners.config import RunConfig
from zbench.runners.protocol import EventWriter

# Steps of the review preset (and of `max`): long enough for a stable rate on a GPU.
DEFAULT_STEPS = 50
DEFAULT_WARMUP = 10


@dataclass(frozen=True)
class Resolved:
    """The options after defaults: what actually runs, reported in the ``start`` event."""

    config: RunConfig
    precision: str
    batch_size: int
    steps: int
    warmup: int
    image_size: int
    xla: bool


def resolve(config: RunConfig) -> Resolved:
    from zbench.runners.tf.workloads import WORKLOADS

    workload = WORKLOADS[config.workload]
    fast = config.preset == "max"
    precision = config.precision or ("bf16" if fast else "fp32")
    batch = config.batch_size or WORKLOAD_INFO[config.workload].default_batch
    image_size = config.image_size or workload.default_image_size
    xla = config.xla or fast
    steps = config.steps or DEFAULT_STEPS
    warmup = DEFAULT_WARMUP if config.warmup is None else config.warmup
    full = replace(
        config,
        precision=precision,
        batch_size=batch,
        steps=steps,
        warmup=warmup,
        image_size=image_size,
        xla=xla,
    )
    return Resolved(full, precision, batch, steps, warmup, image_size, xla)


def run(config: RunConfig, writer: EventWriter) -> int:
    """Run one job; every outcome is an event. Returns the exit status (0, 1 failed, 2 bad input)."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    try:
        import tensorflow as tf
    except ImportError:
        writer.error(
            "unavailable",
            "TensorFlow is not installed: pip install 'zbench[tf]' (NVIDIA GPUs) "
            "or 'zbench[tf-cpu]'",
        )
        return 1
    try:  # TEMP until datasets lands
        from zbench.runners.datasets import DatasetError
    except ImportError:
        DatasetError = ValueError
    from zbench.runners.tf.env import DeviceError

    resolved = resolve(config)
    try:
        return _run(resolved, writer)
    except (DeviceError, DatasetError) as exc:
        writer.error("config", str(exc))
        return 2
    except tf.errors.ResourceExhaustedError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        writer.error(
            "oom",
            f"out of device memory at batch {resolved.batch_size} per GPU: {first[:300]}",
            batch_size=resolved.batch_size,
            hint="lower --batch-size, or use --precision bf16/fp16",
        )
        return 1
    except KeyboardInterrupt:
        writer.error("interrupted", "interrupted")
        return 1
    except Exception as exc:
        traceback.print_exc(file=sys.stderr)
        writer.error("crash", f"{type(exc).__name__}: {str(exc).strip()[:500]}")
        return 1


def _run(r: Resolved, writer: EventWriter) -> int:
    from zbench.runners.measure import combine_repeats
    from zbench.runners.tf import env
    from zbench.runners.tf.loop import measure
    from zbench.runners.tf.workloads import WORKLOADS

    cfg = r.config
    cpu_replicas = cfg.gpus if cfg.device == "cpu" else 1
    devices = env.select_devices(cfg.device, cfg.gpus, cpu_replicas=cpu_replicas)
    precision_detail = env.set_precision(r.precision)
    strategy = env.make_strategy(devices)
    replicas = strategy.num_replicas_in_sync
    global_batch = r.batch_size * replicas
    workload = WORKLOADS[cfg.workload]
    writer.emit(
        "start",
        config=cfg.as_dict(),
        environment=env.environment(devices),
        precision_detail=precision_detail,
        global_batch=global_batch,
        replicas=replicas,
        strategy=type(strategy).__name__,
    )
    if cfg.channels_last or cfg.compile:
        print(
            "note: --channels-last and --compile are PyTorch options; TensorFlow runs NHWC and "
            "compiles with --xla",
            file=sys.stderr,
        )
    writer.phase("setup")
    source = _data_source(cfg)
    num_classes, next_batch = _make_data(r, strategy, source)
    with strategy.scope():
        model = workload.build(num_classes, r.image_size, xla=r.xla)
        step = _make_step(r, strategy, workload, model)
    measured = measure(
        step,
        next_batch,
        steps=r.steps,
        warmup=r.warmup,
        repeat=cfg.repeat,
        samples_per_step=global_batch,
        writer=writer,
    )
    result: dict[str, Any] = combine_repeats(measured.windows)
    result.update(
        workload=cfg.workload,
        framework="tf",
        mode=cfg.mode,
        precision=r.precision,
        precision_detail=precision_detail,
        batch_size=r.batch_size,
        global_batch=global_batch,
        gpus=replicas if devices.kind == "gpu" else 0,
        replicas=replicas,
        device=devices.kind,
        unit=WORKLOAD_INFO[cfg.workload].unit,
        data=source,
        image_size=r.image_size,
        xla=r.xla,
        peak_mem_bytes=env.peak_memory_bytes(devices),
        compile_s=measured.compile_s,
    )
    writer.phase("done")
    writer.emit("result", **result)
    return 0


def _data_source(cfg: RunConfig) -> str:
    if cfg.data:
        return "real"
    return cfg.data_source


def _make_data(r: Resolved, strategy: Any, source: str) -> tuple[int, Any]:
    from zbench.runners.tf import data
    from zbench.runners.tf.workloads import WORKLOADS

    cfg = r.config
    workload = WORKLOADS[cfg.workload]
    if cfg.data:
        from zbench.runners.tf.datasets import real_dataset

        return real_dataset(cfg, workload, strategy, r.batch_size, r.image_size)
    make = data.synthetic_device if source == "synthetic-device" else data.synthetic_host
    classes = workload.default_classes
    return classes, make(strategy, workload, r.batch_size, r.image_size, classes, cfg.seed)


def _make_step(r: Resolved, strategy: Any, workload: Any, model: Any) -> Any:
    from zbench.runners.tf import steps

    if r.config.mode == "infer":
        return steps.make_infer_step(strategy, workload, model, r.xla)
    optimizer = steps.make_optimizer(r.precision)
    return steps.make_train_step(strategy, workload, model, optimizer, r.xla)
