"""Bottleneck verdicts and the GPU process table from real GPU jobs, for the record.

    python benchmarks/bottleneck_capture.py [--gpus 2] [--steps 120] [--out verdicts.json]

Runs two ResNet-50 jobs through ``zbench run`` (a private ``$ZBENCH_HOME``, so nothing mixes with
the user's store): one meant to keep the GPUs busy (synthetic data made on the GPU, BF16, on
``--gpus`` GPUs) and one meant to starve them (synthetic data made on the host by one loader worker,
inference, BF16, 1 GPU). While the first one measures, ``zbench monitor --once --wide`` is captured
(the process table with the job's processes). Prints a compact table (job, samples/s, verdict,
evidence) and writes the verdicts, the results and the capture as JSON to ``--out``. Needs no
Textual; a few minutes on an H200.
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

ROOT = Path(__file__).resolve().parent.parent

JOBS = {
    "busy": ["--precision", "bf16", "--data-source", "synthetic-device"],
    "starved": [
        "--mode",
        "infer",
        "--precision",
        "bf16",
        "--data-source",
        "synthetic-host",
        "--workers",
        "1",
        "--gpus",
        "1",
    ],
}


def zbench(args: list[str], env: dict[str, str], **kw: Any) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "zbench", *args], cwd=ROOT, env=env, text=True, **kw
    )


def run_job(name: str, extra: list[str], steps: int, env: dict[str, str], capture: bool) -> dict:
    args = ["run", "resnet50", *extra, "--steps", str(steps), "--json"]
    proc = zbench(args, env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    monitor = ""
    if capture:  # the process table while the job measures (after set-up and warm-up)
        deadline = time.monotonic() + 600
        while proc.poll() is None and time.monotonic() < deadline:
            time.sleep(5)
            jobs = subprocess.run(
                [sys.executable, "-m", "zbench", "jobs", "--json"],
                cwd=ROOT,
                env=env,
                capture_output=True,
                text=True,
            )
            listed = json.loads(jobs.stdout or "[]")
            if any(j.get("phase") == "measure" for j in listed):
                time.sleep(3)
                snap = subprocess.run(
                    [sys.executable, "-m", "zbench", "monitor", "--once", "--wide"],
                    cwd=ROOT,
                    env=env | {"COLUMNS": "160"},
                    capture_output=True,
                    text=True,
                )
                monitor = snap.stdout
                break
    out, err = proc.communicate()
    try:
        doc = json.loads(out)
    except json.JSONDecodeError:
        doc = {"error": (err or out)[-2000:]}
    doc["name"] = name
    doc["monitor_once"] = monitor
    return doc


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gpus", type=int, default=2)
    p.add_argument("--steps", type=int, default=120)
    p.add_argument("--out", type=Path, default=Path("bottleneck_capture.json"))
    p.add_argument("--smoke", action="store_true", help="tiny CPU jobs: checks the script, no GPU")
    a = p.parse_args()
    home = tempfile.mkdtemp(prefix="zbench-bottleneck-")
    env = {**os.environ, "ZBENCH_HOME": home, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    JOBS["busy"] = [*JOBS["busy"], "--gpus", str(a.gpus)]
    if a.smoke:
        tiny = ["--device", "cpu", "--image-size", "32", "--batch-size", "2", "--precision", "fp32"]
        for name, extra in JOBS.items():
            keep = [x for x in extra if x not in ("bf16", "--precision")]
            if "--gpus" in keep:
                i = keep.index("--gpus")
                del keep[i : i + 2]
            JOBS[name] = [*keep, *tiny]
        a.steps = min(a.steps, 4)
    docs = [run_job(n, extra, a.steps, env, capture=(n == "busy")) for n, extra in JOBS.items()]
    print(f"{'job':8} {'samples/s':>10}  verdict: evidence")
    for d in docs:
        result = d.get("result") or {}
        verdict = d.get("verdict") or {}
        rate = result.get("samples_per_s")
        evidence = "; ".join(f["evidence"] for f in verdict.get("findings", [])) or "; ".join(
            verdict.get("notes", [])
        )
        line = f"{verdict.get('title', d.get('error', '?'))}: {evidence}"
        print(f"{d['name']:8} {rate if rate is None else f'{rate:,.1f}':>10}  {line}")
    capture = docs[0]["monitor_once"]
    print("\nzbench monitor --once --wide during the busy job:\n" + (capture or "(not captured)"))
    a.out.write_text(json.dumps({"home": home, "jobs": docs}, indent=2, default=str))
    print(f"wrote {a.out}")
    return 0 if all("verdict" in d for d in docs) else 1


if __name__ == "__main__":
    raise SystemExit(main())
