"""What a runner can be asked to do: workloads, options, and their one parser.

Framework-free (standard library only), like ``protocol``: the job supervisor builds runner command
lines with :meth:`RunConfig.to_argv`, the TUI validates its launch form with :func:`parse_args`, and the
runner processes parse their own ``argv`` with the same parser, so the three can never disagree.
"""

from __future__ import annotations

import argparse
import dataclasses
from dataclasses import dataclass, field
from typing import Any, Literal

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
    "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs",
)  # fmt: skip
CUDAGRAPH_COMPILE_MODES: tuple[str, ...] = ("reduce-overhead", "max-autotune")
GRAD_COMPRESSION: tuple[str, ...] = ("none", "bf16")


@dataclass(frozen=True)
class WorkloadInfo:
    """One row of the workload table: everything framework-free about a workload. A new workload is
    one row here plus a model and a data function per framework (``runners/torch/models.py`` and
    ``tasks.py``; ``runners/tf/models.py`` and ``workloads.py``)."""

    name: str
    title: str
    task: str  # "classification" | "detection" | "segmentation"
    unit: str  # what one sample is: "images", "volumes"
    dataset: str  # the real dataset layout --data accepts
    default_batch: int  # the review's 128 where it fits a 48 GB card, else stated here
    batch_note: str = ""
    image_size: int = 224  # the review's input size (a side of the square or cube)
    num_classes: int = 1000  # synthetic data's classes (a real dataset brings its own)
    max_batch: int = 128  # --preset max on one H200-class GPU
    # --preset max without --batch-size: the batches it measures (a few steps each) before the run,
    # keeping the fastest; empty = max_batch only.
    max_train_batches: tuple[int, ...] = ()
    max_infer_batches: tuple[int, ...] = ()
    spatial_dims: int = 2  # 2 for images, 3 for volumes
    in_channels: int = 3
    size_multiple: int = 1  # --image-size must be a multiple of this
    min_size: int = 32  # ... and at least this
    compile_in_max: bool = True  # whether --preset max turns on torch.compile / XLA
    compile_note: str = ""  # why not, when it does not
    graphs_in_max: bool = True  # whether --preset max captures the step in a CUDA graph
    graphs_note: str = ""  # why not, when it does not
    loss: str = "cross-entropy"  # segmentation: "cross-entropy" or "cross-entropy + dice"
    # Training needs two samples per GPU: ResNet-50's batch norm fails on one sample once its last
    # feature map is 1x1 (a small --image-size), and at any size has no batch to normalize over.
    # (Faster R-CNN trains on one image per GPU, as its reference does.)
    batch_norm: bool = False


WORKLOADS: dict[str, WorkloadInfo] = {
    w.name: w
    for w in (
        # --preset max: a larger batch only where it raised throughput (ResNet-50's and the U-Nets'
        # kernels are still launch-bound at the review's batch in bf16).
        WorkloadInfo(
            "resnet50", "ResNet-50", "classification", "images", "flowers102 | imagenet", 128,
            max_batch=256, max_train_batches=(256, 384), max_infer_batches=(512, 1024),
            batch_norm=True,
        ),
        WorkloadInfo(
            "vgg16", "VGG16", "classification", "images", "imagenet | flowers102", 128,
            max_train_batches=(128, 256), max_infer_batches=(256, 512),
        ),
        WorkloadInfo(
            "fasterrcnn",
            "Faster R-CNN R50-FPN",
            "detection",
            "images",
            "voc",
            16,
            "batch 16 per GPU: 128 800px detection images do not fit a 48 GB card",
            image_size=800,
            num_classes=21,
            max_batch=16,
            # torch.compile of torchvision's detection models breaks the graph at every
            # data-dependent step (anchor matching, NMS), compiles for minutes and gains nothing;
            # XLA compiles only the convolutional parts (NMS and sampling have no XLA kernels).
            compile_in_max=False,
            compile_note="off: detection graphs break at data-dependent steps",
            graphs_in_max=False,
            graphs_note="off: lists of images and data-dependent shapes cannot be captured",
        ),
        WorkloadInfo(
            "unet2d",
            "U-Net (2D)",
            "segmentation",
            "images",
            "kits19 (axial slices)",
            32,
            "batch 32 per GPU at 256x256: 128 does not fit a 48 GB card in FP32 training",
            image_size=256,
            num_classes=3,
            max_batch=64,
            max_train_batches=(64, 128),
            max_infer_batches=(128, 256),
            in_channels=1,
            size_multiple=16,
            min_size=16,
        ),
        WorkloadInfo(
            "unet3d",
            "3D U-Net (KiTS19)",
            "segmentation",
            "volumes",
            "kits19",
            2,
            "batch 2 of 128^3 crops, as MLPerf's KiTS19 reference",
            image_size=128,
            num_classes=3,
            max_batch=4,
            max_train_batches=(4, 8),
            max_infer_batches=(8, 16),
            spatial_dims=3,
            in_channels=1,
            size_multiple=32,
            min_size=64,
            loss="cross-entropy + dice",  # MLPerf's DiceCELoss
        ),
    )
}  # fmt: skip


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


class UsageError(ValueError):
    """Bad runner options: reported as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:
        raise UsageError(message)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def build_parser(prog: str = "python -m zbench.runners") -> argparse.ArgumentParser:
    p = _Parser(prog=prog, description="Run one zbench workload and write runner-protocol events.")
    p.add_argument("workload", choices=sorted(WORKLOADS))
    p.add_argument("--framework", choices=FRAMEWORKS, default="torch")
    p.add_argument("--mode", choices=MODES, default="train")
    p.add_argument("--precision", choices=PRECISIONS, default=None)
    p.add_argument("--batch-size", type=_positive, default=None, help="per GPU")
    p.add_argument("--steps", type=_positive, default=None, help="measured steps")
    p.add_argument("--warmup", type=_non_negative, default=None, help="warm-up steps")
    p.add_argument("--image-size", type=_positive, default=None)
    p.add_argument("--channels-last", action=argparse.BooleanOptionalAction, default=None)
    p.add_argument("--compile", action=argparse.BooleanOptionalAction, default=None)
    p.add_argument("--xla", action=argparse.BooleanOptionalAction, default=None)
    p.add_argument("--gpus", type=_positive, default=1)
    p.add_argument("--workers", type=_non_negative, default=4)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--repeat",
        "--repeats",
        dest="repeat",
        type=_positive,
        default=None,
        help="measured windows (default 3); the result has each window's rate, the median, the spread",
    )
    p.add_argument("--data", default=None, help="path of a real dataset in its published layout")
    p.add_argument("--data-source", choices=DATA_SOURCES, default="synthetic-device")
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    p.add_argument("--preset", choices=PRESETS, default="review")
    p.add_argument(
        "--graphs",
        choices=GRAPHS,
        default=None,
        help="CUDA graphs (torch): step = the whole step in one graph, compile = torch.compile's",
    )
    p.add_argument(
        "--compile-mode",
        choices=COMPILE_MODES,
        default=None,
        help="torch.compile mode (implies --compile)",
    )
    p.add_argument(
        "--grad-compression",
        choices=GRAD_COMPRESSION,
        default="none",
        help="DDP all-reduce of gradients in bf16 (changes the numerics; recorded)",
    )
    p.add_argument("--events", default=None, help="events file path or fd:N (default: stderr)")
    p.epilog = "Arguments after a lone -- are passed to the launcher (torchrun rendezvous, ...)."
    return p


def parse_args(argv: list[str]) -> tuple[RunConfig, str | None]:
    """(config, events target). Raises :class:`UsageError` with a one-line reason."""
    # Split at the first lone "--" by hand: argparse's REMAINDER would also swallow our own options.
    if "--" in argv:
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1 :]
    else:
        extra = []
    ns = build_parser().parse_args(argv)
    kwargs = {k: v for k, v in vars(ns).items() if k != "events"}
    return RunConfig(**kwargs, extra=tuple(extra)), ns.events
