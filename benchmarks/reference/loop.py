"""The single-GPU reference loop: how an experienced PyTorch engineer times training or inference.

cuDNN autotuner on; TF32 by precision (fp32 is strict: TF32 off for matmul and cuDNN); bf16 autocast;
channels-last when asked; fused SGD (momentum 0.9, lr 1e-4, as zbench) with zero_grad(set_to_none);
one synthetic batch resident on the device; warm-up excluded; the device synchronized only at the
edges of the timed window. Run as ``python3 benchmarks/runner_fidelity.py --ref ...`` (a fresh process).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from contextlib import nullcontext
from typing import Any

import torch
from torch import nn

from benchmarks.reference import models

LR, MOMENTUM = 1e-4, 0.9


def set_precision(precision: str) -> None:
    torch.backends.cudnn.benchmark = True
    tf32 = precision == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32


def autocast(device: torch.device, precision: str) -> Callable[[], Any]:
    if precision == "bf16":
        return lambda: torch.autocast(device.type, dtype=torch.bfloat16)
    return nullcontext


def optimizer(model: nn.Module, device: torch.device) -> torch.optim.Optimizer:
    # One fused multi-tensor kernel per step on the GPU; the CPU smoke run takes the foreach path.
    cuda = device.type == "cuda"
    return torch.optim.SGD(
        model.parameters(),
        lr=LR,
        momentum=MOMENTUM,
        fused=cuda or None,
        foreach=None if cuda else True,
    )


def make_step(a: argparse.Namespace, device: torch.device, model: nn.Module) -> Callable[[], None]:
    fmt = models.memory_format(a.workload, a.channels_last)
    data = models.batch(a.workload, a.image_size, a.batch_size, device, fmt)
    cast = autocast(device, a.precision)
    if a.mode == "infer":
        model.eval()

        def infer() -> None:
            with torch.inference_mode(), cast():
                model(data[0])

        return infer
    model.train()
    opt = optimizer(model, device)

    def train() -> None:
        opt.zero_grad(set_to_none=True)
        with cast():
            loss = models.loss(a.workload, model, data)
        loss.backward()
        opt.step()

    return train


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timed(step: Callable[[], None], steps: int, warmup: int, device: torch.device) -> float:
    """Seconds for ``steps`` steps after ``warmup`` untimed ones; host sync only at the edges."""
    for _ in range(warmup):
        step()
    sync(device)
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    sync(device)
    return time.perf_counter() - t0


def windows(a: argparse.Namespace) -> int:
    return max(1, int(getattr(a, "windows", 1) or 1))


def run(a: argparse.Namespace) -> dict[str, Any]:
    device = torch.device(a.device)
    set_precision(a.precision)
    torch.manual_seed(0)
    model = models.build(a.workload, a.image_size).to(device)
    model = model.to(memory_format=models.memory_format(a.workload, a.channels_last))
    step = make_step(a, device, model)
    # Back-to-back windows, the median reported: the same measurement zbench's runner makes (its
    # preset's --repeat 3), so neither side times a cooler GPU than the other.
    secs = [timed(step, a.steps, a.warmup if w == 0 else 0, device) for w in range(windows(a))]
    seconds = statistics.median(secs)
    return {
        "samples_per_s": a.batch_size * a.steps / seconds,
        "window_s": seconds,
        "window_rates": [a.batch_size * a.steps / s for s in secs],
        "step_ms": 1000 * seconds / a.steps,
        "peak_mem_bytes": torch.cuda.max_memory_allocated(device)
        if device.type == "cuda"
        else None,
    }
