"""The TensorFlow runner: ``python -m zbench.runners <workload> --framework tf ...`` ends up here.

Defaults, shape rules and the result record are the PyTorch runner's (``runners.resolve`` is
framework-free and shared), so a torch row and a tf row of the same config compare directly.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import traceback
from typing import Any

from zbench.runners.config import WORKLOADS as WORKLOAD_INFO
from zbench.runners.config import RunConfig
from zbench.runners.protocol import EventWriter
from zbench.runners.resolve import (
    DEFAULT_STEPS,
    DEFAULT_WARMUP,
    IMAGE_SIZE,
    MAX_BATCH,
    check_shape,
    workload_info,
)

# XLA compiles Faster R-CNN's convolutional parts only (NMS and sampling have no XLA kernels); the
# gain is small and the compile long, so `--preset max` leaves it off there (as torch.compile).
NO_XLA_IN_MAX = {"fasterrcnn"}


def resolve(cfg: RunConfig) -> tuple[RunConfig, dict[str, str]]:
    """Every ``None`` filled in, and what ``--preset max`` chose (for the ``start`` event)."""
    choices: dict[str, str] = {}
    precision, batch, xla = cfg.precision, cfg.batch_size, cfg.xla
    if cfg.preset == "max":
        if precision is None:
            precision = "bf16"
            choices["precision"] = "bf16 (Keras mixed_bfloat16)"
        if batch is None:
            batch = MAX_BATCH[cfg.workload]
            choices["batch_size"] = f"{batch} per GPU"
        if not xla and cfg.workload not in NO_XLA_IN_MAX:
            xla = True
            choices["xla"] = "jit_compile"
    resolved = dataclasses.replace(
        cfg,
        precision=precision or "fp32",
        batch_size=batch or WORKLOAD_INFO[cfg.workload].default_batch,
        steps=cfg.steps or DEFAULT_STEPS,
        warmup=DEFAULT_WARMUP if cfg.warmup is None else cfg.warmup,
        image_size=cfg.image_size or IMAGE_SIZE[cfg.workload],
        xla=xla,
    )
    return resolved, choices


def run(config: RunConfig, writer: EventWriter) -> int:
    """Run one job; every outcome is an event. Returns the exit status (0, 1 failed, 2 bad input)."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    try:
        import tensorflow as tf
    except ImportError:
        message = "the tf runners need tensorflow: pip install 'zbench[tf]' (or 'zbench[tf-cpu]')"
        writer.error("unavailable", message)
        return 1
    from zbench.runners.datasets import DatasetError
    from zbench.runners.tf.env import DeviceError, NoGpuError

    reason = check_shape(config)
    if reason:
        return _bad_input(writer, reason)
    cfg, choices = resolve(config)
    try:
        return _run(cfg, choices, writer)
    except NoGpuError as exc:
        writer.error("unavailable", str(exc))
        return 1
    except (DeviceError, DatasetError) as exc:
        return _bad_input(writer, str(exc))
    except tf.errors.ResourceExhaustedError:
        batch = cfg.batch_size or 1
        hint = (
            f"try --batch-size {max(1, batch // 2)}" if batch > 1 else "use a smaller --image-size"
        )
        writer.error(
            "oom",
            f"out of device memory at batch size {batch} per GPU; {hint}",
            batch_size=batch,
            hint=hint,
        )
        return 1
    except KeyboardInterrupt:
        writer.error("interrupted", "stopped by a signal before the run finished")
        return 1
    except Exception as exc:
        traceback.print_exc()
        writer.error("crash", f"{type(exc).__name__}: {exc}".splitlines()[0][:500])
        return 1


def _bad_input(writer: EventWriter, message: str) -> int:
    print(f"zbench.runners: {message}", file=sys.stderr)
    writer.error("config", message)
    return 2


def _run(cfg: RunConfig, choices: dict[str, str], writer: EventWriter) -> int:
    from zbench.runners.measure import combine_repeats
    from zbench.runners.tf import env
    from zbench.runners.tf.data import make_batches
    from zbench.runners.tf.loop import measure
    from zbench.runners.tf.steps import make_infer_step, make_optimizer, make_train_step
    from zbench.runners.tf.workloads import WORKLOADS

    assert cfg.precision and cfg.batch_size and cfg.image_size and cfg.steps
    assert cfg.warmup is not None
    # On the CPU, --gpus N splits it into N logical devices: the several-replica path, testable.
    devices = env.select_devices(cfg.device, cfg.gpus, cpu_replicas=cfg.gpus)
    precision_detail = env.set_precision(cfg.precision)
    strategy = env.make_strategy(devices)
    replicas = strategy.num_replicas_in_sync
    global_batch = cfg.batch_size * replicas
    workload = WORKLOADS[cfg.workload]
    info = WORKLOAD_INFO[cfg.workload]
    if cfg.channels_last or cfg.compile:
        print("note: --channels-last and --compile are PyTorch options: TensorFlow runs NHWC, "
              "use --xla to compile", file=sys.stderr)  # fmt: skip
    batches = make_batches(strategy, workload, cfg)
    writer.emit(
        "start",
        framework="tf",
        workload=cfg.workload,
        workload_info=workload_info(cfg.workload),
        config=cfg.as_dict(),
        preset_choices=choices,
        data=batches.label,
        precision_detail=precision_detail,
        tf32=cfg.precision == "tf32",
        memory_format="channels_last",
        num_classes=batches.num_classes,
        gpus=replicas,
        global_batch=global_batch,
        unit=info.unit,
        strategy=type(strategy).__name__,
        environment=env.environment(devices),
    )
    writer.phase("setup")
    with strategy.scope():
        model = workload.build(batches.num_classes, cfg.image_size, xla=cfg.xla)
        if cfg.mode == "infer":
            step = make_infer_step(strategy, workload, model, cfg.xla)
        else:
            optimizer = make_optimizer(cfg.precision)
            step = make_train_step(strategy, workload, model, optimizer, cfg.xla)
    measured = measure(
        step,
        batches.next,
        steps=cfg.steps,
        warmup=cfg.warmup,
        repeat=cfg.repeat,
        samples_per_step=global_batch,
        writer=writer,
    )
    result: dict[str, Any] = combine_repeats(measured.windows)
    peak = env.peak_memory_bytes(devices)
    result.update(
        workload=cfg.workload,
        framework="tf",
        mode=cfg.mode,
        unit=info.unit,
        batch_size=cfg.batch_size,
        global_batch=global_batch,
        gpus=replicas,
        samples_per_s_per_gpu=result["samples_per_s"] / replicas,
        # One process drives every local replica; the rate is already the whole job's.
        samples_per_s_rank0=result["samples_per_s"],
        scaling={"mode": "weak", "world_size": replicas, "per_gpu_batch": cfg.batch_size},
        compile_s=measured.compile_s,
        warmup_steps=cfg.warmup,
        precision=cfg.precision,
        precision_detail=precision_detail,
        data=batches.label,
        xla=cfg.xla,
        image_size=cfg.image_size,
        peak_mem_bytes=peak,
        # TensorFlow's allocator reports its peak in use (= torch's "allocated"); with memory
        # growth it has no separate reserved figure.
        peak_mem_allocated_bytes=peak,
        peak_mem_reserved_bytes=None,
    )
    writer.emit("result", **result)
    writer.phase("done")
    return 0
