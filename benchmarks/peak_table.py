"""The per-workload peak table: zbench's review preset, zbench bf16 eager, zbench ``--preset max`` and
a plain torch.compile reference, training and inference, on one GPU (docs/performance.md).

The reference is benchmarks/reference (models and loop written without zbench's runner code), bf16
autocast, channels-last, cuDNN autotuner, fused SGD, compiled with torch.compile's default mode and,
for inference, inductor's freezing, as zbench's max does (Faster R-CNN: eager, as its graphs break
at every data-dependent step). ``max`` and the reference
run at the workload's first ``--preset max`` batch, so they compare like for like; the review and
bf16 rows at the review's batch. Each cell is a fresh process; later cells that would overrun
``--budget`` are skipped and listed.

    python3 benchmarks/peak_table.py --out table.json      # about 16 min on one H200
    python3 benchmarks/peak_table.py --workloads unet3d --modes infer --sides max,compiled-ref
    python3 benchmarks/peak_table.py --device cpu --workloads unet2d --modes infer   # smoke test
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks.args import OneLineParser, comma_choices  # noqa: E402
from benchmarks.reference import runs  # noqa: E402
from zbench.contract.resolve import max_batches  # noqa: E402
from zbench.contract.workloads import WORKLOADS  # noqa: E402

SIDES = ("review", "bf16-eager", "max", "compiled-ref")
MODES = ("train", "infer")
DEFAULT_WORKLOADS = ("vgg16", "fasterrcnn", "unet2d", "unet3d")  # ResNet-50: benchmarks/peak.py
# Seconds per cell on one H200 with cold caches, for the budget: the four workloads' 32 cells took
# about 16 minutes there (compilation 5-45 s of a max or reference cell, the rest start-up and cuDNN).
EST_S = {"review": 25, "bf16-eager": 25, "max": 55, "compiled-ref": 45}


def parser() -> OneLineParser:
    p = OneLineParser(prog=Path(__file__).name, description=__doc__.splitlines()[0])
    p.add_argument(
        "--workloads",
        type=lambda t: comma_choices(t, tuple(WORKLOADS), "workload"),
        default=DEFAULT_WORKLOADS,
    )
    p.add_argument(
        "--modes", type=lambda t: comma_choices(t, ("train", "infer"), "mode"), default=MODES
    )
    p.add_argument(
        "--sides",
        type=lambda t: comma_choices(t, SIDES, "side"),
        default=SIDES,
        help=f"which columns to measure ({','.join(SIDES)})",
    )
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--budget", type=float, default=1080, help="seconds; later cells are skipped")
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    p.add_argument("--out", type=Path)
    p.add_argument("--logs", type=Path)
    p.add_argument("--ref", help=argparse.SUPPRESS)  # internal: one reference in this process
    p.add_argument("--mode", help=argparse.SUPPRESS)
    p.add_argument("--batch-size", type=int, help=argparse.SUPPRESS)
    p.add_argument("--image-size", type=int, help=argparse.SUPPRESS)
    p.add_argument("--backend", default="inductor", help=argparse.SUPPRESS)
    p.add_argument("--result", help=argparse.SUPPRESS)
    return p


def _size(a: argparse.Namespace, workload: str) -> int:
    if a.device == "cpu":
        return 64 if workload in ("unet3d", "fasterrcnn") else 32
    return WORKLOADS[workload].image_size


def command(a: argparse.Namespace, workload: str, mode: str, side: str) -> list[str]:
    size = _size(a, workload)
    steps, warmup = (1, 1) if a.device == "cpu" else (a.steps, a.warmup)
    common = ["--mode", mode, "--image-size", str(size), "--device", a.device]
    common += ["--steps", str(steps), "--warmup", str(warmup)]
    peak_batch = max_batches(workload, mode)[0] if a.device == "cuda" else 2
    if side == "review":
        return [workload, *common, "--repeat", "1"]
    if side == "bf16-eager":
        return [workload, *common, "--precision", "bf16", "--channels-last", "--repeat", "1"]
    if side == "max":
        return [workload, *common, "--preset", "max", "--batch-size", str(peak_batch)]
    backend = "eager" if a.device == "cpu" or workload == "fasterrcnn" else "inductor"
    return [
        sys.executable,
        str(Path(__file__).resolve()),
        "--ref",
        workload,
        *common,
        "--batch-size",
        str(peak_batch),
        "--backend",
        backend,
    ]


def freezes(backend: str, mode: str) -> bool:
    """Whether the reference compiles with inductor's freezing: for inference, as an expert serving
    the model compiles it and as zbench's max inference does (weights as constants, batch-norm
    folded into the convolution before it). Without it the 3D U-Net's reference read 171 vol/s
    against 235 frozen on the H200, and the column compared unlike compiles."""
    return backend == "inductor" and mode == "infer"


def reference_main(a: argparse.Namespace) -> int:
    import torch

    from benchmarks.reference import loop, models

    device = torch.device(a.device)
    loop.set_precision("bf16")
    torch.manual_seed(0)
    model = models.build(a.ref, a.image_size).to(device)
    model = model.to(memory_format=models.memory_format(a.ref, True))
    freeze = freezes(a.backend, a.mode)
    if freeze:
        import torch._inductor.config as inductor_config

        inductor_config.freezing = True
    net = torch.compile(model, backend=a.backend) if a.backend != "eager" else model
    ns = argparse.Namespace(
        workload=a.ref,
        mode=a.mode,
        batch_size=a.batch_size,
        image_size=a.image_size,
        precision="bf16",
        channels_last=True,
    )
    step = loop.make_step(ns, device, net)
    t0 = time.perf_counter()
    for _ in range(2):  # compilation, timed apart
        step()
    loop.sync(device)
    first = time.perf_counter() - t0
    seconds = loop.timed(step, a.steps, a.warmup, device)
    result = {
        "samples_per_s": a.batch_size * a.steps / seconds,
        "first_steps_s": first,
        "batch_size": a.batch_size,
        "freezing": freeze,
    }
    Path(a.result).write_text(json.dumps(result))
    return 0


def main(argv: list[str]) -> int:
    a = parser().parse_args(argv)
    if a.ref:
        return reference_main(a)
    logs = a.logs or Path(tempfile.mkdtemp(prefix="zbench-peak-table-"))
    logs.mkdir(parents=True, exist_ok=True)
    env = runs.child_env()
    if a.device == "cpu":
        env["ZBENCH_COMPILE_BACKEND"] = "eager"  # smoke test: no C++ build
    t0, rows = time.perf_counter(), []
    for workload in a.workloads:
        for mode in a.modes:
            row: dict[str, Any] = {"workload": workload, "mode": mode}
            for side in (s for s in SIDES if s in a.sides):
                left = a.budget - (time.perf_counter() - t0)
                if a.device == "cuda" and EST_S[side] > left:
                    row[side] = {"skipped": f"budget: {max(0, left):.0f} s left"}
                    continue
                cmd = command(a, workload, mode, side)
                log = logs / f"{workload}-{mode}-{side}.log"
                timeout = max(120.0, left)
                row[side] = (
                    runs.reference(cmd, log, timeout, env)
                    if side == "compiled-ref"
                    else runs.zbench(cmd, log, timeout, env)
                )
                print(
                    f"  {workload} {mode} {side}: {_cell(row[side])}", file=sys.stderr, flush=True
                )
            rows.append(row)
    wall = time.perf_counter() - t0
    print(markdown(rows))
    print(f"total {wall:.0f} s; children's logs: {logs}", file=sys.stderr)
    if a.out:
        a.out.write_text(json.dumps({"wall_s": wall, "rows": rows}, indent=1))
    return 1 if any("error" in r[s] for r in rows for s in SIDES if s in r) else 0


def _cell(res: dict[str, Any]) -> str:
    if "samples_per_s" in res:
        return f"{res['samples_per_s']:.0f} (b{res.get('batch_size', '?')})"
    return "skipped" if "skipped" in res else f"failed: {res.get('error', '?')[:60]}"


def markdown(rows: list[dict[str, Any]]) -> str:
    """The table docs/performance.md holds: samples/s (batch) per side."""
    lines = [
        "| workload | mode | review | bf16 eager | max | compiled reference | max / ref |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        m, ref = r.get("max", {}), r.get("compiled-ref", {})
        ratio = (
            f"{m['samples_per_s'] / ref['samples_per_s']:.3f}"
            if "samples_per_s" in m and "samples_per_s" in ref
            else "-"
        )
        cells = " | ".join(_cell(r.get(s, {"skipped": ""})) for s in SIDES)
        lines.append(f"| {r['workload']} | {r['mode']} | {cells} | {ratio} |")
    return "\n".join(lines)


if __name__ == "__main__":
    os.environ.pop("TORCH_LOGS", None)
    sys.exit(main(sys.argv[1:]))
