"""One resolve step for every framework: the review's defaults and each framework's `--preset max`
table. Framework-free, so it is tested without running a model."""

from __future__ import annotations

import dataclasses
from typing import Any

from zbench.contract.config import (
    CUDAGRAPH_COMPILE_MODES,
    DEFAULT_REPEATS,
    DEFAULT_STEPS,
    DEFAULT_WARMUP,
    WORKLOADS,
    RunConfig,
    check_batch,
)

IMAGE_SIZE = {w.name: w.image_size for w in WORKLOADS.values()}
NUM_CLASSES = {w.name: w.num_classes for w in WORKLOADS.values()}
MAX_BATCH = {w.name: w.max_batch for w in WORKLOADS.values()}
# One step's input per GPU (batch x channels x side^dims) beyond this is a typo: 4 TiB in fp32.
# Past 2^63 values the framework's shape overflowed (a crash once the job ran, not a refusal).
MAX_INPUT_VALUES = 2**40


@dataclasses.dataclass(frozen=True)
class MaxPreset:
    """What `--preset max` turns on for one framework (each only where the user left it off)."""

    precision: str  # the option's value
    precision_note: str
    channels_last: bool  # PyTorch only: TensorFlow runs NHWC already
    compile_flag: str  # the RunConfig field that compiles: "compile" or "xla"
    compile_note: str
    graphs: str  # PyTorch: the step in one CUDA graph ("step"); "off" where a framework has none
    graphs_note: str


PRESETS_MAX: dict[str, MaxPreset] = {
    "torch": MaxPreset(
        "bf16",
        "bf16 autocast",
        True,
        "compile",
        "torch.compile (inductor, mode default)",
        "step",
        "step: forward, backward and fused SGD replayed as one CUDA graph",
    ),
    "tf": MaxPreset(
        "bf16",
        "bf16 (Keras mixed_bfloat16)",
        False,
        "xla",
        "jit_compile",
        "off",
        "off: a PyTorch option (XLA launches its own fused clusters)",
    ),
}


@dataclasses.dataclass(frozen=True)
class Resolved:
    """A run's config with every default and preset choice filled in, and why each was chosen."""

    config: RunConfig  # every None filled in
    choices: dict[str, str]  # what a preset chose and why, for the start event
    # --preset max without --batch-size: the per-GPU batches the runner measures before the run
    # (it keeps the fastest); empty when the batch is fixed.
    batch_candidates: tuple[int, ...] = ()


def max_batches(workload: str, mode: str) -> tuple[int, ...]:
    """The batches ``--preset max`` measures for ``workload`` in ``mode`` (the first is the default)."""
    info = WORKLOADS[workload]
    found = info.max_train_batches if mode == "train" else info.max_infer_batches
    return found or (info.max_batch,)


def resolve(cfg: RunConfig) -> Resolved:
    """Every ``None`` of ``cfg`` filled in from the workload table and the preset."""
    info = WORKLOADS[cfg.workload]
    choices: dict[str, str] = {}
    changes: dict[str, Any] = {}
    precision, batch = cfg.precision, cfg.batch_size
    graphs, compile_mode = cfg.graphs, cfg.compile_mode
    candidates: tuple[int, ...] = ()
    if cfg.preset == "max":
        table = PRESETS_MAX[cfg.framework]
        if precision is None:
            precision = table.precision
            choices["precision"] = table.precision_note
        if batch is None:
            found = max_batches(cfg.workload, cfg.mode)
            batch = found[0]
            if len(found) > 1:
                candidates = found
                listed = ", ".join(map(str, found))
                choices["batch_size"] = f"the fastest of {listed} per GPU, measured before the run"
            else:
                choices["batch_size"] = f"{batch} per GPU"
        if graphs is None:
            graphs = table.graphs if info.graphs_in_max else "off"
            choices["graphs"] = table.graphs_note if info.graphs_in_max else info.graphs_note
        # None: the user said nothing, and the preset chooses; an explicit --no-... is kept and
        # recorded, so max never overrides what the command line asked for.
        if table.channels_last and cfg.channels_last is False:
            choices["channels_last"] = "off (--no-channels-last)"
        elif table.channels_last and cfg.channels_last is None:
            changes["channels_last"] = True
            choices["channels_last"] = "on"
        flag = table.compile_flag
        if not info.compile_in_max:
            choices[flag] = info.compile_note
        elif getattr(cfg, flag) is False:
            choices[flag] = f"off (--no-{flag})"
        elif getattr(cfg, flag) is None:
            changes[flag] = True
            choices[flag] = table.compile_note
    for flag in ("channels_last", "compile", "xla"):  # unset switches are off outside max
        if flag not in changes and getattr(cfg, flag) is None:
            changes[flag] = False
    graphs = graphs or "off"
    if cfg.framework == "torch" and (compile_mode or graphs == "compile"):
        changes["compile"] = True  # a compile mode, or torch.compile's graphs, compile
    if compile_mode is None and (changes.get("compile") or cfg.compile):
        compile_mode = "reduce-overhead" if graphs == "compile" else "default"
    resolved = dataclasses.replace(
        cfg,
        precision=precision or "fp32",
        batch_size=batch or info.default_batch,
        steps=cfg.steps or DEFAULT_STEPS,
        warmup=DEFAULT_WARMUP if cfg.warmup is None else cfg.warmup,
        image_size=cfg.image_size or info.image_size,
        repeat=cfg.repeat or DEFAULT_REPEATS,
        graphs=graphs,
        compile_mode=compile_mode,
        **changes,
    )
    return Resolved(resolved, choices, candidates)


def check_options(cfg: RunConfig) -> str | None:
    """A one-line reason when options contradict each other or cannot apply to the run, else None
    (an option that does nothing would still be recorded as the run's setting)."""
    if cfg.framework == "torch" and cfg.xla:
        return "--xla is TensorFlow's: PyTorch compiles with --compile"
    if cfg.framework == "tf":
        torch_only = [
            flag
            for flag, given in (
                ("--channels-last", cfg.channels_last),
                ("--compile", cfg.compile),
                (f"--compile-mode {cfg.compile_mode}", cfg.compile_mode is not None),
                (f"--graphs {cfg.graphs}", cfg.graphs not in (None, "off")),
                (f"--grad-compression {cfg.grad_compression}", cfg.grad_compression != "none"),
            )
            if given
        ]
        if torch_only:
            return (
                f"{', '.join(torch_only)}: PyTorch only; TensorFlow runs NHWC, compiles with "
                "--xla and all-reduces in FP32"
            )
    if cfg.device == "cpu" and cfg.graphs not in (None, "off"):
        return f"--graphs {cfg.graphs}: CUDA graphs need --device cuda"
    if cfg.framework == "torch":
        mode = cfg.compile_mode
        if cfg.compile is False and (mode is not None or cfg.graphs == "compile"):
            why = f"--compile-mode {mode}" if mode is not None else "--graphs compile"
            return f"--no-compile contradicts {why}, which compiles"
        if cfg.graphs == "step" and mode in CUDAGRAPH_COMPILE_MODES:
            return (
                f"--compile-mode {mode} makes its own CUDA graphs: use --graphs compile, or "
                "--compile-mode max-autotune-no-cudagraphs with --graphs step"
            )
        if cfg.graphs == "compile" and mode is not None and mode not in CUDAGRAPH_COMPILE_MODES:
            return (
                f"--graphs compile needs --compile-mode reduce-overhead or max-autotune, got {mode}"
            )
    if cfg.grad_compression != "none" and cfg.gpus < 2:
        return "--grad-compression compresses the DDP all-reduce: it needs --gpus 2 or more"
    return None


def check_shape(cfg: RunConfig) -> str | None:
    """A one-line reason when the input's shape (batch, image size) cannot go through the model,
    else None."""
    batch = check_batch(cfg)
    if batch:
        return batch
    info = WORKLOADS[cfg.workload]
    size = cfg.image_size or info.image_size
    multiple, least = info.size_multiple, info.min_size
    if multiple > 1 and (size % multiple or size < least):
        extra = f" and at least {least}" if least > multiple else ""
        return f"{cfg.workload} needs --image-size a multiple of {multiple}{extra}, got {size}"
    if size < least:
        return f"{cfg.workload} needs --image-size {least} or more, got {size}"
    per_gpu = cfg.batch_size or (
        max(max_batches(cfg.workload, cfg.mode)) if cfg.preset == "max" else info.default_batch
    )
    if per_gpu * info.in_channels * size**info.spatial_dims > MAX_INPUT_VALUES:
        return (
            f"{cfg.workload}: a batch of {per_gpu} at --image-size {size} is more than "
            f"{MAX_INPUT_VALUES:,} input values per GPU per step, more than any device holds"
        )
    return None


def workload_info(workload: str) -> dict[str, Any]:
    """The workload table's entry for ``workload`` as a plain dict."""
    return dataclasses.asdict(WORKLOADS[workload])
