"""The PyTorch table on one GPU: every workload x train/infer x fp32/bf16 at its default batch, each a
runner subprocess; prints a Markdown table (and the raw result events with --json).

    python benchmarks/torch_table.py --steps 20 --warmup 5
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
WORKLOADS = ("resnet50", "vgg16", "fasterrcnn", "unet2d", "unet3d")


def run_one(argv: list[str], timeout: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        events = Path(tmp) / "events.jsonl"
        cmd = [sys.executable, "-m", "zbench.runners", *argv, "--events", str(events)]
        t0 = time.perf_counter()
        try:
            subprocess.run(cmd, cwd=REPO, timeout=timeout, capture_output=True, text=True)
        except subprocess.TimeoutExpired:
            return {"type": "error", "kind": "timeout", "message": f"over {timeout:.0f}s"}
        wall = time.perf_counter() - t0
        last: dict[str, Any] = {"type": "error", "kind": "crash", "message": "no events"}
        for line in events.read_text().splitlines() if events.exists() else []:
            event = json.loads(line)
            if event["type"] in ("result", "error"):
                last = event
            if event["type"] == "start":
                start = event
        last["wall_s"] = wall
        if last["type"] == "result":
            last["gpu"] = (start["environment"]["gpu_names"] or ["cpu"])[0]
        return last


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--workloads", default=",".join(WORKLOADS))
    p.add_argument("--precisions", default="fp32,bf16")
    p.add_argument("--modes", default="train,infer")
    p.add_argument("--extra", default="", help="more runner options, e.g. '--device cpu'")
    p.add_argument("--timeout", type=float, default=180)
    p.add_argument("--json", action="store_true")
    a = p.parse_args()
    rows = []
    print(
        "| workload | mode | precision | batch | throughput | unit | step p50 ms | peak alloc GiB | wall s |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for w in a.workloads.split(","):
        for mode in a.modes.split(","):
            for prec in a.precisions.split(","):
                argv = [w, "--mode", mode, "--precision", prec, "--steps", str(a.steps)]
                argv += ["--warmup", str(a.warmup), *a.extra.split()]
                r = run_one(argv, a.timeout)
                rows.append({"workload": w, "mode": mode, "precision": prec, **r})
                if r["type"] == "result":
                    peak = r["peak_mem_allocated_bytes"]
                    print(
                        f"| {w} | {mode} | {prec} | {r['batch_size']} | {r['samples_per_s']:.1f} | "
                        f"{r['unit']}/s | {r['step_time_median_ms']:.1f} | "
                        f"{'n/a' if peak is None else f'{peak / 2**30:.1f}'} | {r['wall_s']:.0f} |",
                        flush=True,
                    )
                else:
                    print(
                        f"| {w} | {mode} | {prec} | | {r['kind']}: {r['message']} | | | | |",
                        flush=True,
                    )
    if a.json:
        print(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
