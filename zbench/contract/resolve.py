"""One resolve step for every framework: the review's defaults and each framework's `--preset max`
table. Framework-free, so it is tested without running a model."""

from __future__ import annotations

import dataclasses
from typing import Any

from zbench.contract.config import WORKLOADS, RunConfig

DEFAULT_WARMUP = 10
DEFAULT_STEPS = 50
DEFAULT_REPEATS = 3  # measured windows: the median is reported, with the spread
IMAGE_SIZE = {w.name: w.image_size for w in WORKLOADS.values()}
NUM_CLASSES = {w.name: w.num_classes for w in WORKLOADS.values()}
MAX_BATCH = {w.name: w.max_batch for w in WORKLOADS.values()}


@dataclasses.dataclass(frozen=True)
class MaxPreset:
    """What `--preset max` turns on for one framework (each only where the user left it off)."""

    precision: str  # the option's value
    precision_note: str
    channels_last: bool  # PyTorch only: TensorFlow runs NHWC already
    compile_flag: str  # the RunConfig field that compiles: "compile" or "xla"
    compile_note: str


PRESETS_MAX: dict[str, MaxPreset] = {
    "torch": MaxPreset("bf16", "bf16 autocast", True, "compile", "torch.compile (inductor)"),
    "tf": MaxPreset("bf16", "bf16 (Keras mixed_bfloat16)", False, "xla", "jit_compile"),
}


@dataclasses.dataclass(frozen=True)
class Resolved:
    config: RunConfig  # every None filled in
    choices: dict[str, str]  # what a preset chose and why, for the start event


def resolve(cfg: RunConfig) -> Resolved:
    """Every ``None`` of ``cfg`` filled in from the workload table and the preset."""
    info = WORKLOADS[cfg.workload]
    choices: dict[str, str] = {}
    changes: dict[str, Any] = {}
    precision, batch = cfg.precision, cfg.batch_size
    if cfg.preset == "max":
        table = PRESETS_MAX[cfg.framework]
        if precision is None:
            precision = table.precision
            choices["precision"] = table.precision_note
        if batch is None:
            batch = info.max_batch
            choices["batch_size"] = f"{batch} per GPU"
        if table.channels_last and not cfg.channels_last:
            changes["channels_last"] = True
            choices["channels_last"] = "on"
        if not info.compile_in_max:
            choices[table.compile_flag] = info.compile_note
        elif not getattr(cfg, table.compile_flag):
            changes[table.compile_flag] = True
            choices[table.compile_flag] = table.compile_note
    resolved = dataclasses.replace(
        cfg,
        precision=precision or "fp32",
        batch_size=batch or info.default_batch,
        steps=cfg.steps or DEFAULT_STEPS,
        warmup=DEFAULT_WARMUP if cfg.warmup is None else cfg.warmup,
        image_size=cfg.image_size or info.image_size,
        repeat=cfg.repeat or DEFAULT_REPEATS,
        **changes,
    )
    return Resolved(resolved, choices)


def check_shape(cfg: RunConfig) -> str | None:
    """A one-line reason when the image size cannot go through the model, else None."""
    info = WORKLOADS[cfg.workload]
    size = cfg.image_size or info.image_size
    multiple, least = info.size_multiple, info.min_size
    if multiple > 1 and (size % multiple or size < least):
        extra = f" and at least {least}" if least > multiple else ""
        return f"{cfg.workload} needs --image-size a multiple of {multiple}{extra}, got {size}"
    if size < least:
        return f"{cfg.workload} needs --image-size {least} or more, got {size}"
    return None


def workload_info(workload: str) -> dict[str, Any]:
    return dataclasses.asdict(WORKLOADS[workload])
