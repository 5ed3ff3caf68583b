"""PyTorch under the harness: devices and DDP, precision and the speed switches, model, optimizer
and data, CUDA graphs and the batch search of ``--preset max``, CUDA synchronization and per-step
CUDA-event timing, peak memory, OOM."""

from __future__ import annotations

import dataclasses
import gc
import os
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any, ClassVar

import torch
import torch.distributed as dist
from torch import nn

from zbench.contract.config import RunConfig
from zbench.contract.workloads import WORKLOADS
from zbench.runners.harness import Adapter, BadInput, Prepared, StepTimer, Unavailable
from zbench.runners.torch import env as envinfo
from zbench.runners.torch import prewarm, tuning
from zbench.runners.torch.graphs import GraphedStep, graph_mode
from zbench.runners.torch.launch import ENV_INIT
from zbench.runners.torch.models import build_model
from zbench.runners.torch.tasks import Shape, Task
from zbench.runners.torch.timing import CudaEventTimer

COMPILE_STEPS = 2  # steps timed apart as compile time: forward+backward graphs, then a recompile


class TorchAdapter(Adapter):
    """The harness's PyTorch adapter: device and DDP, precision and speed switches, model, step."""

    framework: ClassVar[str] = "torch"

    def __init__(self) -> None:
        self.rank = int(os.environ.get("RANK", "0"))
        self.world = int(os.environ.get("WORLD_SIZE", "1"))
        self.local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        self.distributed = self.world > 1
        self.device = torch.device("cpu")
        self.memory_format = torch.contiguous_format
        self.task: Task | None = None
        self.settings: dict[str, Any] = {}
        self.graphs = "off"  # what runs: "step", "compile" or "off" (after any fallback)
        self._built: tuple[nn.Module, nn.Module, torch.optim.Optimizer | None] | None = None
        self._stream: Any = None  # the capture stream (DDP is made on it too)
        self._prewarm: prewarm.BackwardPrewarm | None = None

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
            backend = "nccl" if self.device.type == "cuda" else "gloo"
            store = os.environ.get(ENV_INIT)  # the local launcher's file store; else torchrun's
            if store:
                dist.init_process_group(
                    backend, init_method=store, rank=self.rank, world_size=self.world
                )
            else:
                dist.init_process_group(backend)
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
        self._data, self._data_source, self._seed = cfg.data, cfg.data_source, cfg.seed + self.rank
        settings = envinfo.apply_speed_settings(cfg, self.task.data_label, self.device.type)
        settings.update(self._max_settings(cfg))
        self.settings = settings
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

    def _max_settings(self, cfg: RunConfig) -> dict[str, Any]:
        """CUDA graphs, compile mode and cache, DDP and gradient compression, as they will run
        (a mode that cannot run here is turned off and the note says why)."""
        kind = self.task.kind if self.task is not None else "cls"
        graphs, note = graph_mode(cfg, self.device.type, kind, self.distributed)
        self.graphs = graphs
        out: dict[str, Any] = {
            "graphs": graphs,
            "graphs_note": note,
            "compile_mode": cfg.compile_mode if cfg.compile else None,
            "compile_cache": tuning.compile_cache() if cfg.compile else None,
            "ddp": None,
            "grad_compression": None,
            "batch_search": None,
            "freezing": self._freezing(cfg),
            "inductor": (
                tuning.tune_kernels(cfg.workload, cfg.mode) if self._tunes_kernels(cfg) else None
            ),
        }
        if self.distributed and cfg.mode == "train":
            opts = tuning.ddp_options(cfg.preset == "max")
            out["ddp"] = {**opts, "compiled": "torch.compile(DDP(model))" if cfg.compile else None}
            out["grad_compression"] = (
                "bf16 (DDP bf16_compress_hook: gradients all-reduced in bf16, changes numerics)"
                if cfg.grad_compression == "bf16"
                else "none"
            )
        if cfg.compile and cfg.preset == "max":
            # Static shapes: each batch tried by the search compiles its own specialized kernels.
            import torch._dynamo

            torch._dynamo.config.automatic_dynamic_shapes = False
        return out

    def _tunes_kernels(self, cfg: RunConfig) -> bool:
        """Inductor's kernel tuning (tuning.max_inductor) under ``--preset max`` on a GPU."""
        return (
            cfg.preset == "max"
            and bool(cfg.compile)
            and self.device.type == "cuda"
            and tuning.compile_backend() == "inductor"
        )

    def _freezing(self, cfg: RunConfig) -> bool:
        """Inductor freezing under ``--preset max`` inference on a GPU (tuning.freeze_for_inference):
        where the kernels are tuned, for inference; another compile backend has no such pass, and
        the settings say so."""
        return cfg.mode != "train" and self._tunes_kernels(cfg)

    def _model(self, cfg: RunConfig) -> tuple[nn.Module, nn.Module, torch.optim.Optimizer | None]:
        """Model, the module a step calls (DDP, compiled) and optimizer, made once per process."""
        if self._built is not None:
            return self._built
        assert self.task is not None and cfg.image_size
        device = self.device
        model = build_model(cfg.workload, self.task.num_classes, cfg.image_size).to(device)
        model = model.to(memory_format=self.memory_format)
        train = cfg.mode == "train"
        model.train(train)
        net: nn.Module = model
        if self.graphs == "step":
            self._stream = torch.cuda.Stream(device)
        if self.distributed and train:
            on_stream: AbstractContextManager[Any] = (
                torch.cuda.stream(self._stream) if self._stream is not None else nullcontext()
            )
            with on_stream:  # DDP made on the capture stream, as capture with DDP requires
                ddp = nn.parallel.DistributedDataParallel(
                    model,
                    device_ids=[device.index] if device.type == "cuda" else None,
                    **tuning.ddp_options(cfg.preset == "max"),
                )
            if cfg.grad_compression == "bf16":
                from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

                ddp.register_comm_hook(None, default_hooks.bf16_compress_hook)
            net = ddp
        if cfg.compile:
            if self._freezing(cfg):
                tuning.freeze_for_inference()
            net = tuning.compile_module(net, cfg.compile_mode)
        opt = envinfo.make_optimizer(model.parameters(), device.type) if train else None
        self._built = (model, net, opt)
        return self._built

    def _task(self, batch: int) -> Task:
        assert self.task is not None
        if batch == self.task.shape.batch_size:
            return self.task
        shape = dataclasses.replace(self.task.shape, batch_size=batch)
        return Task(shape, self._data, self._data_source, "train", self._seed)

    def build(self, cfg: RunConfig) -> Callable[[], Any]:
        assert cfg.batch_size
        return self._step(cfg, cfg.batch_size)

    def _step(self, cfg: RunConfig, batch_size: int) -> Callable[[], Any]:
        assert cfg.precision
        task, device = self._task(batch_size), self.device
        model, net, opt = self._model(cfg)
        train = cfg.mode == "train"
        dtype = envinfo.AUTOCAST_DTYPES.get(cfg.precision)
        graphed = self.graphs == "step"
        autocast: Callable[[], AbstractContextManager[Any]] = (
            # Capture needs autocast's weight-cast cache off; warm-up uses the same context so a
            # compiled module's guards see one autocast state.
            (lambda: torch.autocast(device.type, dtype=dtype, cache_enabled=not graphed))
            if dtype
            else nullcontext
        )
        batches = task.batches(cfg.data_source == "synthetic-device", cfg.workers)
        mark = self.graphs == "compile"
        if graphed:
            body: Callable[[Any], Any]
            if train:
                assert opt is not None

                def body(batch: Any) -> torch.Tensor:
                    loss = task.loss(net, batch)
                    loss.backward()
                    opt.step()
                    return loss.detach()
            else:

                def body(batch: Any) -> torch.Tensor:
                    return task.forward(net, batch)

            why = (
                self._prewarms(task, bool(cfg.compile)) if train and self._prewarm is None else None
            )
            if why is not None:
                batch = task.device_batch()
                self._prewarm = prewarm.BackwardPrewarm(
                    model, task.loss, batch, autocast, device, why
                ).start()
            return GraphedStep(
                body,
                batches,
                train=train,
                zero_grad=lambda: opt.zero_grad(set_to_none=True) if opt else None,
                autocast=autocast,
                distributed=self.distributed and train,
                stream=self._stream,
                on_fallback=self._graphs_fell_back,
                before_capture=self._prewarm.join if self._prewarm is not None else None,
            )
        if not train:

            def infer() -> None:
                batch = next(batches)
                if mark:
                    torch.compiler.cudagraph_mark_step_begin()
                with torch.inference_mode(), autocast():
                    task.forward(net, batch)

            return infer
        assert opt is not None
        scaler = torch.amp.GradScaler(device.type) if cfg.precision == "fp16" else None

        def train_step() -> None:
            batch = next(batches)
            if mark:
                torch.compiler.cudagraph_mark_step_begin()
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

    def _prewarms(self, task: Task, compiled: bool) -> str | None:
        """Why the backward's cuDNN plans are tuned ahead in a thread (prewarm.py), or None: on a
        GPU with the autotuner on, a task whose batches have one shape, and prewarm.wanted()."""
        if self.device.type != "cuda" or not torch.backends.cudnn.benchmark or task.kind == "det":
            return None
        total = torch.cuda.get_device_properties(self.device).total_memory
        on, why = prewarm.wanted(task.kind, total, compiled)
        if not on:
            self.settings["cudnn_prewarm"] = {"state": "off", "why": why}
        return why if on else None

    def _graphs_fell_back(self, reason: str) -> None:
        print(f"zbench.runners: CUDA graph capture failed, running uncaptured: {reason}")
        self.graphs = "off"
        self.settings["graphs"] = "off"
        self.settings["graphs_note"] = f"off: capture failed ({reason})"

    def choose_batch(self, cfg: RunConfig, candidates: tuple[int, ...]) -> int | None:
        try:
            batches, source = tuning.candidates(candidates)
        except ValueError as exc:
            raise BadInput(str(exc)) from None
        fields = {
            "graphs": self.graphs,
            "freezing": self._freezing(cfg),
            "inductor": self.settings.get("inductor"),
            "gpus": self.world,
        }
        key = tuning.search_key(cfg, batches, fields)
        hit = tuning.cached_search(key) if self.rank == 0 else None
        if self.distributed:  # every rank takes rank 0's answer
            box = [hit]
            dist.broadcast_object_list(box, src=0)
            hit = box[0]
        if hit is not None:  # this search was made on this machine before: its answer, said so
            print(f"zbench.runners: batch {hit['chosen']} per GPU, measured {hit['measured_at']}")
            self.settings["batch_search"] = {**hit, "candidates": list(batches), "source": source}
            return int(hit["chosen"])
        print(f"zbench.runners: measuring batch sizes {', '.join(map(str, batches))} per GPU")
        chosen, record = tuning.search(
            batches,
            lambda b: self._step(cfg, b),
            lambda: self.sync(None),
            self.is_oom,
            self.device,
            self.distributed,
            self._release,
        )
        if chosen is None:
            raise torch.OutOfMemoryError(f"every batch tried ran out of memory: {batches}")
        self.settings["batch_search"] = {**record, "candidates": list(batches), "source": source}
        if self.rank == 0:
            tuning.store_search(key, record)
        return chosen

    def _release(self) -> None:
        """Free a measured candidate's graph and activations before the next one."""
        gc.collect()
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
            torch.cuda.empty_cache()

    def late_settings(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self._prewarm is not None:
            out["cudnn_prewarm"] = self._prewarm.note()
        if self.settings.get("compile_cache") is not None:
            out["compile_cache"] = {**self.settings["compile_cache"], **tuning.cache_counts()}
        return out

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
