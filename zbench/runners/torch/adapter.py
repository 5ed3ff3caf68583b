"""PyTorch under the harness: devices and DDP, precision and the speed switches, model, optimizer
and data, CUDA synchronization and per-step CUDA-event timing, peak memory, OOM."""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any, ClassVar

import torch
import torch.distributed as dist
from torch import nn

from zbench.contract.config import WORKLOADS, RunConfig
from zbench.runners.harness import Adapter, BadInput, Prepared, StepTimer, Unavailable
from zbench.runners.torch import env as envinfo
from zbench.runners.torch.models import build_model
from zbench.runners.torch.tasks import Shape, Task

COMPILE_STEPS = 2  # steps timed apart as compile time: forward+backward graphs, then a recompile


class CudaEventTimer(StepTimer):
    """GPU time of each step from CUDA events made before the window (no allocation per step)."""

    source: ClassVar[str] = "cuda-events"

    def __init__(self, steps: int) -> None:
        self._pairs = [
            (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
            for _ in range(steps)
        ]

    def begin(self, i: int) -> None:
        self._pairs[i][0].record()

    def end(self, i: int) -> None:
        self._pairs[i][1].record()

    def times_s(self) -> list[float]:
        return [a.elapsed_time(b) / 1000.0 for a, b in self._pairs]


class TorchAdapter(Adapter):
    framework: ClassVar[str] = "torch"

    def __init__(self) -> None:
        self.rank = int(os.environ.get("RANK", "0"))
        self.world = int(os.environ.get("WORLD_SIZE", "1"))
        self.local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        self.distributed = self.world > 1
        self.device = torch.device("cpu")
        self.memory_format = torch.contiguous_format
        self.task: Task | None = None

    def prepare(self, cfg: RunConfig) -> Prepared:
        assert cfg.batch_size and cfg.image_size and cfg.precision
        if cfg.device == "cuda" and not torch.cuda.is_available():
            raise Unavailable(
                f"CUDA is not available to torch {torch.__version__}; use --device cpu"
            )
        if cfg.device == "cuda" and self.local_rank >= torch.cuda.device_count():
            visible = torch.cuda.device_count()
            raise BadInput(f"--gpus asks for {self.local_rank + 1}+ GPUs, {visible} visible")
        if cfg.device == "cuda":
            self.device = torch.device("cuda", self.local_rank)
            torch.cuda.set_device(self.device)
        if self.distributed:
            dist.init_process_group("nccl" if self.device.type == "cuda" else "gloo")
        precision_detail = envinfo.apply_precision(cfg.precision)
        torch.manual_seed(cfg.seed + self.rank)
        info = WORKLOADS[cfg.workload]
        if cfg.channels_last:
            self.memory_format = (
                torch.channels_last_3d if info.spatial_dims == 3 else torch.channels_last
            )
        shape = Shape(
            cfg.workload,
            cfg.batch_size,
            cfg.image_size,
            info.num_classes,
            self.memory_format,
            self.device,
        )
        # Indexes a real dataset (and checks what can be checked without decoding it) now, so bad
        # input is reported before a model is built.
        self.task = Task(shape, cfg.data, cfg.data_source, "train", cfg.seed + self.rank)
        settings = envinfo.apply_speed_settings(cfg, self.task.data_label, self.device.type)
        return Prepared(
            data=self.task.data_label,
            num_classes=self.task.num_classes,
            precision_detail=precision_detail,
            tf32=envinfo.tf32_state(),
            memory_format="channels_last" if cfg.channels_last else "contiguous",
            gpus=self.world,
            process_batch=cfg.batch_size,
            settings=settings,
            environment=envinfo.environment(cfg.device),
        )

    def build(self, cfg: RunConfig) -> Callable[[], Any]:
        assert self.task is not None and cfg.image_size and cfg.precision
        task, device = self.task, self.device
        model = build_model(cfg.workload, task.num_classes, cfg.image_size).to(device)
        model = model.to(memory_format=self.memory_format)
        train = cfg.mode == "train"
        model.train(train)
        net: nn.Module = model
        if self.distributed and train:
            net = nn.parallel.DistributedDataParallel(
                model,
                device_ids=[device.index] if device.type == "cuda" else None,
                gradient_as_bucket_view=True,  # gradients are views of the buckets: no copy
            )
        if cfg.compile:
            backend = os.environ.get("ZBENCH_COMPILE_BACKEND", "inductor")
            net = torch.compile(net, backend=backend)  # type: ignore[assignment]
        dtype = envinfo.AUTOCAST_DTYPES.get(cfg.precision)
        autocast: Callable[[], AbstractContextManager[Any]] = (
            (lambda: torch.autocast(device.type, dtype=dtype)) if dtype else nullcontext
        )
        batches = task.batches(cfg.data_source == "synthetic-device", cfg.workers)
        if not train:

            def infer() -> None:
                batch = next(batches)
                with torch.inference_mode(), autocast():
                    task.forward(net, batch)

            return infer
        scaler = torch.amp.GradScaler(device.type) if cfg.precision == "fp16" else None
        opt = envinfo.make_optimizer(model.parameters(), device.type)

        def train_step() -> None:
            batch = next(batches)
            with autocast():
                loss = task.loss(net, batch)
            opt.zero_grad(set_to_none=True)
            if scaler is not None:
                scaler.scale(loss).backward()
                scaler.step(opt)
                scaler.update()
            else:
                loss.backward()
                opt.step()

        return train_step

    def compile_steps(self, cfg: RunConfig) -> int:
        return COMPILE_STEPS if cfg.compile else 0

    def sync(self, last: Any) -> None:
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    def barrier(self) -> None:
        if self.distributed:
            dist.barrier()
            self.sync(None)

    def step_timer(self, steps: int) -> StepTimer | None:
        return CudaEventTimer(steps) if self.device.type == "cuda" else None

    def reduce_window(self, stats: dict[str, Any]) -> dict[str, Any]:
        g = {**stats, "samples_per_s_rank0": stats["samples_per_s"]}
        if not self.distributed:
            return g
        samples = torch.tensor([float(stats["samples"])], dtype=torch.float64, device=self.device)
        window = torch.tensor([float(stats["window_s"])], dtype=torch.float64, device=self.device)
        dist.all_reduce(samples, op=dist.ReduceOp.SUM)
        dist.all_reduce(window, op=dist.ReduceOp.MAX)
        g["samples"] = int(samples.item())
        g["window_s"] = float(window.item())
        g["samples_per_s"] = g["samples"] / g["window_s"]
        return g

    def peak_memory(self) -> tuple[int | None, int | None]:
        if self.device.type != "cuda":
            return None, None
        peaks = torch.tensor(
            [
                torch.cuda.max_memory_allocated(self.device),
                torch.cuda.max_memory_reserved(self.device),
            ],
            dtype=torch.int64,
            device=self.device,
        )
        if self.distributed:
            dist.all_reduce(peaks, op=dist.ReduceOp.MAX)  # the fullest GPU of the job
        return int(peaks[0]), int(peaks[1])

    def is_oom(self, exc: BaseException) -> bool:
        return isinstance(exc, torch.OutOfMemoryError) or (
            isinstance(exc, RuntimeError) and "out of memory" in str(exc).lower()
        )

    def close(self) -> None:
        if self.distributed and dist.is_initialized():
            dist.destroy_process_group()
