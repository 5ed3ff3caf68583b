"""What a runner can be asked to do: workloads, options, and their one parser.

Framework-free (standard library only), like ``protocol``: the job supervisor builds runner command
lines with :meth:`RunConfig.to_argv`, the TUI validates its launch form with :func:`parse_args`, and the
runner processes parse their own ``argv`` with the same parser, so the three can never disagree.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from dataclasses import dataclass, field
from typing import Any, Literal

from zbench.contract.options import Opt, UsageParser, argparse_kwargs, number_type
from zbench.contract.workloads import WORKLOADS
from zbench.textfit import counted

Framework = Literal["torch", "tf"]
FRAMEWORKS: tuple[str, ...] = ("torch", "tf")
MODES: tuple[str, ...] = ("train", "infer")
PRECISIONS: tuple[str, ...] = ("fp32", "tf32", "fp16", "bf16")
DATA_SOURCES: tuple[str, ...] = ("synthetic-device", "synthetic-host")
PRESETS: tuple[str, ...] = ("review", "max")
# CUDA graphs (PyTorch): "step" captures the whole step (forward, backward, optimizer) in one graph
# with torch.cuda.graphs; "compile" leaves them to torch.compile's cudagraph modes; "off".
GRAPHS: tuple[str, ...] = ("off", "step", "compile")
COMPILE_MODES: tuple[str, ...] = (
    "default",
    "reduce-overhead",
    "max-autotune",
    "max-autotune-no-cudagraphs",
)
CUDAGRAPH_COMPILE_MODES: tuple[str, ...] = ("reduce-overhead", "max-autotune")
GRAD_COMPRESSION: tuple[str, ...] = ("none", "bf16")


MAX_STEPS = 10_000_000  # more is a typo (it would run for days), not a benchmark
# A seed is a 32-bit unsigned number: NumPy's generators refuse a negative one and torch's a
# 64-bit overflow, each only once the job runs (a crash, not a refusal).
SEED_MAX = 2**32 - 1


@dataclass(frozen=True)
class RunConfig:
    """A runner's options as given (``None`` = the workload's/preset's default, resolved by the runner
    and reported in its ``start`` event)."""

    workload: str
    framework: str = "torch"
    mode: str = "train"
    precision: str | None = None
    batch_size: int | None = None
    steps: int | None = None
    warmup: int | None = None
    image_size: int | None = None
    channels_last: bool | None = None  # None: the preset chooses (review: off)
    compile: bool | None = None  # None: the preset chooses (review: off)
    xla: bool | None = None  # None: the preset chooses (review: off)
    gpus: int = 1
    workers: int = 4
    seed: int = 0
    repeat: int | None = None  # measured windows; None = the preset's (3)
    data: str | None = None  # a dataset path, or None for synthetic
    data_source: str = "synthetic-device"
    device: str = "cuda"
    preset: str = "review"
    graphs: str | None = None  # None = the preset's ("step" in max where it applies, else "off")
    compile_mode: str | None = None  # torch.compile's mode; None = the preset's ("default")
    grad_compression: str = "none"  # DDP gradient all-reduce in bf16 (changes the numerics)
    extra: tuple[str, ...] = field(default_factory=tuple)  # passed through (torchrun rendezvous...)

    kind = "benchmark"  # its row of contract.kinds (a class attribute, not an option)

    def check(self) -> str | None:
        """What the runner would reject at once, in one line (None: nothing found here)."""
        from zbench.contract.resolve import check_options, check_shape  # it imports this module

        for name in ("steps", "warmup"):  # a config built without the parser: its bounds too
            value = getattr(self, name)
            try:
                if value is not None:
                    number_type(RUN_OPTION[name])(str(value))
            except argparse.ArgumentTypeError as exc:  # the parser's own words
                return f"--{name}: {exc}"
        if self.data is not None and not os.path.exists(self.data):
            return f"--data {self.data}: no such file or folder"
        cores = os.cpu_count() or 1
        if self.device == "cpu" and self.gpus > cores:  # --gpus N on the CPU: N gloo processes
            return (
                f"--gpus {self.gpus} with --device cpu starts {self.gpus} CPU processes on "
                f"{counted(cores, 'core')}: --gpus counts GPUs; on the CPU use {cores} or fewer"
            )
        return check_options(self) or check_shape(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunConfig:
        """A stored config (``as_dict``, perhaps with more keys) back as options."""
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        known["extra"] = tuple(known.get("extra") or ())
        return cls(**known)

    def to_argv(self, events: str | None = None) -> list[str]:
        """The runner's argv after ``python -m zbench.runners``, with ``--events`` if given."""
        argv = [self.workload]
        defaults = RunConfig(workload=self.workload)
        for f in dataclasses.fields(self):
            name = f.name
            if name in ("workload", "extra"):
                continue
            value = getattr(self, name)
            if value == getattr(defaults, name) and name != "framework":
                continue
            flag = "--" + name.replace("_", "-")
            if isinstance(value, bool):
                argv.append(flag if value else "--no-" + name.replace("_", "-"))
            elif value is not None:
                argv += [flag, str(value)]
        if events is not None:
            argv += ["--events", events]
        if self.extra:
            argv += ["--", *self.extra]
        return argv

    def as_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["extra"] = list(self.extra)
        return d


def check_batch(cfg: RunConfig) -> str | None:
    """A one-line reason when the batch cannot train the model, else None: a batch-norm model
    trained on one sample per GPU (``--batch-size`` is per GPU, so per rank) fails in its first
    steps, or normalizes with meaningless statistics."""
    if cfg.mode == "train" and cfg.batch_size == 1 and WORKLOADS[cfg.workload].batch_norm:
        per = " per GPU (each rank normalizes its own batch)" if cfg.gpus > 1 else ""
        return (
            f"{cfg.workload} training needs --batch-size 2 or more{per}: its batch norm cannot "
            "learn from one sample"
        )
    return None


_PRESET = "the preset's"
# The review's window when the options leave it (``resolve`` fills them in).
DEFAULT_WARMUP = 10
DEFAULT_STEPS = 50
DEFAULT_REPEATS = 3  # measured windows: the median is reported, with the spread
RUN_OPTIONS: tuple[Opt, ...] = (
    Opt(
        "framework",
        "choice",
        "torch",
        "Deep-learning framework that runs the workload.",
        FRAMEWORKS,
    ),
    Opt(
        "mode",
        "choice",
        "train",
        "train: forward, backward and optimizer step; infer: forward only.",
        MODES,
    ),
    Opt(
        "precision",
        "choice",
        None,
        "Number format of the math (review: fp32; --preset max: bf16).",
        PRECISIONS,
        default_text=_PRESET,
    ),
    Opt(
        "batch_size",
        "int",
        None,
        f"Samples per GPU per step (ResNet-50: {WORKLOADS['resnet50'].default_batch}).",
        low=1,
        default_text="the workload's",
    ),
    Opt(
        "steps",
        "int",
        None,
        "Measured steps in each window.",
        low=1,
        high=MAX_STEPS,
        default_text=str(DEFAULT_STEPS),
    ),
    Opt(
        "warmup",
        "int",
        None,
        "Warm-up steps before the first window (not measured).",
        low=0,
        high=MAX_STEPS,
        default_text=str(DEFAULT_WARMUP),
    ),
    Opt(
        "image_size",
        "int",
        None,
        f"Input side in pixels, voxels for 3D U-Net (ResNet-50: {WORKLOADS['resnet50'].image_size}).",
        low=1,
        default_text="the workload's",
    ),
    Opt(
        "repeat",
        "int",
        None,
        "Measured windows: the result has each window's rate, the median and the spread.",
        low=1,
        default_text=str(DEFAULT_REPEATS),
        aliases=("--repeats",),
    ),
    Opt(
        "preset",
        "choice",
        "review",
        "review: the review's settings; max: the fastest setup zbench knows (bf16, compile, "
        "CUDA graphs, a larger batch; a setup's first run compiles for minutes, later ones load "
        "the cache).",
        PRESETS,
    ),
    Opt(
        "device",
        "choice",
        "cuda",
        "Where the workload runs: NVIDIA GPUs, or the CPU.",
        ("cuda", "cpu"),
    ),
    Opt(
        "gpus",
        "int",
        1,
        "How many GPUs (data parallel: DDP or tf.distribute); zbench run --gpu-ids picks which.",
        low=1,
    ),
    Opt(
        "data",
        "str",
        None,
        "Path of a real dataset in its published layout.",
        default_text="synthetic data",
        path=True,
    ),
    Opt(
        "data_source",
        "choice",
        "synthetic-device",
        "Where synthetic batches are made: on the device, or on the host and copied each step.",
        DATA_SOURCES,
    ),
    Opt("workers", "int", 4, "Data-loader worker processes (host-side data only).", low=0),
    Opt("channels_last", "bool", None, "NHWC memory layout (PyTorch).", default_text=_PRESET),
    Opt("compile", "bool", None, "torch.compile the step (PyTorch).", default_text=_PRESET),
    Opt("xla", "bool", None, "XLA JIT compilation (TensorFlow).", default_text=_PRESET),
    Opt(
        "graphs",
        "choice",
        None,
        "CUDA graphs (PyTorch): step = the whole step in one graph, compile = torch.compile's.",
        GRAPHS,
        default_text=_PRESET,
    ),
    Opt(
        "compile_mode",
        "choice",
        None,
        "torch.compile mode (implies --compile).",
        COMPILE_MODES,
        default_text=_PRESET,
    ),
    Opt(
        "grad_compression",
        "choice",
        "none",
        "DDP all-reduce of gradients in bf16 (changes the numerics; recorded).",
        GRAD_COMPRESSION,
    ),
    Opt(
        "seed",
        "int",
        0,
        "Random seed of the model's weights and the synthetic data.",
        low=0,
        high=SEED_MAX,
    ),
)
RUN_OPTION = {o.name: o for o in RUN_OPTIONS}


def build_parser(
    prog: str = "python -m zbench.runners", *, add_help: bool = True
) -> argparse.ArgumentParser:
    """The runner's option parser, built from :data:`RUN_OPTIONS`."""
    p = UsageParser(
        prog=prog,
        description="Run one zbench workload and write runner-protocol events.",
        add_help=add_help,
    )
    p.add_argument("workload", choices=sorted(WORKLOADS))
    for opt in RUN_OPTIONS:
        p.add_argument(
            opt.flag,
            *opt.aliases,
            dest=opt.name,
            default=opt.default,
            help=opt.help,
            **argparse_kwargs(opt),
        )
    p.add_argument("--events", default=None, help="events file path or fd:N (default: stderr)")
    p.epilog = "Arguments after a lone -- are passed to the launcher (torchrun rendezvous, ...)."
    return p


def parse_args(argv: list[str], *, add_help: bool = False) -> tuple[RunConfig, str | None]:
    """(config, events target). Raises :class:`~zbench.contract.options.UsageError` with a one-line reason. ``-h`` prints
    the runner's help and exits only with ``add_help`` (the runner's own command line): elsewhere
    (``zbench run -- -h``, a suite's ``workload = "-h"``) it is bad input, not an exit 0."""
    # Split at the first lone "--" by hand: argparse's REMAINDER would also swallow our own options.
    if "--" in argv:
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1 :]
    else:
        extra = []
    ns = build_parser(add_help=add_help).parse_args(argv)
    kwargs = {k: v for k, v in vars(ns).items() if k != "events"}
    return RunConfig(**kwargs, extra=tuple(extra)), ns.events
