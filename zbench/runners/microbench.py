"""Micro-benchmarks for ``zbench probe``, as a runner-protocol subprocess (needs PyTorch).

    python -m zbench.runners.microbench --events PATH [--gpus 0,1] [--quick] [--p2p-seconds S]

Events: ``start``; ``progress`` (step/total and a ``label``); one ``result`` per figure with ``test``
in matmul | memcpy | h2d | d2h | p2p; ``phase`` ``measure`` with ``test="p2p"``, ``src``, ``dst`` just
before each sustained GPU-to-GPU copy (so a supervisor can read NVLink counters during it); ``error``.
Timing: warm-up excluded, CUDA events on one device, host wall clock with both devices synchronized
for GPU-to-GPU copies; each figure is the median of several timed repeats.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import torch

from zbench.contract.protocol import EventWriter
from zbench.textfit import counted

MATMUL_DTYPES = ("fp32", "tf32", "fp16", "bf16")
HOST_COPIES = ("h2d", "d2h")  # pinned host memory to the GPU, and back


def _events_timed(fn: Callable[[], object], inner: int, repeats: int, warmup: int) -> float:
    """Median seconds per call of ``fn`` (on the current device), timed with CUDA events."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(inner):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1000.0 / inner)
    return statistics.median(times)


def matmul_tflops(gpu: int, dtype: str, n: int, repeats: int) -> float:
    """Measured TFLOP/s of an n x n matmul on one GPU in ``dtype`` (fp32, tf32, fp16, bf16)."""
    torch.backends.cuda.matmul.allow_tf32 = dtype == "tf32"
    torch_dtype = {
        "fp32": torch.float32,
        "tf32": torch.float32,
        "fp16": torch.float16,
        "bf16": torch.bfloat16,
    }[dtype]
    with torch.cuda.device(gpu):
        a = torch.randn(n, n, device=f"cuda:{gpu}", dtype=torch_dtype)
        b = torch.randn(n, n, device=f"cuda:{gpu}", dtype=torch_dtype)
        c = torch.empty(n, n, device=f"cuda:{gpu}", dtype=torch_dtype)
        t = _events_timed(lambda: torch.matmul(a, b, out=c), inner=10, repeats=repeats, warmup=3)
    torch.backends.cuda.matmul.allow_tf32 = False
    return 2 * n**3 / t / 1e12


def memcpy_bytes_s(gpu: int, nbytes: int, repeats: int) -> float:
    """Device-to-device copy on one GPU: bytes read + bytes written per second."""
    with torch.cuda.device(gpu):
        src = torch.empty(nbytes, dtype=torch.uint8, device=f"cuda:{gpu}")
        dst = torch.empty_like(src)
        t = _events_timed(lambda: dst.copy_(src), inner=5, repeats=repeats, warmup=2)
    return 2 * nbytes / t


def host_copy_bytes_s(gpu: int, nbytes: int, repeats: int, to_device: bool) -> float:
    """Measured pinned host-to-GPU (or GPU-to-host) copy rate of one GPU, in bytes/s."""
    with torch.cuda.device(gpu):
        host = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
        dev = torch.empty(nbytes, dtype=torch.uint8, device=f"cuda:{gpu}")
        if to_device:
            t = _events_timed(lambda: dev.copy_(host, non_blocking=True), 3, repeats, 1)
        else:
            t = _events_timed(lambda: host.copy_(dev, non_blocking=True), 3, repeats, 1)
    return nbytes / t


def p2p_copy(src: int, dst: int, nbytes: int, seconds: float, ev: EventWriter) -> dict[str, Any]:
    """Copies ``src`` -> ``dst`` back to back for about ``seconds``; returns the sustained rate."""
    a = torch.empty(nbytes, dtype=torch.uint8, device=f"cuda:{src}")
    b = torch.empty(nbytes, dtype=torch.uint8, device=f"cuda:{dst}")

    def sync() -> None:
        torch.cuda.synchronize(src)
        torch.cuda.synchronize(dst)

    with torch.cuda.device(src):
        for _ in range(3):  # warm-up, and enables peer access inside the copy path
            b.copy_(a)
        sync()
        t0 = time.perf_counter()
        b.copy_(a)
        sync()
        one = max(time.perf_counter() - t0, 1e-6)
        n = max(3, int(seconds / one))
        ev.phase("measure", test="p2p", src=src, dst=dst, copies=n)
        wall0 = time.time()
        t0 = time.perf_counter()
        for _ in range(n):
            b.copy_(a)
        sync()
        elapsed = time.perf_counter() - t0
        wall1 = time.time()
    del a, b
    return {"bytes_s": n * nbytes / elapsed, "copies": n, "t_start": wall0, "t_end": wall1}


@dataclass(frozen=True)
class Sizes:
    """How big and how often: the matmul's n, repeats per figure, bytes per copy, seconds per
    sustained GPU-to-GPU copy."""

    n: int
    repeats: int
    nbytes: int
    p2p_seconds: float

    @classmethod
    def of(cls, quick: bool, p2p_seconds: float) -> Sizes:
        if quick:
            return cls(4096, 5, 256 * 2**20, p2p_seconds)
        return cls(8192, 10, 1024 * 2**20, p2p_seconds)


Step = tuple[str, Callable[[], dict[str, Any]]]  # a progress label, and the figure it measures


def plan(gpus: list[int], z: Sizes, ev: EventWriter) -> list[Step]:
    """Every figure in the order it runs: per GPU its matmuls, device copy and pinned host
    copies, then each ordered pair of GPUs."""
    steps: list[Step] = []
    for g in gpus:
        steps += [(f"matmul {dt} GPU {g}", partial(_matmul, g, dt, z)) for dt in MATMUL_DTYPES]
        steps.append((f"memory copy GPU {g}", partial(_memcpy, g, z)))
        steps += [(f"pinned {way} GPU {g}", partial(_host_copy, g, way, z)) for way in HOST_COPIES]
    for s, d in ((s, d) for s in gpus for d in gpus if s != d):
        steps.append((f"GPU {s} -> GPU {d}", partial(_p2p, s, d, z, ev)))
    return steps


def _matmul(g: int, dt: str, z: Sizes) -> dict[str, Any]:
    tflops = matmul_tflops(g, dt, z.n, z.repeats)
    return {"test": "matmul", "dtype": dt, "gpu": g, "n": z.n, "tflops": tflops}


def _memcpy(g: int, z: Sizes) -> dict[str, Any]:
    rate = memcpy_bytes_s(g, z.nbytes, z.repeats)
    return {"test": "memcpy", "gpu": g, "bytes": z.nbytes, "bytes_s": rate}


def _host_copy(g: int, way: str, z: Sizes) -> dict[str, Any]:
    rate = host_copy_bytes_s(g, z.nbytes, z.repeats, to_device=way == "h2d")
    return {"test": way, "gpu": g, "bytes": z.nbytes, "bytes_s": rate}


def _p2p(s: int, d: int, z: Sizes, ev: EventWriter) -> dict[str, Any]:
    return {
        "test": "p2p",
        "src": s,
        "dst": d,
        "bytes": z.nbytes,
        "peer_access": torch.cuda.can_device_access_peer(s, d),
        **p2p_copy(s, d, z.nbytes, z.p2p_seconds, ev),
    }


def main(argv: list[str] | None = None) -> int:
    """Run the probe's micro-benchmarks on the chosen GPUs, writing each figure as an event."""
    p = argparse.ArgumentParser(prog="python -m zbench.runners.microbench")
    p.add_argument("--events", required=True)
    p.add_argument("--gpus", default=None, help="e.g. 0,1 (default: all visible)")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--p2p-seconds", type=float, default=3.0)
    args = p.parse_args(argv)
    ev = EventWriter(args.events)
    if not torch.cuda.is_available():
        ev.error("unavailable", "PyTorch sees no CUDA GPU")
        return 1
    count = torch.cuda.device_count()
    gpus = list(range(count)) if not args.gpus else [int(x) for x in args.gpus.split(",")]
    if any(not 0 <= g < count for g in gpus):
        ev.error("config", f"--gpus {args.gpus}: PyTorch sees {counted(count, 'GPU')}")
        return 2
    ev.emit(
        "start",
        config=vars(args),
        env={
            "torch": torch.__version__,
            "cuda": torch.version.cuda,
            "gpus": [torch.cuda.get_device_name(g) for g in gpus],
        },
    )
    steps = plan(gpus, Sizes.of(args.quick, args.p2p_seconds), ev)
    ev.phase("measure")
    try:
        for i, (label, step) in enumerate(steps):
            ev.progress(i, len(steps), label=label)
            ev.emit("result", **step())
        ev.progress(len(steps), len(steps), label="done")
        ev.phase("done")
    except torch.cuda.OutOfMemoryError as exc:
        ev.error("oom", str(exc).splitlines()[0])
        return 1
    except KeyboardInterrupt:
        ev.error("interrupted", "interrupted")
        return 1
    finally:
        ev.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
