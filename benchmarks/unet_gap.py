"""U-Net (2D) bf16 channels-last training: zbench's own step beside plain loops, in one process.

Sides, each measured in interleaved windows (medians compared) and profiled (GPU time per kernel):
- ``zbench``: the runner's step, made by its torch adapter from ``unet2d --precision bf16
  --channels-last --batch-size 32``;
- ``ref``: the fidelity benchmark's reference (benchmarks/reference/loop.py);
- ``plain``: the loop a PyTorch user writes with torch's defaults left alone (cuDNN autotuner on,
  SGD with momentum in its default foreach form, bf16 autocast, cross-entropy on the float output);
  ``plain-contig`` makes its input with ``.contiguous(memory_format=torch.channels_last)``, as
  zbench and its reference did before (a one-channel batch keeps NCHW strides that way); with
  ``--all`` also ``plain-tf32off`` and ``plain-fused`` (one of those defaults changed to zbench's)
  and ``plain-zmodel`` (zbench's U-Net module in the plain loop).

    python3 benchmarks/unet_gap.py --out gap.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.autograd import DeviceType  # noqa: E402
from torch.profiler import ProfilerActivity, profile  # noqa: E402

from benchmarks.peak_profile import device_us  # noqa: E402
from benchmarks.reference import loop, models  # noqa: E402

BATCH, SIZE = 32, 256
CUDA = torch.device("cuda")
FLAGS = {"default": (False, True), "off": (False, False)}  # (matmul tf32, cudnn tf32)


def _flags(which: str) -> None:
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = FLAGS[which]
    torch.backends.cudnn.benchmark = True


def zbench_step() -> Callable[[], None]:
    from zbench.contract.config import parse_args
    from zbench.contract.resolve import resolve
    from zbench.runners.torch.adapter import TorchAdapter

    argv = [
        "unet2d",
        "--precision",
        "bf16",
        "--channels-last",
        "--batch-size",
        str(BATCH),
        "--image-size",
        str(SIZE),
        "--mode",
        "train",
    ]
    cfg, _ = parse_args(argv)
    resolved = resolve(cfg).config
    adapter = TorchAdapter()
    adapter.prepare(resolved)
    step = adapter.build(resolved)
    return lambda: step() and None


def ref_step() -> Callable[[], None]:
    ns = argparse.Namespace(
        workload="unet2d",
        mode="train",
        batch_size=BATCH,
        image_size=SIZE,
        precision="bf16",
        channels_last=True,
    )
    model = models.build("unet2d", SIZE).cuda().to(memory_format=torch.channels_last)
    return loop.make_step(ns, torch.device("cuda"), model)


def plain_step(
    fused: bool = False, zmodel: bool = False, contiguous: bool = False
) -> Callable[[], None]:
    if zmodel:
        from zbench.runners.torch.unet2d import UNet2D

        model: torch.nn.Module = UNet2D(1, 3)
    else:
        model = models.UNet2D(1, 3)
    model = model.cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, fused=fused or None)
    x = torch.randn(BATCH, 1, SIZE, SIZE, device="cuda")
    # contiguous: the input made as zbench made it before (its NCHW strides kept)
    x = (
        x.contiguous(memory_format=torch.channels_last)
        if contiguous
        else x.to(memory_format=torch.channels_last)
    )
    y = torch.randint(0, 3, (BATCH, SIZE, SIZE), device="cuda")

    def step() -> None:
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(x)
        F.cross_entropy(out.float(), y).backward()
        opt.step()

    return step


def kernels(step: Callable[[], None], steps: int) -> dict[str, float]:
    """GPU milliseconds per step, per kernel name."""
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            step()
        torch.cuda.synchronize()
    out: dict[str, float] = defaultdict(float)
    for e in prof.key_averages():
        if e.device_type == DeviceType.CUDA:
            out[e.key] += device_us(e) / 1000 / steps
    return dict(out)


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--windows", type=int, default=7)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--out", type=Path)
    p.add_argument("--all", action="store_true", help="also the tf32, fused-SGD and model sides")
    a = p.parse_args(argv)
    sides: dict[str, tuple[Callable[[], None], str]] = {}
    _flags("off")
    sides["zbench"] = (zbench_step(), "off")
    sides["ref"] = (ref_step(), "off")
    _flags("default")
    sides["plain"] = (plain_step(), "default")
    sides["plain-contig"] = (plain_step(contiguous=True), "default")
    if a.all:
        sides["plain-tf32off"] = (plain_step(), "off")
        sides["plain-fused"] = (plain_step(fused=True), "default")
        sides["plain-zmodel"] = (plain_step(zmodel=True), "default")
    for step, flags in sides.values():  # cuDNN autotuning under each side's flags
        _flags(flags)
        loop.timed(step, 5, 0, CUDA)
    rates: dict[str, list[float]] = defaultdict(list)
    for _ in range(a.windows):
        for name, (step, flags) in sides.items():
            _flags(flags)
            rates[name].append(BATCH * a.steps / loop.timed(step, a.steps, 0, CUDA))
    med = {k: statistics.median(v) for k, v in rates.items()}
    print(f"U-Net 2D bf16 channels-last train, batch {BATCH}, {torch.cuda.get_device_name()}:")
    for name, r in med.items():
        spread = (max(rates[name]) - min(rates[name])) / r
        print(f"  {name:14s} {r:8.1f} img/s  {r / med['plain']:.3f} of plain  spread {spread:.1%}")
    prof = {}
    for name in ("zbench", "ref", "plain"):
        step, flags = sides[name]
        _flags(flags)
        prof[name] = kernels(step, 10)
    names = sorted(set().union(*prof.values()), key=lambda k: -prof["zbench"].get(k, 0.0))
    print("kernel ms/step: zbench | ref | plain   (largest differences first)")
    diff = sorted(names, key=lambda k: -abs(prof["zbench"].get(k, 0) - prof["plain"].get(k, 0)))
    for k in diff[:25]:
        z, r, pl = (prof[s].get(k, 0.0) for s in ("zbench", "ref", "plain"))
        print(f"  {z:7.3f} {r:7.3f} {pl:7.3f}  {k[:120]}")
    for s in prof:
        print(f"  total {s}: {sum(prof[s].values()):.3f} ms/step")
    if a.out:
        a.out.write_text(json.dumps({"rates": rates, "median": med, "kernels": prof}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
