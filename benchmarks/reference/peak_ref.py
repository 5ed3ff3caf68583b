"""ResNet-50 peak references, bf16 autocast and channels-last: eager, torch.compile (default or
max-autotune-no-cudagraphs; for inference also default with inductor freezing, `compile-freeze`), and a
whole step captured in one CUDA graph.

The CUDA-graph training step follows PyTorch's whole-network capture recipe: static input and target
tensors, warm-up iterations on a side stream (they also create the optimizer's momentum buffers and
run cuDNN's autotuner), gradients set to None before capture so backward allocates them from the
graph's pool, then forward, backward and the fused SGD step captured together and replayed. Autocast
runs with its weight-cast cache off, as capture requires. Before timing, the replays must lower the
loss on the fixed batch (training) or match an eager forward (inference); otherwise the run fails.
"""

from __future__ import annotations

import argparse
import inspect
import statistics
import time
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from benchmarks.reference import loop, models

CHECK_REPLAYS = 10
FIRST_STEPS = 2  # timed apart: compilation (forward, then backward) and cuDNN autotuning


def _sgd(model: nn.Module, capturable: bool) -> torch.optim.Optimizer:
    kw: dict[str, Any] = {"lr": loop.LR, "momentum": loop.MOMENTUM, "fused": True}
    # SGD keeps no step count on the host, so its fused step is capture-safe once warm-up has made
    # the momentum buffers; pass capturable where a torch version offers it for SGD.
    if capturable and "capturable" in inspect.signature(torch.optim.SGD).parameters:
        kw["capturable"] = True
    return torch.optim.SGD(model.parameters(), **kw)


def _bf16(cache: bool = True) -> Any:
    return torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=cache)


def graphed_train(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> Callable[[], None]:
    opt = _sgd(model, capturable=True)

    def fwd_bwd_step() -> torch.Tensor:
        with _bf16(cache=False):
            out = model(x)
        loss = F.cross_entropy(out.float(), y)
        loss.backward()
        opt.step()
        return loss.detach()

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            fwd_bwd_step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        static_loss = fwd_bwd_step()
    losses = []
    for _ in range(CHECK_REPLAYS):
        graph.replay()
        losses.append(float(static_loss))
    if not statistics.fmean(losses[-3:]) < losses[0]:
        raise AssertionError(f"the graphed step does not train: losses {losses}")
    return graph.replay


def graphed_infer(model: nn.Module, x: torch.Tensor) -> Callable[[], None]:
    model.eval()
    with torch.no_grad():
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side), _bf16(cache=False):
            for _ in range(3):
                model(x)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph), _bf16(cache=False):
            static_out = model(x)
        graph.replay()
        with _bf16():
            eager = model(x)
        torch.testing.assert_close(
            static_out.float(), eager.float(), atol=0.05, rtol=0.05, equal_nan=True
        )
    return graph.replay


def run(a: argparse.Namespace) -> dict[str, Any]:
    device = torch.device(a.device)
    loop.set_precision("bf16")
    torch.manual_seed(0)
    model = models.build("resnet50", a.image_size).to(device)
    model = model.to(memory_format=torch.channels_last)
    t0 = time.perf_counter()
    if a.variant == "cudagraph":
        if device.type != "cuda":
            raise SystemExit("the CUDA-graph reference needs --device cuda")
        x, y = models.batch("resnet50", a.image_size, a.batch_size, device, torch.channels_last)
        step = graphed_train(model, x, y) if a.mode == "train" else graphed_infer(model, x)
    else:
        net: nn.Module = model
        if a.variant != "eager":
            mode = "max-autotune-no-cudagraphs" if a.variant == "max-autotune" else None
            mode = mode if a.backend == "inductor" else None  # modes are inductor's
            if a.variant == "compile-freeze":
                if a.mode == "train":
                    raise SystemExit("compile-freeze is an inference reference")
                import torch._inductor.config as inductor_config

                inductor_config.freezing = True  # weights as constants: batch-norm folded
            net = torch.compile(model, backend=a.backend, mode=mode)  # type: ignore[assignment]
        fixed = {"workload": "resnet50", "precision": "bf16", "channels_last": True}
        ns = argparse.Namespace(**{**vars(a), **fixed})
        step = loop.make_step(ns, device, net)
        for _ in range(FIRST_STEPS):
            step()
    loop.sync(device)
    first_s = time.perf_counter() - t0
    seconds = loop.timed(step, a.steps, a.warmup, device)
    return {
        "samples_per_s": a.batch_size * a.steps / seconds,
        "window_s": seconds,
        "first_steps_s": first_s,
        "peak_mem_bytes": torch.cuda.max_memory_allocated(device)
        if device.type == "cuda"
        else None,
    }
