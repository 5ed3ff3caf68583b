"""Defaults: the review's settings, and what ``--preset max`` picks. Framework-free, so it is tested
without running a model and the tf runners may share the rules."""

from __future__ import annotations

import dataclasses
from typing import Any

from zbench.runners.config import WORKLOADS, RunConfig

DEFAULT_WARMUP = 10
DEFAULT_STEPS = 50
IMAGE_SIZE = {"resnet50": 224, "vgg16": 224, "fasterrcnn": 800, "unet2d": 256, "unet3d": 128}
NUM_CLASSES = {"resnet50": 1000, "vgg16": 1000, "fasterrcnn": 21, "unet2d": 3, "unet3d": 3}
# --preset max on one H200-class GPU: a larger batch only where it raised throughput (ResNet-50's
# and the U-Nets' kernels are still launch-bound at the review's batch in bf16).
MAX_BATCH = {"resnet50": 256, "vgg16": 128, "fasterrcnn": 16, "unet2d": 64, "unet3d": 4}
# torch.compile of torchvision's detection models breaks the graph at every data-dependent step
# (anchor matching, NMS), compiles for minutes and gains nothing: not part of max for fasterrcnn.
NO_COMPILE = {"fasterrcnn"}


@dataclasses.dataclass(frozen=True)
class Resolved:
    config: RunConfig  # every None filled in
    choices: dict[str, str]  # what a preset chose and why, for the start event


def resolve(cfg: RunConfig) -> Resolved:
    info = WORKLOADS[cfg.workload]
    choices: dict[str, str] = {}
    precision, batch, channels_last, compile_ = (
        cfg.precision,
        cfg.batch_size,
        cfg.channels_last,
        cfg.compile,
    )
    if cfg.preset == "max":
        if precision is None:
            precision = "bf16"
            choices["precision"] = "bf16 autocast"
        if batch is None:
            batch = MAX_BATCH[cfg.workload]
            choices["batch_size"] = f"{batch} per GPU"
        if not channels_last:
            channels_last = True
            choices["channels_last"] = "on"
        if not compile_ and cfg.workload not in NO_COMPILE:
            compile_ = True
            choices["compile"] = "torch.compile (inductor)"
        elif cfg.workload in NO_COMPILE:
            choices["compile"] = "off: detection graphs break at data-dependent steps"
    resolved = dataclasses.replace(
        cfg,
        precision=precision or "fp32",
        batch_size=batch or info.default_batch,
        steps=cfg.steps or DEFAULT_STEPS,
        warmup=DEFAULT_WARMUP if cfg.warmup is None else cfg.warmup,
        image_size=cfg.image_size or IMAGE_SIZE[cfg.workload],
        channels_last=channels_last,
        compile=compile_,
    )
    return Resolved(resolved, choices)


def check_shape(cfg: RunConfig) -> str | None:
    """A one-line reason when the image size cannot go through the model, else None."""
    size = cfg.image_size or IMAGE_SIZE[cfg.workload]
    if cfg.workload == "unet2d" and size % 16:
        return f"unet2d needs --image-size a multiple of 16, got {size}"
    if cfg.workload == "unet3d" and (size % 32 or size < 64):
        return f"unet3d needs --image-size a multiple of 32 and at least 64, got {size}"
    if cfg.workload in ("resnet50", "vgg16") and size < 32:
        return f"{cfg.workload} needs --image-size 32 or more, got {size}"
    return None


def workload_info(workload: str) -> dict[str, Any]:
    return dataclasses.asdict(WORKLOADS[workload])
