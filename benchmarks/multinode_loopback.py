"""Two "nodes" on one machine against one node: ``zbench run --nodes localhost,localhost --gpus 1``
(torchrun's c10d rendezvous on loopback, one GPU per node) and ``zbench run --gpus 2`` with the same
options; prints both rates and their ratio, and writes them as JSON to ``--out``.

    python -m benchmarks.multinode_loopback --out multinode.json [--device cpu] [--steps N]

Each run is a real zbench job (its own ZBENCH_HOME in a temporary folder). On the CPU (``--device
cpu``, gloo) it checks the path, not the speed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m benchmarks.multinode_loopback")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--workload", default="resnet50")
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--warmup", type=int, default=15)
    p.add_argument("--batch-size", type=int, default=None)
    p.add_argument("--precision", default="bf16")
    p.add_argument("--timeout", type=float, default=240.0)
    return p


def runner_options(a: argparse.Namespace) -> list[str]:
    opts = ["--device", a.device, "--steps", str(a.steps), "--warmup", str(a.warmup)]
    opts += ["--repeat", "1"]
    if a.device == "cuda":
        opts += ["--precision", a.precision]
    else:
        opts += ["--image-size", "32", "--workers", "0"]
    if a.batch_size or a.device == "cpu":
        opts += ["--batch-size", str(a.batch_size or 2)]
    return opts


def run(label: str, argv: list[str], timeout: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="zbench-mn-") as home:
        env = dict(os.environ, ZBENCH_HOME=home, ZBENCH_SUPERVISOR_IDLE_S="1")
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
        t0 = time.monotonic()
        proc = subprocess.run(
            [sys.executable, "-m", "zbench", *argv, "--json", "--timeout", str(timeout)],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        wall = time.monotonic() - t0
    try:
        out = json.loads(proc.stdout)
    except ValueError:
        out = {"job": {"state": "no output", "reason": proc.stderr.strip()[-400:]}}
    job, result = out.get("job") or {}, out.get("result") or {}
    return {
        "label": label,
        "argv": argv,
        "state": job.get("state"),
        "reason": job.get("reason"),
        "samples_per_s": result.get("samples_per_s"),
        "gpus": result.get("gpus"),
        "wall_s": round(wall, 1),
    }


def main(argv: list[str] | None = None) -> int:
    a = parser().parse_args(argv)
    opts = runner_options(a)
    two_nodes = ["run", a.workload, "--nodes", "localhost,localhost", "--gpus", "1", *opts]
    one_node = ["run", a.workload, "--gpus", "2", *opts]
    rows = [
        run("2 nodes x 1 GPU", two_nodes, a.timeout),
        run("1 node x 2 GPUs", one_node, a.timeout),
    ]
    print(f"{'setup':<18} {'state':<8} {'samples/s':>10} {'wall s':>7}")
    for r in rows:
        rate = f"{r['samples_per_s']:.1f}" if r["samples_per_s"] else "-"
        print(f"{r['label']:<18} {r['state'] or '-':<8} {rate:>10} {r['wall_s']:>7}")
        if r["state"] != "done":
            print(f"  {r['reason']}")
    a_rate, b_rate = rows[0]["samples_per_s"], rows[1]["samples_per_s"]
    ratio = a_rate / b_rate if a_rate and b_rate else None
    if ratio:
        print(f"2 nodes / 1 node: {ratio:.3f}")
    a.out.write_text(json.dumps({"runs": rows, "ratio": ratio}, indent=2))
    return 0 if all(r["state"] == "done" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
