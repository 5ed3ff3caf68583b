"""The steps benchmarks/peak_candidates.py measures: a ``Candidate`` (one change, or several, to the
plain compiled ResNet-50 step) and how its step is built, compiled and captured; and zbench's own
``--preset max`` step, built by its runner. Each runs in a process of its own (peak_candidates.py
says why)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any


@dataclasses.dataclass(frozen=True)
class Candidate:
    name: str
    mode: str = "train"
    batch: int = 256
    graph: bool = False
    optimizer: str = "fused"
    inductor: tuple[tuple[str, Any], ...] = ()
    stem_channels: int = 3  # 4 or 8: the input and the first convolution padded with zeros
    setup: tuple[str, ...] = ()  # process-wide switches, by name: SETUPS below
    note: str = ""


CDT = (("coordinate_descent_tuning", True),)


def _bf16(cache: bool = True) -> Any:
    import torch

    return torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=cache)


def _model(batch: int, stem_channels: int = 3) -> tuple[Any, Any, Any]:
    import torch

    from benchmarks.reference import models

    torch.manual_seed(0)
    model = models.build("resnet50", 224)
    x, y = models.batch("resnet50", 224, batch, torch.device("cuda"), torch.channels_last)
    if stem_channels > 3:
        model, x = pad_stem(model, x, stem_channels)
    model = model.cuda().to(memory_format=torch.channels_last)
    return model, x, y


def pad_stem(model: Any, x: Any, channels: int) -> tuple[Any, Any]:
    """The same network on ``channels`` input channels: the extra channels of the input are zeros
    and so are their weights in the first convolution, whose gradients are then zero too (with
    weight decay and momentum they stay zero). MLPerf's NHWC ResNet-50 pads its input to 4."""
    import torch

    old = model.conv1
    model.conv1 = torch.nn.Conv2d(
        channels, old.out_channels, old.kernel_size, old.stride, old.padding, bias=False
    ).to(old.weight.device)
    with torch.no_grad():
        model.conv1.weight.zero_()
        model.conv1.weight[:, :3] = old.weight
    pad = x.new_zeros((x.shape[0], channels - 3, *x.shape[2:]))
    return model, torch.cat((x, pad), 1).contiguous(memory_format=torch.channels_last)


def _maxpool_fallback() -> None:
    """Inductor lowers max-pool's backward to a Triton gather over the pooling windows (with the
    residual add fused in); this makes it call ATen's CUDA kernel instead."""
    import torch
    from torch._inductor import lowering

    op = torch.ops.aten.max_pool2d_with_indices_backward
    lowering.lowerings.pop(op, None)
    lowering.lowerings.pop(op.default, None)
    lowering.make_fallback(op, warn=False)


def _cudnn_all() -> None:
    import torch

    torch.backends.cudnn.benchmark_limit = 0  # 0: try every algorithm (PyTorch's default: 10)


def _cudnn_heuristic() -> None:
    """cuDNN's heuristic choice of each convolution's algorithm, not the autotuner's timed one. The
    autotuner's results live in the process, so every start pays them again (benchmarks/
    start_split.py's ``cudnn-off``); this measures what the heuristic choice costs per step."""
    import torch

    torch.backends.cudnn.benchmark = False


SETUPS: dict[str, Callable[[], None]] = {
    "maxpool_fallback": _maxpool_fallback,
    "cudnn_all": _cudnn_all,
    "cudnn_heuristic": _cudnn_heuristic,
}


def _compile(model: Any, c: Candidate) -> Any:
    import torch

    return torch.compile(model)  # inductor's options: set by serve() for the whole process


def _optimizer(model: Any, kind: str) -> Any:
    import torch

    from benchmarks.reference import loop

    fused = {"fused": True} if kind == "fused" else {"foreach": True}
    return torch.optim.SGD(model.parameters(), lr=loop.LR, momentum=loop.MOMENTUM, **fused)


def _capture(body: Callable[[], Any], before: Callable[[], None]) -> Callable[[], None]:
    """PyTorch's whole-network capture recipe: warm-up on a side stream (compiles, autotunes,
    makes the momentum buffers), ``before`` (gradients to None), capture, two checked replays."""
    import torch

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            before()
            body()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    before()
    with torch.cuda.graph(graph):
        out = body()
    for _ in range(2):
        graph.replay()
    if out is not None and out.numel() == 1 and not math.isfinite(float(out)):
        raise RuntimeError(f"captured step's loss is {float(out)}")
    return graph.replay


def make_step(c: Candidate) -> Callable[[], None]:
    """The candidate's step, compiled (and captured) by its first calls."""
    import torch
    import torch.nn.functional as F

    model, x, y = _model(c.batch, c.stem_channels)
    net = _compile(model, c)
    if c.mode == "infer":
        model.eval()

        def infer() -> Any:
            with torch.inference_mode(), _bf16(cache=not c.graph):
                return net(x)

        if c.graph:
            return _capture(infer, lambda: None)
        for _ in range(3):
            infer()

        def step() -> None:
            infer()

        return step
    opt = _optimizer(model, c.optimizer)

    def train() -> Any:
        with _bf16(cache=not c.graph):
            out = net(x)
        loss = F.cross_entropy(out.float(), y)
        loss.backward()
        opt.step()
        return loss.detach()

    if c.graph:
        return _capture(train, lambda: opt.zero_grad(set_to_none=True))

    def step() -> None:
        opt.zero_grad(set_to_none=True)
        train()

    for _ in range(3):
        step()
    return step


def zbench_step(c: Candidate) -> Callable[[], None]:
    """zbench's own step, as ``zbench run resnet50 --preset max --batch-size B`` builds it: the
    runner's resolve and adapter (its inductor switches, layout, whole-step graph, loss and
    optimizer), captured by its first calls. Its data folder is ZBENCH_HOME (``--zbench-home``),
    so a later ``zbench run`` there starts warm."""
    from zbench.contract.config import RunConfig
    from zbench.contract.resolve import resolve
    from zbench.runners.torch import adapter as torch_adapter

    cfg = resolve(RunConfig("resnet50", preset="max", mode=c.mode, batch_size=c.batch)).config
    runner = torch_adapter.TorchAdapter()
    runner.prepare(cfg)
    step = runner.build(cfg)
    for _ in range(torch_adapter.COMPILE_STEPS):
        step()
    return step
