"""Precision and speed settings, the optimizer, and the environment a result was measured in."""

from __future__ import annotations

import os
import platform
import socket
from collections.abc import Iterable
from typing import Any

import torch

from zbench.contract.config import RunConfig
from zbench.contract.workloads import WORKLOADS

AUTOCAST_DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}


def apply_precision(precision: str) -> str:
    """Set the TF32 switches for ``precision`` and return how it reads in results.

    PyTorch lets cuDNN convolutions use TF32 by default, so "fp32" must turn that off explicitly;
    fp16/bf16 autocast keep TF32 off for what stays in FP32 (the strict choice)."""
    tf32 = precision == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    return {
        "fp32": "fp32 (TF32 off)",
        "tf32": "tf32 (TF32 on for matmul and cuDNN)",
        "fp16": "fp16 autocast + GradScaler (TF32 off)",
        "bf16": "bf16 autocast (TF32 off)",
    }[precision]


def cudnn_autotune(cfg: RunConfig, data: str) -> tuple[bool, str]:
    """Whether cuDNN's autotuner (``torch.backends.cudnn.benchmark``) should be on, and why.

    It times the convolution algorithms once per input shape and keeps the fastest: a gain
    wherever shapes are fixed (synthetic data, resized or cropped real data). Faster R-CNN on real
    VOC images sees a new shape for almost every batch (the images keep their aspect ratio), and
    each new shape is tuned again, so it stays off there until benchmarks/runner_settings.py
    measures otherwise. ``ZBENCH_CUDNN_BENCHMARK=0|1`` overrides, for such measurements."""
    forced = os.environ.get("ZBENCH_CUDNN_BENCHMARK")
    if forced in ("0", "1"):
        return forced == "1", "set by ZBENCH_CUDNN_BENCHMARK"
    if WORKLOADS[cfg.workload].task == "detection" and data.startswith("real:"):
        return False, "off: real detection images vary in shape (retuned for each new shape)"
    return True, "on: fixed input shapes"


def make_optimizer(params: Iterable[torch.nn.Parameter], device_type: str) -> torch.optim.Optimizer:
    """SGD (lr 1e-4, momentum 0.9); on a GPU the fused kernel (one launch for every parameter)."""
    if device_type == "cuda":
        try:
            return torch.optim.SGD(params, lr=1e-4, momentum=0.9, fused=True)
        except (TypeError, RuntimeError):  # a torch without fused SGD: the foreach default
            pass
    return torch.optim.SGD(params, lr=1e-4, momentum=0.9)


def apply_speed_settings(cfg: RunConfig, data: str, device_type: str) -> dict[str, Any]:
    """Turn on what an expert turns on and return every switch that changes speed, as read back
    (the ``settings`` of the start and result events; docs/runner-protocol.md)."""
    autotune, why = cudnn_autotune(cfg, data)
    torch.backends.cudnn.benchmark = autotune
    fused = device_type == "cuda" and "fused" in torch.optim.SGD.__init__.__code__.co_varnames
    return {
        "autotune": bool(torch.backends.cudnn.benchmark),
        "autotune_note": f"cudnn.benchmark {why}",
        "tf32_matmul": bool(torch.backends.cuda.matmul.allow_tf32),
        "tf32_cudnn": bool(torch.backends.cudnn.allow_tf32),
        "deterministic": bool(
            torch.are_deterministic_algorithms_enabled() or torch.backends.cudnn.deterministic
        ),
        "memory_format": "channels_last" if cfg.channels_last else "contiguous",
        "compile": os.environ.get("ZBENCH_COMPILE_BACKEND", "inductor") if cfg.compile else None,
        "data": data,
        "optimizer": None if cfg.mode != "train" else "SGD fused" if fused else "SGD foreach",
        "device": device_type,
    }


def tf32_state() -> dict[str, bool]:
    """Whether TF32 is allowed now for matmuls and for cuDNN (recorded with the result)."""
    return {
        "matmul_allow_tf32": bool(torch.backends.cuda.matmul.allow_tf32),
        "cudnn_allow_tf32": bool(torch.backends.cudnn.allow_tf32),
    }


def _driver_version() -> str | None:
    # torch knows only the CUDA driver API level; the driver release comes from NVML (read once).
    try:
        import pynvml

        pynvml.nvmlInit()
        try:
            version = pynvml.nvmlSystemGetDriverVersion()
        finally:
            pynvml.nvmlShutdown()
        return version.decode() if isinstance(version, bytes) else str(version)
    except Exception:  # no NVML library, no driver: reported as unknown
        return None


def environment(device: str) -> dict[str, Any]:
    """The environment a result was measured in: versions, host, GPU names, CUDA_VISIBLE_DEVICES."""
    import torchvision

    env: dict[str, Any] = {
        "framework": "torch",
        "torch": torch.__version__,
        "torchvision": torchvision.__version__,
        "python": platform.python_version(),
        "hostname": socket.gethostname(),
        "cpu_count": os.cpu_count(),
        "cuda": torch.version.cuda,
        "cudnn": None,
        "nccl": None,
        "driver": None,
        "gpu_names": [],
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
    }
    if device == "cuda" and torch.cuda.is_available():
        env["cudnn"] = torch.backends.cudnn.version()
        try:
            nccl = torch.cuda.nccl.version()
            env["nccl"] = ".".join(map(str, nccl)) if isinstance(nccl, tuple) else str(nccl)
        except Exception:  # a build without NCCL
            env["nccl"] = None
        env["driver"] = _driver_version()
        env["gpu_names"] = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
        env["gpu_capability"] = [
            ".".join(map(str, torch.cuda.get_device_capability(i)))
            for i in range(torch.cuda.device_count())
        ]
    return env
