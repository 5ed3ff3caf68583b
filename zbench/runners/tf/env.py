"""TensorFlow process set-up: which devices it may use, numeric precision, distribution strategy.

Everything here must run before the first op touches a device (TensorFlow fixes its device list and
its memory allocator on first use), so :func:`prepare` is the first thing a tf runner calls.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

# Quiet TensorFlow's C++ INFO/WARNING lines unless the user chose a level. They go to stderr (the job
# log), never to the events channel, but a benchmark log full of them hides the useful lines.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf

from zbench.contract.config import RunConfig

PRECISION_DETAIL = {
    "fp32": "strict FP32: TF32 off (tf.config.experimental.enable_tensor_float_32_execution(False))",
    "tf32": "TF32 on for FP32 matmuls and convolutions (TensorFlow's default on Ampere and newer)",
    "fp16": "Keras mixed_float16 policy (FP16 compute, FP32 variables), dynamic loss scaling; "
    "TF32 off for the ops left in FP32",
    "bf16": "Keras mixed_bfloat16 policy (BF16 compute, FP32 variables), no loss scaling; "
    "TF32 off for the ops left in FP32",
}


@dataclass(frozen=True)
class Devices:
    """What this process runs on: ``kind`` is "gpu" or "cpu"; ``names`` the logical devices the
    strategy replicates over; ``gpu_names`` the human names of the physical GPUs in use."""

    kind: str
    names: tuple[str, ...]
    gpu_names: tuple[str, ...]
    multi_worker: bool

    @property
    def replicas_here(self) -> int:
        return len(self.names)


class DeviceError(RuntimeError):
    """The job asked for more devices than this process can see (reported as a config error)."""


class NoGpuError(RuntimeError):
    """No GPU is visible to TensorFlow (reported as ``unavailable``)."""


def select_devices(device: str, gpus: int, cpu_replicas: int = 1) -> Devices:
    """Make exactly the job's devices visible and turn on memory growth.

    CUDA_VISIBLE_DEVICES (set by the supervisor) already narrows the GPUs; on top of that only the
    first ``gpus`` are made visible, because TensorFlow otherwise maps every GPU it sees and reserves
    most of their memory. ``device == "cpu"`` hides every GPU. ``cpu_replicas`` > 1 splits the CPU into
    logical devices so several-replica code paths can be exercised without GPUs (tests).
    """
    physical = tf.config.list_physical_devices("GPU")
    multi_worker = bool(os.environ.get("TF_CONFIG"))
    if device == "cpu" or not physical:
        if device != "cpu":
            raise NoGpuError(
                f"no GPU is visible to TensorFlow {tf.__version__} (a CUDA build comes with "
                "pip install 'zbench[tf]'); use --device cpu"
            )
        tf.config.set_visible_devices([], "GPU")
        cpus = tf.config.list_physical_devices("CPU")
        if cpu_replicas > 1:
            tf.config.set_logical_device_configuration(
                cpus[0], [tf.config.LogicalDeviceConfiguration()] * cpu_replicas
            )
        names = tuple(d.name for d in tf.config.list_logical_devices("CPU"))[: max(1, cpu_replicas)]
        return Devices("cpu", names, (), multi_worker)
    if gpus > len(physical):
        raise DeviceError(f"--gpus asks for {gpus} GPUs, {len(physical)} visible")
    chosen = physical[:gpus]
    tf.config.set_visible_devices(chosen, "GPU")
    for gpu in chosen:
        tf.config.experimental.set_memory_growth(gpu, True)
    names = tuple(d.name for d in tf.config.list_logical_devices("GPU"))
    gpu_names = tuple(
        str(tf.config.experimental.get_device_details(g).get("device_name", g.name)) for g in chosen
    )
    return Devices("gpu", names, gpu_names, multi_worker)


def set_precision(precision: str) -> str:
    """Apply one of fp32 / tf32 / fp16 / bf16 process-wide; returns the detail line for results."""
    import keras

    tf.config.experimental.enable_tensor_float_32_execution(precision == "tf32")
    policy = {"fp16": "mixed_float16", "bf16": "mixed_bfloat16"}.get(precision, "float32")
    keras.mixed_precision.set_global_policy(policy)
    return PRECISION_DETAIL[precision]


def speed_settings(cfg: RunConfig, data: str, devices: Devices) -> dict[str, Any]:
    """Every switch that changes speed, as read back (the ``settings`` of the start and result
    events, the same keys as the PyTorch runner's). TensorFlow's expert defaults are already on:
    cuDNN autotuning (``TF_CUDNN_USE_AUTOTUNE``, on unless set to 0) and NHWC; XLA is ``--xla``."""
    autotune = os.environ.get("TF_CUDNN_USE_AUTOTUNE", "1").lower() not in ("0", "false")
    try:
        deterministic = bool(tf.config.experimental.is_op_determinism_enabled())
    except AttributeError:  # older TensorFlow
        deterministic = os.environ.get("TF_DETERMINISTIC_OPS", "0") not in ("0", "false")
    tf32 = bool(tf.config.experimental.tensor_float_32_execution_enabled())
    return {
        "autotune": autotune,
        "autotune_note": "TF_CUDNN_USE_AUTOTUNE " + ("on (default)" if autotune else "off"),
        "tf32_matmul": tf32,  # one switch in TensorFlow for matmuls and convolutions
        "tf32_cudnn": tf32,
        "deterministic": deterministic,
        "memory_format": "channels_last",
        "compile": "xla" if cfg.xla else None,
        "data": data,
        "optimizer": "SGD" if cfg.mode == "train" else None,
        "device": "cuda" if devices.kind == "gpu" else "cpu",
        # The PyTorch runner's --preset max switches, under the same keys: XLA is TensorFlow's
        # compiler (it fuses into clusters; there is no separate CUDA-graph step), no batch search,
        # the compile cache is XLA's own, gradients are all-reduced by the strategy in FP32.
        "graphs": "off",
        "graphs_note": "off: a PyTorch option",
        "compile_mode": "jit_compile=True" if cfg.xla else None,
        "compile_cache": None,
        "ddp": None,
        "grad_compression": None,
        "batch_search": None,
        "freezing": False,
        "inductor": None,
    }


def make_strategy(devices: Devices) -> tf.distribute.Strategy:
    """One replica: a OneDeviceStrategy (same code path, no copies). Several local devices:
    MirroredStrategy (NCCL all-reduce on GPUs). TF_CONFIG set: MultiWorkerMirroredStrategy."""
    if devices.multi_worker:
        comm = tf.distribute.experimental.CommunicationImplementation.NCCL
        if devices.kind == "cpu":
            comm = tf.distribute.experimental.CommunicationImplementation.RING
        options = tf.distribute.experimental.CommunicationOptions(implementation=comm)
        return tf.distribute.MultiWorkerMirroredStrategy(communication_options=options)
    if len(devices.names) == 1:
        return tf.distribute.OneDeviceStrategy(devices.names[0])
    cross = tf.distribute.NcclAllReduce() if devices.kind == "gpu" else None
    return tf.distribute.MirroredStrategy(list(devices.names), cross_device_ops=cross)


def environment(devices: Devices) -> dict[str, Any]:
    """Versions and devices for the ``start`` event."""
    import keras

    build = dict(tf.sysconfig.get_build_info())
    tf_config = os.environ.get("TF_CONFIG")
    task = json.loads(tf_config).get("task") if tf_config else None
    return {
        "framework": "tf",
        "tensorflow": tf.__version__,
        "keras": keras.__version__,
        "cuda_build": bool(build.get("is_cuda_build")),
        "cuda": build.get("cuda_version"),
        "cudnn": build.get("cudnn_version"),
        "device": devices.kind,
        "devices": list(devices.names),
        "gpu_names": list(devices.gpu_names),
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "tf_config_task": task,
    }


def peak_memory_bytes(devices: Devices) -> int | None:
    """Largest peak allocator use over the GPUs in use, or None where TensorFlow does not track it."""
    if devices.kind != "gpu":
        return None
    peaks = []
    for name in devices.names:
        short = "GPU:" + name.rsplit(":", 1)[-1]  # "/device:GPU:1" -> "GPU:1"
        try:
            peaks.append(int(tf.config.experimental.get_memory_info(short)["peak"]))
        except (ValueError, tf.errors.OpError):
            return None
    return max(peaks) if peaks else None
