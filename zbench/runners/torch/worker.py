"""One runner process (or one rank under torchrun): set up, warm up, measure, report.

Measurement rules (docs/runner-protocol.md): warm-up steps are excluded; the device is synchronized
(and, under DDP, the ranks meet at a barrier) at both edges of each timed window; throughput is the
samples of all ranks divided by the longest rank's window; per-step host times give the median and
p90; with --compile the first steps, which compile, are timed apart and reported as compile_s.
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from collections.abc import Callable
from contextlib import nullcontext
from typing import Any

import torch
import torch.distributed as dist
from torch import nn

from zbench.runners import measure
from zbench.runners.config import WORKLOADS, RunConfig
from zbench.runners.datasets import DatasetError
from zbench.runners.protocol import EventWriter
from zbench.runners.resolve import NUM_CLASSES, check_shape, resolve, workload_info
from zbench.runners.torch import env as envinfo
from zbench.runners.torch.models import build_model
from zbench.runners.torch.tasks import Shape, Task

COMPILE_STEPS = 2  # steps timed apart as compile time: forward+backward graphs, then a recompile
PROGRESS_EVERY_S = 0.5


class _ErrorsOnly:
    """Ranks other than 0 report only their errors (rank 0 speaks for the run)."""

    def __init__(self, writer: EventWriter, rank: int) -> None:
        self._writer, self._rank = writer, rank

    def emit(self, type: str, **fields: Any) -> None:
        if type == "error":
            self._writer.emit("error", rank=self._rank, **fields)

    def phase(self, name: str, **fields: Any) -> None:
        pass

    def progress(self, *args: Any, **fields: Any) -> None:
        pass

    def error(self, kind: str, message: str, **fields: Any) -> None:
        self.emit("error", kind=kind, message=message, **fields)


def _bad_input(out: Any, message: str) -> int:
    """Bad options or input: one line on stderr and a ``config`` error; exit status 2."""
    print(f"zbench.runners: {message}", file=sys.stderr)
    out.error("config", message)
    return 2


def _is_oom(exc: BaseException) -> bool:
    return isinstance(exc, torch.OutOfMemoryError) or (
        isinstance(exc, RuntimeError) and "out of memory" in str(exc).lower()
    )


def run_worker(cfg: RunConfig, writer: EventWriter) -> int:
    distributed = "WORLD_SIZE" in os.environ and int(os.environ["WORLD_SIZE"]) > 1
    rank = int(os.environ.get("RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    out: Any = writer if rank == 0 else _ErrorsOnly(writer, rank)
    if cfg.device == "cuda" and not torch.cuda.is_available():
        out.error(
            "unavailable", f"CUDA is not available to torch {torch.__version__}; use --device cpu"
        )
        return 1
    if cfg.device == "cuda" and local_rank >= torch.cuda.device_count():
        visible = torch.cuda.device_count()
        return _bad_input(out, f"--gpus asks for {local_rank + 1}+ GPUs, {visible} visible")
    reason = check_shape(cfg)
    if reason:
        return _bad_input(out, reason)
    device = torch.device("cuda", local_rank) if cfg.device == "cuda" else torch.device("cpu")
    if device.type == "cuda":
        torch.cuda.set_device(device)
    if distributed:
        dist.init_process_group("nccl" if device.type == "cuda" else "gloo")
    resolved = resolve(cfg)
    rc = cfg2 = None
    try:
        cfg2 = resolved.config
        rc = _run(cfg2, resolved.choices, device, out, rank, world)
    except KeyboardInterrupt:
        out.error("interrupted", "stopped by a signal before the run finished")
        rc = 1
    except DatasetError as exc:
        rc = _bad_input(out, str(exc))
    except BaseException as exc:
        if _is_oom(exc):
            batch = cfg2.batch_size if cfg2 else None
            hint = (
                f"try --batch-size {max(1, (batch or 2) // 2)}"
                if batch and batch > 1
                else "use a smaller --image-size"
            )
            out.error(
                "oom",
                f"out of device memory at batch size {batch} per GPU; {hint}",
                batch_size=batch,
                hint=hint,
            )
        else:
            traceback.print_exc()
            out.error("crash", f"{type(exc).__name__}: {exc}".splitlines()[0][:500])
        rc = 1
    finally:
        if distributed and dist.is_initialized():
            dist.destroy_process_group()
    return rc


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _run(
    cfg: RunConfig, choices: dict[str, str], device: torch.device, out: Any, rank: int, world: int
) -> int:
    assert (
        cfg.batch_size and cfg.steps and cfg.image_size and cfg.precision and cfg.warmup is not None
    )
    distributed = world > 1
    precision_detail = envinfo.apply_precision(cfg.precision)
    torch.manual_seed(cfg.seed + rank)
    info = WORKLOADS[cfg.workload]
    spatial = 5 if cfg.workload == "unet3d" else 4
    memory_format = torch.contiguous_format
    if cfg.channels_last:
        memory_format = torch.channels_last_3d if spatial == 5 else torch.channels_last
    shape = Shape(
        cfg.workload,
        cfg.batch_size,
        cfg.image_size,
        NUM_CLASSES[cfg.workload],
        memory_format,
        device,
    )
    task = Task(shape, cfg.data, cfg.data_source, "train", cfg.seed + rank)
    out.emit(
        "start",
        framework="torch",
        workload=cfg.workload,
        workload_info=workload_info(cfg.workload),
        config=cfg.as_dict(),
        preset_choices=choices,
        data=task.data_label,
        precision_detail=precision_detail,
        tf32=envinfo.tf32_state(),
        memory_format="channels_last" if cfg.channels_last else "contiguous",
        num_classes=task.num_classes,
        gpus=world,
        global_batch=cfg.batch_size * world,
        unit=info.unit,
        environment=envinfo.environment(cfg.device),
    )
    out.phase("setup")
    model = build_model(cfg.workload, task.num_classes, cfg.image_size).to(device)
    model = model.to(memory_format=memory_format)  # type: ignore[call-overload]
    train = cfg.mode == "train"
    model.train(train)
    net: nn.Module = model
    if distributed and train:
        net = nn.parallel.DistributedDataParallel(
            model, device_ids=[device.index] if device.type == "cuda" else None
        )
    if cfg.compile:
        net = torch.compile(net, backend=os.environ.get("ZBENCH_COMPILE_BACKEND", "inductor"))  # type: ignore[assignment]
    dtype = envinfo.AUTOCAST_DTYPES.get(cfg.precision)
    autocast = (lambda: torch.autocast(device.type, dtype=dtype)) if dtype else nullcontext
    scaler = torch.amp.GradScaler(device.type) if cfg.precision == "fp16" and train else None
    opt = torch.optim.SGD(model.parameters(), lr=1e-4, momentum=0.9) if train else None
    batches = task.batches(cfg.data_source == "synthetic-device", cfg.workers)

    def step() -> None:
        batch = next(batches)
        if opt is None:
            with torch.inference_mode(), autocast():
                task.forward(net, batch)
            return
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

    compile_s = None
    if cfg.compile:
        t0 = time.perf_counter()
        for _ in range(COMPILE_STEPS):
            step()
        _sync(device)
        compile_s = time.perf_counter() - t0
    out.phase("warmup", steps=cfg.warmup)
    for _ in range(cfg.warmup):
        step()
    _sync(device)
    out.phase("measure", steps=cfg.steps, repeats=cfg.repeat)
    windows = []
    total = cfg.steps * cfg.repeat
    for r in range(cfg.repeat):
        local = _window(
            step, cfg.steps, device, distributed, cfg.batch_size, out, r * cfg.steps, total, world
        )
        windows.append(_global(local, device, distributed, world))
    result = measure.combine_repeats(windows)
    peak = _peak_memory(device, distributed)
    result.update(
        unit=info.unit,
        batch_size=cfg.batch_size,
        global_batch=cfg.batch_size * world,
        gpus=world,
        samples_per_s_per_gpu=result["samples_per_s"] / world,
        scaling={"mode": "weak", "world_size": world, "per_gpu_batch": cfg.batch_size},
        compile_s=compile_s,
        warmup_steps=cfg.warmup,
        precision=cfg.precision,
        precision_detail=precision_detail,
        data=task.data_label,
        **peak,
    )
    out.emit("result", **result)
    out.phase("done")
    return 0


def _window(
    step: Callable[[], None],
    steps: int,
    device: torch.device,
    distributed: bool,
    batch: int,
    out: Any,
    done: int,
    total: int,
    world: int = 1,
) -> dict[str, Any]:
    _sync(device)
    if distributed:
        dist.barrier()
        _sync(device)
    times: list[float] = []
    # On a GPU, per-step times come from CUDA events recorded around each step: host-side times
    # would only measure how fast kernels are queued (a 100 ms inference step "took" 2 ms).
    events: list[tuple[torch.cuda.Event, torch.cuda.Event]] = []
    cuda = device.type == "cuda"
    t0 = last = time.perf_counter()
    for i in range(steps):
        s = time.perf_counter()
        if cuda:
            pair = (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
            pair[0].record()
        step()
        if cuda:
            pair[1].record()
            events.append(pair)
        now = time.perf_counter()
        times.append(now - s)
        if now - last >= PROGRESS_EVERY_S or i == steps - 1:
            last = now
            # Live rate for the whole job: ranks step in lockstep under DDP, so rank 0's rate times
            # the world size is the global rate (the result event reports the exact all-reduced one).
            out.progress(done + i + 1, total, (i + 1) * batch * world / (now - t0))
    _sync(device)
    window_s = time.perf_counter() - t0
    if cuda:
        times = [start.elapsed_time(end) / 1000.0 for start, end in events]
    stats = measure.window_stats(times, batch, window_s)
    stats["step_time_source"] = "cuda-events" if cuda else "host"
    return stats


def _global(
    w: dict[str, Any], device: torch.device, distributed: bool, world: int
) -> dict[str, Any]:
    """Whole-job figures of one window: all ranks' samples over the slowest rank's window."""
    if not distributed:
        return {**w, "samples_per_s_rank0": w["samples_per_s"]}
    samples = torch.tensor([float(w["samples"])], dtype=torch.float64, device=device)
    window = torch.tensor([float(w["window_s"])], dtype=torch.float64, device=device)
    dist.all_reduce(samples, op=dist.ReduceOp.SUM)
    dist.all_reduce(window, op=dist.ReduceOp.MAX)
    g = dict(w)
    g["samples_per_s_rank0"] = w["samples_per_s"]
    g["samples"] = int(samples.item())
    g["window_s"] = float(window.item())
    g["samples_per_s"] = g["samples"] / g["window_s"]
    return g


def _peak_memory(device: torch.device, distributed: bool) -> dict[str, int | None]:
    if device.type != "cuda":
        return {"peak_mem_allocated_bytes": None, "peak_mem_reserved_bytes": None}
    peaks = torch.tensor(
        [torch.cuda.max_memory_allocated(device), torch.cuda.max_memory_reserved(device)],
        dtype=torch.int64,
        device=device,
    )
    if distributed:
        dist.all_reduce(peaks, op=dist.ReduceOp.MAX)  # the fullest GPU of the job
    return {"peak_mem_allocated_bytes": int(peaks[0]), "peak_mem_reserved_bytes": int(peaks[1])}
