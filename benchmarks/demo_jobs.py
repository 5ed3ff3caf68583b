"""Demos as jobs run under the harness on one GPU: each registered demo's runner process, checked.

    PYTHONPATH=. python benchmarks/demo_jobs.py --minutes 0.5 --out demo_jobs.json

Runs ``python -m zbench.demos snake`` and ``python -m zbench.demos motion`` (CUDA, a short training
budget) as the supervisor would, then reads their events: exit status, events in order (start ...
result, done), frame events and their highest rate over any second (the channel allows 4/s), and
the result's summary (board-steps/s; motion frames/s, L1 against the baselines). Needs torch,
numpy, opencv and rich only (no textual). Writes everything as JSON to --out.
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
sys.path.insert(0, str(ROOT))

from zbench.contract.protocol import read_events  # noqa: E402


def run_demo(argv: list[str], folder: Path) -> dict:
    events = folder / f"{argv[0]}.jsonl"
    env = {**os.environ, "ZBENCH_HOME": str(folder / "home"), "PYTHONPATH": str(ROOT)}
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "zbench.demos", *argv, "--events", str(events)],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - t0
    evs = list(read_events(events))
    frames = [e["t"] for e in evs if e["type"] == "frame"]
    peak = max((sum(1 for u in frames if t <= u < t + 1.0) for t in frames), default=0)
    result = next((e for e in evs if e["type"] == "result"), {})
    error = next((e for e in evs if e["type"] == "error"), None)
    return {
        "demo": argv[0],
        "argv": argv,
        "exit": proc.returncode,
        "wall_s": round(wall, 1),
        "order_ok": bool(evs)
        and evs[0]["type"] == "start"
        and [e["type"] for e in evs[-2:]] == ["result", "phase"],
        "frames": len(frames),
        "peak_frames_per_s": peak,
        "summary": result.get("summary", {}),
        "series_points": {k: len(v["points"]) for k, v in result.get("series", {}).items()},
        "error": error,
        "stderr_tail": proc.stderr[-1500:] if proc.returncode else "",
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--minutes", type=float, default=0.5, help="training budget of each demo")
    p.add_argument("--out", type=Path, required=True, help="JSON results path")
    args = p.parse_args()
    m = str(args.minutes)
    runs = [
        ["snake", "--minutes", m, "--device", "cuda"],
        ["motion", "--minutes", m, "--size", "256", "--frames", "90", "--device", "cuda"],
    ]
    with tempfile.TemporaryDirectory() as tmp:
        results = [run_demo(argv, Path(tmp)) for argv in runs]
    table = Table(title="demos as harness jobs (CUDA)")
    for col in ("demo", "exit", "wall s", "order", "frames", "peak/s", "summary"):
        table.add_column(col)
    for r in results:
        summary = "; ".join(f"{k} {v}" for k, v in r["summary"].items())
        table.add_row(
            r["demo"],
            str(r["exit"]),
            str(r["wall_s"]),
            "ok" if r["order_ok"] else "BAD",
            str(r["frames"]),
            str(r["peak_frames_per_s"]),
            summary,
        )
    Console(width=160).print(table)
    for r in results:
        if r["exit"]:
            print(f"{r['demo']}: {r['error']}\n{r['stderr_tail']}")
    args.out.write_text(json.dumps({"runs": results}, indent=2))
    return 0 if all(r["exit"] == 0 and r["order_ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
