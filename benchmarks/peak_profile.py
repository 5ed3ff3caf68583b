"""Where a ResNet-50 bf16 training step's time goes on the GPU: a torch.profiler summary.

Profiles the plain compiled reference of benchmarks/peak.py (bf16 autocast, channels-last, cuDNN
autotuner, fused SGD, ``torch.compile`` default mode) and, with ``--variant eager``, the same step
uncompiled; ``--variant zbench`` profiles zbench's own ``--preset max`` step instead, built by its
runner in the data folder ``ZBENCH_HOME`` (its tuned kernels are reused there; the compiled graphs
that ``zbench run`` stored did not serve this in-process build, docs/performance.md). Reports the step's wall time
without the profiler, then, from a profiled window, the GPU kernel time per step split by kind
(cuDNN convolutions, Triton kernels from inductor's fusions, matrix multiplies, batch norm and other
native kernels, the optimizer, copies) and the longest kernels, so a missed peak goal can be read
against what the GPU actually spends its time on.

    python3 benchmarks/peak_profile.py --out profile.json                 # H200: about a minute
    ZBENCH_HOME=build/peak-home/train python3 benchmarks/peak_profile.py --variant zbench
    python3 benchmarks/peak_profile.py --device cpu --variant eager --batch-size 2 --image-size 32
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import torch  # noqa: E402
from torch.autograd import DeviceType  # noqa: E402
from torch.profiler import ProfilerActivity, profile  # noqa: E402

from benchmarks.args import OneLineParser  # noqa: E402
from benchmarks.reference import loop, models  # noqa: E402

# Kernel name fragments (lower case) -> kind; the first kind that matches wins.
KINDS = (
    ("optimizer", ("sgd", "multi_tensor", "foreach")),
    ("triton (inductor fusions)", ("triton",)),
    ("batch norm (not fused)", ("batch_norm", "batchnorm", "bn_fw", "bn_bw")),
    ("convolution (cuDNN)", ("conv", "xmma", "implicit", "cudnn", "wgrad", "dgrad", "fprop")),
    ("matmul", ("gemm", "cublas", "nvjet", "cutlass")),
    ("copy / fill", ("memcpy", "memset", "copy", "fill")),
)


def parser() -> OneLineParser:
    p = OneLineParser(prog=Path(__file__).name, description=__doc__.splitlines()[0])
    p.add_argument("--variant", choices=("compile", "eager", "zbench"), default="compile")
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--image-size", type=int, default=224)
    p.add_argument("--steps", type=int, default=20, help="profiled steps")
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    p.add_argument("--top", type=int, default=12, help="longest kernels listed")
    p.add_argument("--out", type=Path)
    return p


def kind(name: str) -> str:
    low = name.lower()
    return next((k for k, frags in KINDS if any(f in low for f in frags)), "other")


def device_us(event: Any) -> float:
    # torch renamed the CUDA-only field to a device-neutral one; read whichever this torch has.
    for field in ("self_device_time_total", "self_cuda_time_total"):
        if hasattr(event, field):
            return float(getattr(event, field))
    return 0.0


def summarize(kernels: dict[str, float], steps: int, wall_ms: float, top: int) -> dict[str, Any]:
    """``kernels``: kernel name -> total microseconds over ``steps`` profiled steps."""
    total_ms = sum(kernels.values()) / 1000 / steps
    by_kind: dict[str, float] = defaultdict(float)
    for name, us in kernels.items():
        by_kind[kind(name)] += us / 1000 / steps
    longest = sorted(kernels.items(), key=lambda kv: -kv[1])[:top]
    return {
        "wall_ms_per_step": wall_ms,
        "kernel_ms_per_step": total_ms,
        "gpu_busy_pct": 100 * total_ms / wall_ms if wall_ms else None,
        "by_kind": {
            k: {"ms": v, "pct": 100 * v / total_ms if total_ms else 0.0}
            for k, v in sorted(by_kind.items(), key=lambda kv: -kv[1])
        },
        "longest": [
            {"kernel": n[:110], "kind": kind(n), "ms": us / 1000 / steps} for n, us in longest
        ],
    }


def _loop_step(a: argparse.Namespace, device: torch.device) -> Any:
    loop.set_precision("bf16")
    torch.manual_seed(0)
    model = models.build("resnet50", a.image_size).to(device).to(memory_format=torch.channels_last)
    net: torch.nn.Module = model
    if a.variant == "compile":
        net = torch.compile(model)  # type: ignore[assignment]
    ns = argparse.Namespace(
        workload="resnet50",
        mode="train",
        precision="bf16",
        channels_last=True,
        batch_size=a.batch_size,
        image_size=a.image_size,
    )
    return loop.make_step(ns, device, net)


def _zbench_step(batch: int) -> Any:
    from benchmarks import candidate_steps

    return candidate_steps.zbench_step(candidate_steps.Candidate("zbench", batch=batch, graph=True))


def main(argv: list[str]) -> int:
    a = parser().parse_args(argv)
    if a.batch_size < 1 or a.steps < 1 or a.image_size < 32:
        parser().error("--batch-size and --steps must be 1 or more, --image-size at least 32")
    if a.device == "cuda" and not torch.cuda.is_available():
        parser().error("no CUDA device visible; use --device cpu for a smoke run")
    if a.variant == "zbench" and (a.device != "cuda" or a.image_size != 224):
        parser().error(
            "--variant zbench profiles the GPU step at 224x224: --device cuda only, no --image-size"
        )
    device = torch.device(a.device)
    step = _zbench_step(a.batch_size) if a.variant == "zbench" else _loop_step(a, device)
    t0 = time.perf_counter()
    for _ in range(3):  # compile, autotune
        step()
    loop.sync(device)
    first_s = time.perf_counter() - t0
    wall_ms = 1000 * loop.timed(step, a.steps, 5, device) / a.steps
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if a.device == "cuda" else [])
    with profile(activities=activities) as prof:
        for _ in range(a.steps):
            step()
        loop.sync(device)
    kernels: dict[str, float] = defaultdict(float)
    for e in prof.key_averages():
        # Only the device's own rows (kernels, copies, fills): an operator row carries the time of
        # the kernels it launched too, so counting both would count them twice.
        if e.device_type == DeviceType.CUDA:
            kernels[e.key] += device_us(e)
    if a.device == "cpu":  # no device kernels: the smoke run summarizes CPU operators instead
        for e in prof.key_averages():
            kernels[e.key] += float(e.self_cpu_time_total)
    out = summarize(kernels, a.steps, wall_ms, a.top)
    out.update(
        variant=a.variant,
        batch=a.batch_size,
        first_steps_s=first_s,
        img_per_s=a.batch_size / (wall_ms / 1000),
        torch=torch.__version__,
        gpu=torch.cuda.get_device_name(device) if a.device == "cuda" else "cpu",
    )
    print(
        f"ResNet-50 train bf16 {a.variant}, batch {a.batch_size}, {out['gpu']}: "
        f"{out['img_per_s']:,.0f} img/s unprofiled ({wall_ms:.2f} ms/step); "
        f"kernels {out['kernel_ms_per_step']:.2f} ms/step = {out['gpu_busy_pct']:.1f}% of the step"
    )
    for k, v in out["by_kind"].items():
        print(f"  {k:28s} {v['ms']:8.2f} ms  {v['pct']:5.1f}%")
    print("longest kernels (ms/step):")
    for row in out["longest"]:
        print(f"  {row['ms']:7.3f}  {row['kind'][:12]:12s}  {row['kernel']}")
    if a.out:
        a.out.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
