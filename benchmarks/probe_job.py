"""`zbench probe` as a job on the GPUs: the supervisor's samples against the copies' own figures.

    PYTHONPATH=. python benchmarks/probe_job.py --out probe_job.json

Runs ``python -m zbench probe --json`` (a `probe` job run by a fresh detached supervisor in a
temporary ZBENCH_HOME), then reads the stored run: every figure beside its peak (peaks read by the
supervisor through NVML), and for each GPU-to-GPU copy the NVLink TX the supervisor's 0.5 s samples
saw against the bandwidth the copy measured (two independent figures: they should agree within a
few percent when the copy goes over NVLink). Needs torch, typer, rich, psutil and nvidia-ml-py (no
textual). Prints a table; writes the rows and checks as JSON to --out.
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

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, required=True, help="JSON results path")
    p.add_argument("--quick", action="store_true", help="smaller sizes, fewer repeats")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            **os.environ,
            "ZBENCH_HOME": str(Path(tmp) / "home"),
            "PYTHONPATH": str(ROOT),
            "ZBENCH_SUPERVISOR_IDLE_S": "2",
        }
        cmd = [sys.executable, "-m", "zbench", "probe", "--json", *(["--quick"] * args.quick)]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        jobs = subprocess.run(
            [sys.executable, "-m", "zbench", "jobs", "--json"],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
    out: dict = {"exit": proc.returncode, "wall_s": round(wall, 1), "stderr": proc.stderr[-2000:]}
    try:
        out.update(json.loads(proc.stdout))
        out["jobs"] = json.loads(jobs.stdout)
    except json.JSONDecodeError:
        out["stdout"] = proc.stdout[-2000:]
    rows = out.get("rows", [])
    p2p = [r for r in rows if r["test"] == "p2p"]
    done = [j for j in out.get("jobs", []) if j.get("workload") == "probe"]
    checks = {
        "exit_0": proc.returncode == 0,
        "listed_as_done_job": any(j.get("state") == "done" for j in done),
        "every_row_has_a_peak": bool(rows) and all(r.get("peak") for r in rows),
        "p2p_tx_seen": all(r.get("nvlink_tx_gb_s") for r in p2p),
        "p2p_tx_within_10pct": all(
            abs(r["nvlink_tx_gb_s"] / r["value"] - 1) <= 0.10
            for r in p2p
            if r.get("nvlink_tx_gb_s") and r.get("value")
        ),
    }
    out["checks"] = checks
    table = Table(title=f"zbench probe as a job (exit {proc.returncode}, {wall:.0f} s)")
    for col in ("GPU", "test", "measured", "peak", "ratio", "NVLink TX seen"):
        table.add_column(col)
    for r in rows:
        nvl = r.get("nvlink_tx_gb_s")
        table.add_row(
            str(r["gpu"]),
            r["name"],
            f"{r['value']:,.1f} {r['unit']}",
            "n/a" if r.get("peak") is None else f"{r['peak']:,.1f}",
            "n/a" if r.get("ratio") is None else f"{100 * r['ratio']:.0f}%",
            "" if r["test"] != "p2p" else ("n/a" if nvl is None else f"{nvl:,.1f} GB/s"),
        )
    console = Console(width=140)
    console.print(table)
    console.print("checks: " + ", ".join(f"{k} {'ok' if v else 'FAIL'}" for k, v in checks.items()))
    if proc.returncode:
        console.print(proc.stderr[-1500:], markup=False)
    args.out.write_text(json.dumps(out, indent=2))
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
