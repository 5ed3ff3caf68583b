"""What zbench's telemetry costs: CPU time per sample per GPU, and a GPU workload's throughput with
a sampler at 0.1 s and 0.5 s against none, interleaved in one run (medians of several rounds).

    python3 benchmarks/monitor_overhead.py [--samples 200] [--rounds 5] [--seconds 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from zbench.telemetry.backends import open_backend
from zbench.telemetry.sampler import Sampler


def cpu_per_sample(samples: int) -> dict[str, float]:
    backend = open_backend()
    n_gpus = len(backend.sample().gpus)
    c0, w0 = time.process_time(), time.perf_counter()
    for _ in range(samples):
        backend.sample()
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    backend.close()
    return {
        "gpus": n_gpus,
        "cpu_ms_per_sample": 1e3 * cpu / samples,
        "cpu_ms_per_sample_per_gpu": 1e3 * cpu / samples / max(n_gpus, 1),
        "wall_ms_per_sample": 1e3 * wall / samples,
    }


def matmul_rate(seconds: float) -> float:
    """bf16 8192^3 matmuls per second on GPU 0 over a fixed window (synchronized at the edges)."""
    import torch

    a = torch.randn(8192, 8192, device="cuda:0", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda:0", dtype=torch.bfloat16)
    for _ in range(5):
        torch.matmul(a, b)
    torch.cuda.synchronize()
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        for _ in range(10):
            torch.matmul(a, b)
        n += 10
        torch.cuda.synchronize()
    return n / (time.perf_counter() - t0)


def throughput(rounds: int, seconds: float) -> dict[str, dict[str, float]]:
    settings: list[float | None] = [None, 0.5, 0.1]
    rates: dict[str, list[float]] = {str(s): [] for s in settings}
    for r in range(rounds):
        order = settings if r % 2 == 0 else settings[::-1]  # interleave; alternate the order
        for interval in order:
            sampler = None
            if interval is not None:
                sampler = Sampler(open_backend(), interval=interval).start()
            try:
                rates[str(interval)].append(matmul_rate(seconds))
            finally:
                if sampler is not None:
                    sampler.stop()
                    sampler.backend.close()
    base = statistics.median(rates["None"])
    return {
        k: {
            "matmul_per_s": statistics.median(v),
            "vs_none_pct": 100 * statistics.median(v) / base,
            "spread_pct": 100 * (max(v) - min(v)) / statistics.median(v),
        }
        for k, v in rates.items()
    }


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--samples", type=int, default=200)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--seconds", type=float, default=5.0)
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    out: dict[str, object] = {"sampling": cpu_per_sample(args.samples)}
    try:
        import torch

        if torch.cuda.is_available():
            out["throughput"] = throughput(args.rounds, args.seconds)
    except ImportError:
        pass
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    s = out["sampling"]
    print(
        f"CPU per sample: {s['cpu_ms_per_sample']:.2f} ms ({s['cpu_ms_per_sample_per_gpu']:.2f} ms per GPU, "  # type: ignore[index]
        f"{s['gpus']} GPUs); wall {s['wall_ms_per_sample']:.2f} ms"
    )  # type: ignore[index]
    if "throughput" in out:
        print(f"{'sampler':>8} {'matmul/s':>10} {'vs none':>8} {'spread':>7}")
        for k, v in out["throughput"].items():  # type: ignore[attr-defined]
            label = "none" if k == "None" else f"{k} s"
            print(
                f"{label:>8} {v['matmul_per_s']:>10.1f} {v['vs_none_pct']:>7.1f}% {v['spread_pct']:>6.1f}%"
            )
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
