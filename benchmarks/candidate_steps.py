"""The steps benchmarks/peak_candidates.py measures: the table of candidates (``CANDIDATES``, each
a ``Candidate``: one change, or several, to the plain compiled ResNet-50 step) and how its step is built, compiled and captured; and zbench's own
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

# The candidates peak_candidates.py measures. Most wanted first: a later one is skipped when --budget runs out.
CANDIDATES = (
    Candidate("graph", graph=True, note="the whole step in one CUDA graph (--preset max today)"),
    Candidate("batch384", batch=384, graph=True, note="graph, batch 384"),
    Candidate("foreach", graph=True, optimizer="foreach", note="graph, foreach SGD"),
    Candidate("batch512", batch=512, graph=True, note="graph, batch 512"),
    Candidate(
        "aggressive",
        graph=True,
        inductor=(("aggressive_fusion", True),),
        note="graph + aggressive fusion",
    ),
    Candidate("cdt", graph=True, inductor=CDT, note="graph + coordinate-descent tuning"),
    Candidate(
        "pointwise",
        graph=True,
        inductor=(*CDT, ("max_autotune_pointwise", True)),
        note="graph + cdt + pointwise autotuning",
    ),
    Candidate("cdt384", batch=384, graph=True, inductor=CDT, note="graph + cdt, batch 384"),
    Candidate(
        "combo",
        graph=True,
        inductor=(("combo_kernels", True),),
        note="graph + combo kernels (independent small kernels launched as one)",
    ),
    Candidate(
        "conv1x1mm",
        graph=True,
        inductor=(("conv_1x1_as_mm", True),),
        note="graph + 1x1 convolutions as matmuls (cuBLAS)",
    ),
    Candidate(
        "pad4",
        graph=True,
        stem_channels=4,
        note="graph + input and stem padded to 4 channels (MLPerf's NHWC layout)",
    ),
    Candidate("pad8", graph=True, stem_channels=8, note="graph + input and stem padded to 8"),
    Candidate(
        "mpfallback",
        graph=True,
        setup=("maxpool_fallback",),
        note="graph + max-pool backward by ATen's NHWC kernel, not a Triton fusion",
    ),
    Candidate(
        "cudnnall",
        graph=True,
        setup=("cudnn_all",),
        note="graph + cuDNN autotuner tries every algorithm (benchmark_limit 0)",
    ),
    Candidate(
        "heuristic",
        graph=True,
        setup=("cudnn_heuristic",),
        note="graph + cuDNN's heuristic algorithms (autotuner off)",
    ),
    Candidate(
        "cdt-combo",
        graph=True,
        inductor=(*CDT, ("combo_kernels", True)),
        note="graph + cdt + combo kernels",
    ),
    Candidate("cdt-pad4", graph=True, inductor=CDT, stem_channels=4, note="graph + cdt + pad4"),
    Candidate(
        "cdt-cudnnall",
        graph=True,
        inductor=CDT,
        setup=("cudnn_all",),
        note="graph + cdt + cuDNN autotuner tries every algorithm",
    ),
    Candidate(
        "cdt-1x1mm",
        graph=True,
        inductor=(*CDT, ("conv_1x1_as_mm", True)),
        note="graph + cdt + 1x1 convolutions as matmuls",
    ),
    Candidate(
        "cdt-combo-pad4",
        graph=True,
        inductor=(*CDT, ("combo_kernels", True)),
        stem_channels=4,
        note="graph + cdt + combo kernels + pad4",
    ),
    Candidate(
        "cdt-combo-384",
        batch=384,
        graph=True,
        inductor=(*CDT, ("combo_kernels", True)),
        note="graph + cdt + combo kernels, batch 384",
    ),
    Candidate(
        "cdt-pad4-384",
        batch=384,
        graph=True,
        inductor=CDT,
        stem_channels=4,
        note="graph + cdt + pad4, batch 384",
    ),
    # How inductor shapes its reductions (the batch-norm statistics and their backward, over half
    # of the step), each on top of cdt: torch 2.11's defaults are in the output's inductor_defaults.
    Candidate(
        "cdt-tile",
        graph=True,
        inductor=(*CDT, ("triton.tile_reductions", True)),
        note="graph + cdt + reductions tiled in two dimensions",
    ),
    Candidate(
        "cdt-nd",
        graph=True,
        inductor=(*CDT, ("triton.prefer_nd_tiling", True)),
        note="graph + cdt + n-dimensional tiling preferred",
    ),
    Candidate(
        "cdt-multi",
        graph=True,
        inductor=(*CDT, ("triton.multi_kernel", 1)),
        note="graph + cdt + multi-kernel (persistent or looped reduction, chosen by timing)",
    ),
    Candidate(
        "cdt-coop",
        graph=True,
        inductor=(*CDT, ("triton.cooperative_reductions", True)),
        note="graph + cdt + cooperative reductions (one reduction split over blocks)",
    ),
    Candidate(
        "cdt-nomix",
        graph=True,
        inductor=(*CDT, ("triton.mix_order_reduction", False)),
        note="graph + cdt, mix-order reduction off",
    ),
    Candidate(
        "cdt-wide",
        graph=True,
        inductor=(
            *CDT,
            ("coordinate_descent_check_all_directions", True),
            ("coordinate_descent_search_radius", 2),
        ),
        note="graph + cdt searching every direction, two steps out (a wider tuning)",
    ),
    Candidate(
        "cdt-bfusion",
        graph=True,
        inductor=(*CDT, ("benchmark_fusion", True)),
        note="graph + cdt + fusion decisions timed, not guessed",
    ),
    # zbench's own `--preset max` training step, built by its runner (candidate_steps.zbench_step).
    Candidate("zbench", graph=True, note="zbench's --preset max step (its runner), batch 256"),
    Candidate("zbench384", batch=384, graph=True, note="zbench's --preset max step, batch 384"),
    Candidate(
        "zbench-combo",
        graph=True,
        inductor=(("combo_kernels", True),),
        note="zbench's --preset max step + combo kernels",
    ),
    Candidate(
        "zbench-nd",
        graph=True,
        inductor=(("triton.prefer_nd_tiling", True),),
        note="zbench's --preset max step + n-dimensional tiling preferred",
    ),
    Candidate(
        "zbench-mpfb",
        graph=True,
        setup=("maxpool_fallback",),
        note="zbench's --preset max step + max-pool backward by ATen's NHWC kernel",
    ),
    Candidate(
        "zbench-mpfb-combo",
        graph=True,
        inductor=(("combo_kernels", True),),
        setup=("maxpool_fallback",),
        note="zbench's --preset max step + max-pool backward by ATen + combo kernels",
    ),
    # The three small switches not yet timed on zbench's own step, alone and together: each read
    # +0.2-0.3% over the cdt loop (1x1 as matmuls, every cuDNN algorithm) or was never measured
    # (aggressive fusion); together they might close the last 1% to 7,500 img/s on an H200.
    Candidate(
        "zbench-aggr",
        graph=True,
        inductor=(("aggressive_fusion", True),),
        note="zbench's --preset max step + aggressive fusion",
    ),
    Candidate(
        "zbench-cudnnall",
        graph=True,
        setup=("cudnn_all",),
        note="zbench's --preset max step + cuDNN autotuner tries every algorithm",
    ),
    Candidate(
        "zbench-1x1mm",
        graph=True,
        inductor=(("conv_1x1_as_mm", True),),
        note="zbench's --preset max step + 1x1 convolutions as matmuls",
    ),
    Candidate(
        "zbench-stack",
        graph=True,
        inductor=(("aggressive_fusion", True), ("conv_1x1_as_mm", True)),
        setup=("cudnn_all",),
        note="zbench's --preset max step + aggressive fusion + 1x1 as matmuls + every cuDNN algorithm",
    ),
    # How inductor's Triton kernels read memory, on zbench's step: the batch-norm kernels that hold
    # over half of the step are memory-bound, and Hopper has TMA (tensor descriptors) and block
    # pointers that inductor does not use by default; reductions as one kernel or looped.
    Candidate(
        "zbench-tma",
        graph=True,
        inductor=(("triton.use_tensor_descriptor", True),),
        note="zbench's --preset max step + loads and stores through TMA tensor descriptors",
    ),
    Candidate(
        "zbench-blockptr",
        graph=True,
        inductor=(("triton.use_block_ptr", True),),
        note="zbench's --preset max step + block pointers",
    ),
    Candidate(
        "zbench-nopersist",
        graph=True,
        inductor=(("triton.persistent_reductions", False),),
        note="zbench's --preset max step, every reduction looped (no persistent reductions)",
    ),
    Candidate(
        "zbench-nosplit",
        graph=True,
        inductor=(("split_reductions", False),),
        note="zbench's --preset max step, large reductions not split in two kernels",
    ),
    Candidate(
        "freeze",
        mode="infer",
        batch=512,
        inductor=(("freezing", True),),
        note="inference: freezing",
    ),
    Candidate(
        "freeze-graph",
        mode="infer",
        batch=512,
        graph=True,
        inductor=(("freezing", True),),
        note="inference: freezing + one CUDA graph",
    ),
    Candidate(
        "freeze-graph-heuristic",
        mode="infer",
        batch=512,
        graph=True,
        inductor=(("freezing", True),),
        setup=("cudnn_heuristic",),
        note="inference: freezing + one CUDA graph + cuDNN's heuristic algorithms",
    ),
)
NAMES = tuple(c.name for c in CANDIDATES)
# The sides built by zbench's own runner (zbench_step) are the candidates named after it.
ZBENCH_SIDES = tuple(c.name for c in CANDIDATES if c.name.startswith("zbench"))
BY_NAME = {c.name: c for c in CANDIDATES}
REF_BATCH = {"train": 256, "infer": 512}


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
    residual add fused in; torch 2.11) or a scatter-add (later torch); this makes it call ATen's
    CUDA kernel instead."""
    import torch
    from torch._inductor import decomposition, lowering

    op = torch.ops.aten.max_pool2d_with_indices_backward
    for overload in (op, op.default):  # newer torch decomposes it to a scatter-add first
        decomposition.decompositions.pop(overload, None)
    lowering.lowerings.pop(op, None)
    lowering.lowerings.pop(op.default, None)
    lowering.make_fallback(op, warn=False)
    # The lowerings table is not in the FX-graph or AOTAutograd cache keys: a cache filled without
    # this change would hand back the fused gather. Off here, so the graph is lowered again (the
    # tuned kernels' block sizes, kept by kernel source, are still reused).
    import torch._functorch.config as functorch_config
    import torch._inductor.config as inductor_config

    inductor_config.fx_graph_cache = False
    functorch_config.enable_autograd_cache = False


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
    for name in c.setup:  # again: prepare turns the compile caches on (tuning.compile_cache)
        SETUPS[name]()
    step = runner.build(cfg)
    for _ in range(torch_adapter.COMPILE_STEPS):
        step()
    return step
