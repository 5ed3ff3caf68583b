"""The whole step in one CUDA graph: forward, backward and the fused optimizer step (training), or the
forward (inference), captured once with ``torch.cuda.graphs`` and replayed every step.

PyTorch's whole-network capture recipe (docs: CUDA Graphs, "whole network capture" and "usage with
DistributedDataParallel"): static input tensors; warm-up iterations on the capture stream (they
compile, run cuDNN's autotuner, make the optimizer's momentum buffers and, under DDP, rebuild its
buckets: 11 at least there); gradients set to None before capture so backward allocates them in the
graph's pool (under DDP they are views of its buckets); autocast with its weight-cast cache off.
Capture happens on the step's first call, so the harness times it with compilation as ``compile_s``.
A capture that fails falls back to the uncaptured step, and the result's settings say so; under
DDP every rank falls back together, since a graph with a collective must be replayed by all ranks.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

import torch
import torch.distributed as dist

from zbench.contract.config import RunConfig

DDP_WARMUP = 11  # DDP's reducer needs 11 eager iterations before its backward can be captured
WARMUP = 3
CHECK_REPLAYS = 2  # replays whose loss must be finite before the graph is trusted


class GraphedStep:
    """A step function made of ``body(batch) -> loss or output``, captured on its first call.

    ``batches`` yields device batches; a batch that is not the captured one (real or host data) is
    copied into the static tensors before each replay, outside the graph. ``on_fallback`` is told
    the reason when capture fails and the step runs uncaptured instead; ``before_capture`` runs
    after the warm-up, before the capture (it waits for work other threads do on the GPU)."""

    def __init__(
        self,
        body: Callable[[Any], torch.Tensor],
        batches: Any,
        *,
        train: bool,
        zero_grad: Callable[[], None],
        autocast: Callable[[], AbstractContextManager[Any]],
        distributed: bool,
        stream: torch.cuda.Stream,
        on_fallback: Callable[[str], None],
        before_capture: Callable[[], None] | None = None,
    ) -> None:
        self.body, self.batches, self.train = body, batches, train
        self.before_capture = before_capture  # what must finish first (prewarm.BackwardPrewarm)
        self.zero_grad, self.autocast, self.distributed = zero_grad, autocast, distributed
        self.stream, self.on_fallback = stream, on_fallback
        self.graph: torch.cuda.CUDAGraph | None = None
        self.static: Any = None
        self.out: torch.Tensor | None = None
        self.fallback: Callable[[], Any] | None = None

    def _run_body(self, batch: Any) -> torch.Tensor:
        grad = torch.enable_grad() if self.train else torch.inference_mode()
        with grad, self.autocast():
            return self.body(batch)

    def _eager(self) -> Any:
        batch = next(self.batches)
        if self.train:
            self.zero_grad()
        return self._run_body(batch)

    def _capture(self) -> None:
        self.static = next(self.batches)
        current = torch.cuda.current_stream()
        self.stream.wait_stream(current)
        with torch.cuda.stream(self.stream):
            for _ in range(DDP_WARMUP if self.distributed else WARMUP):
                if self.train:
                    self.zero_grad()
                self._run_body(self.static)
        current.wait_stream(self.stream)
        if self.before_capture is not None:
            self.before_capture()
        ok, reason = True, ""
        try:
            if self.train:
                self.zero_grad()  # None: backward allocates the gradients in the graph's pool
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph, stream=self.stream):
                out = self._run_body(self.static)
            self.graph, self.out = graph, out
        except RuntimeError as exc:
            ok, reason = False, f"{type(exc).__name__}: {exc}".splitlines()[0][:200]
        if self.distributed:  # every rank replays the graph, or none does
            flag = torch.tensor([1 if ok else 0], device=current.device)
            dist.all_reduce(flag, op=dist.ReduceOp.MIN)
            if ok and not int(flag.item()):
                ok, reason = False, "another rank could not capture its step"
        if ok:
            reason = self._check()
            ok = not reason
        if not ok:
            self.graph, self.out = None, None
            self.fallback = self._eager
            self.on_fallback(reason)

    def _check(self) -> str:
        """Replays before the run: a training graph's loss must stay finite (synchronizes, which is
        fine here: this is set-up, outside every measured window)."""
        assert self.graph is not None and self.out is not None
        for _ in range(CHECK_REPLAYS):
            self.graph.replay()
        if self.train:
            value = float(self.out.float())
            if not math.isfinite(value):
                return f"the captured step's loss is {value} after {CHECK_REPLAYS} replays"
        return ""

    def __call__(self) -> Any:
        if self.fallback is not None:
            return self.fallback()
        if self.graph is None:
            self._capture()
            if self.fallback is not None:
                return self.fallback()
        assert self.graph is not None
        batch = next(self.batches)
        if batch is not self.static:
            _copy_into(self.static, batch)
        self.graph.replay()
        return None


def _copy_into(static: Any, batch: Any) -> None:
    """Copy a new batch (tensors, or tuples/lists of them) into the captured static tensors."""
    if isinstance(static, torch.Tensor):
        if static is not batch:
            static.copy_(batch, non_blocking=True)
        return
    for s, b in zip(static, batch, strict=True):
        _copy_into(s, b)


def graph_mode(cfg: RunConfig, device_type: str, kind: str, distributed: bool) -> tuple[str, str]:
    """What ``--graphs`` can be here (``step``, ``compile`` or ``off``) and the note that says why:
    a mode that cannot run with this device, task kind (``det``: lists of images), precision or
    DDP option is turned off, and the note names the reason."""
    graphs, note = cfg.graphs or "off", ""
    if graphs == "step":
        if device_type != "cuda":
            graphs, note = (
                "off",
                "off: CUDA graphs need a GPU (torch.cuda.graphs); ran uncaptured",
            )
        elif kind == "det":
            graphs, note = "off", "off: lists of images and data-dependent shapes"
        elif cfg.precision == "fp16" and cfg.mode == "train":
            graphs, note = "off", "off: fp16's GradScaler reads its overflow flag on the host"
        elif distributed and cfg.grad_compression != "none":
            graphs, note = "off", "off: the compression hook's futures are not captured"
        else:
            note = "step: forward, backward and optimizer step replayed as one CUDA graph"
            if cfg.mode != "train":
                note = "step: the forward replayed as one CUDA graph"
    elif graphs == "compile":
        note = f"compile: torch.compile mode {cfg.compile_mode} (CUDA graph trees)"
        if device_type != "cuda":
            graphs, note = "off", "off: torch.compile's CUDA graphs need a GPU"
    return graphs, note or "off"
