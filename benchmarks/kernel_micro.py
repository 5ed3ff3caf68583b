"""Kernel micro-benchmarks behind `peak_candidates.py --bn`: ResNet-50's training batch-norm (+ ReLU)
and its stem max-pool, forward and backward, inductor's Triton kernels against ATen's and cuDNN's.

Run by peak_candidates.py in a process of its own (``--child bn``) after the candidates, so it
never shares a process, or an inductor option, with them.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any


def _median_ms(fn: Callable[[], None], runs: int = 20) -> float:
    """Median milliseconds of ``fn`` on the GPU (CUDA events around each call), after 3 calls."""
    import torch

    for _ in range(3):
        fn()
    times = []
    for _ in range(runs):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    return round(statistics.median(times), 3)


BN_SHAPES = ((256, 64, 112, 112), (256, 256, 56, 56), (256, 512, 28, 28), (256, 1024, 14, 14))


def bn_micro() -> list[dict[str, Any]]:
    """Training batch-norm (+ ReLU) forward and backward on one activation: inductor's fused Triton
    kernels (compiled) against cuDNN's NHWC batch-norm (eager), median of 20 CUDA-event timings."""
    import torch
    from torch import nn

    rows = []
    for shape in BN_SHAPES:
        x = torch.randn(shape, device="cuda", dtype=torch.bfloat16)
        x = x.contiguous(memory_format=torch.channels_last).requires_grad_()
        g = torch.randn_like(x)
        row: dict[str, Any] = {"shape": "x".join(map(str, shape))}
        for label, relu, compiled in (
            ("triton bn+relu", True, True),
            ("cudnn bn+relu", True, False),
            ("cudnn bn", False, False),
        ):
            bn = nn.BatchNorm2d(shape[1]).cuda().train()

            def f(bn: nn.Module = bn, relu: bool = relu, x: torch.Tensor = x) -> torch.Tensor:
                out = bn(x)
                return torch.relu(out) if relu else out

            fn = torch.compile(f) if compiled else f

            def fb(
                fn: Callable[[], torch.Tensor] = fn, x: torch.Tensor = x, g: torch.Tensor = g
            ) -> None:
                x.grad = None
                fn().backward(g)

            row[label] = _median_ms(fb)
        rows.append(row)
    rows.append(maxpool_micro())
    return rows


def maxpool_micro() -> dict[str, Any]:
    """ResNet-50's stem max-pool (3x3, stride 2) forward and backward on its bf16 NHWC activation:
    inductor's Triton kernels (compiled) against ATen's CUDA kernels (eager), median of 20."""
    import torch
    import torch.nn.functional as F

    x = torch.randn(256, 64, 112, 112, device="cuda", dtype=torch.bfloat16)
    x = x.contiguous(memory_format=torch.channels_last).requires_grad_()
    g = torch.randn(256, 64, 56, 56, device="cuda", dtype=torch.bfloat16)
    g = g.contiguous(memory_format=torch.channels_last)
    row: dict[str, Any] = {"shape": "maxpool 256x64x112x112"}

    def pool(x: torch.Tensor) -> torch.Tensor:
        return F.max_pool2d(x, 3, 2, 1)

    for label, fn in (("triton", torch.compile(pool)), ("aten", pool)):

        def fb(fn: Callable[[torch.Tensor], torch.Tensor] = fn) -> None:
            x.grad = None
            fn(x).backward(g)

        row[label] = _median_ms(fb)
    return row
