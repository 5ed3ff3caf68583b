"""Record the telemetry fixture traces on a multi-GPU NVLink machine (needs torch + nvidia-ml-py).

    python3 scripts/record_traces.py tests/fixtures/traces [--interval 0.2] [--seconds 9]

Writes three gzip traces named after the machine (e.g. h200x2-idle.jsonl.gz): idle; during
GPU0 -> GPU1 copies; during a bf16 matmul load on every GPU. Run from the repository root.
"""

from __future__ import annotations

import argparse
import re
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pynvml

from zbench.telemetry.nvml import NvmlBackend
from zbench.telemetry.sampler import Sampler
from zbench.telemetry.trace import TraceWriter


def record(
    path: Path, interval: float, seconds: float, load: Callable[[threading.Event], None]
) -> int:
    """Record ``seconds`` of telemetry to a gzip trace while ``load`` runs; return the samples."""
    backend = NvmlBackend(pynvml)
    stop = threading.Event()
    worker = threading.Thread(target=load, args=(stop,), daemon=True)
    worker.start()
    time.sleep(1.0)  # let the load reach steady state before recording
    with TraceWriter(path, interval=interval, meta={"scenario": path.name.split(".")[0]}) as writer:
        sampler = Sampler(backend, interval=interval)
        sampler.subscribe(writer.write)
        sampler.start()
        time.sleep(seconds)
        sampler.stop()
        count = writer.count
    stop.set()
    worker.join(30)
    backend.close()
    return count


def idle(stop: threading.Event) -> None:
    """The idle scenario's load: nothing until told to stop."""
    stop.wait()


def copies(stop: threading.Event) -> None:
    """The copy scenario's load: 1 GiB copies from GPU 0 to GPU 1 until told to stop."""
    import torch

    a = torch.empty(2**30, dtype=torch.uint8, device="cuda:0")
    b = torch.empty(2**30, dtype=torch.uint8, device="cuda:1")
    while not stop.is_set():
        for _ in range(10):
            b.copy_(a)
        torch.cuda.synchronize(0)
        torch.cuda.synchronize(1)


def matmul(stop: threading.Event) -> None:
    """The matmul scenario's load: bf16 8192x8192 matmuls on every GPU until told to stop."""
    import torch

    n = 8192
    mats = [
        (
            torch.randn(n, n, device=f"cuda:{g}", dtype=torch.bfloat16),
            torch.randn(n, n, device=f"cuda:{g}", dtype=torch.bfloat16),
        )
        for g in range(torch.cuda.device_count())
    ]
    while not stop.is_set():
        for a, b in mats:
            for _ in range(20):
                torch.matmul(a, b)
        for g in range(len(mats)):
            torch.cuda.synchronize(g)


def main() -> int:
    """Record the idle, copy (two GPUs or more) and matmul traces, named after the machine."""
    p = argparse.ArgumentParser()
    p.add_argument("out", type=Path)
    p.add_argument("--interval", type=float, default=0.2)
    p.add_argument("--seconds", type=float, default=9.0)
    args = p.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    pynvml.nvmlInit()
    n = pynvml.nvmlDeviceGetCount()
    name = pynvml.nvmlDeviceGetName(pynvml.nvmlDeviceGetHandleByIndex(0))
    name = name.decode() if isinstance(name, bytes) else name
    pynvml.nvmlShutdown()
    model = re.sub(r"[^a-z0-9]+", "", name.lower().replace("nvidia", "").split("nvl")[0])[:12]
    prefix = f"{model}x{n}"
    scenarios: list[tuple[str, Callable[[threading.Event], None]]] = [("idle", idle)]
    if n >= 2:
        scenarios.append(("copy", copies))
    scenarios.append(("matmul", matmul))
    for scenario, load in scenarios:
        path = args.out / f"{prefix}-{scenario}.jsonl.gz"
        count = record(path, args.interval, args.seconds, load)
        print(f"{path}: {count} samples, {path.stat().st_size / 1024:.0f} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
