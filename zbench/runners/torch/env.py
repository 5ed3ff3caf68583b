"""Precision settings and the environment a result was measured in."""

from __future__ import annotations

import os
import platform
import socket
from typing import Any

import torch

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


def tf32_state() -> dict[str, bool]:
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
