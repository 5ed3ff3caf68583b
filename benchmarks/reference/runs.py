"""Running one measurement in a fresh process: zbench's runner (read from its events) or a reference.

Every child's stdout and stderr go to a log file, so compiler and library output never reaches the
table; a failure is returned as ``{"error": ...}`` with the log's last line rather than raised.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
# NVLink multicast off, as zbench's own launcher sets it for its ranks.
QUIET = {"PYTHONWARNINGS": "ignore", "NCCL_NVLS_ENABLE": "0"}


_HOME: list[str] = []  # one private ZBENCH_HOME per benchmark invocation, made on first use


def child_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a measured child: quiet, this repository importable, and (unless the
    caller set ZBENCH_HOME) a private ZBENCH_HOME, so a benchmark never writes into the user's
    database or caches and its runs need nothing from the user's set-up."""
    env = {k: v for k, v in os.environ.items() if k not in ("TORCH_LOGS", "TORCH_COMPILE_DEBUG")}
    if not env.get("ZBENCH_HOME"):
        if not _HOME:
            _HOME.append(tempfile.mkdtemp(prefix="zbench-bench-home-"))
        env["ZBENCH_HOME"] = _HOME[0]
    env.update(QUIET)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(REPO), env.get("PYTHONPATH"))))
    env.update(extra or {})
    return env


def start_env(prefix: str, home: Path | None = None) -> tuple[str, dict[str, str]]:
    """A fresh data folder and the environment of start-time runs in it: zbench's own compile
    cache under it (no inductor or Triton folder from the caller), and Python writing and reusing
    bytecode there.

    A pip install leaves compiled bytecode beside torch's sources; a site-packages without it
    (one lent H200 machine's: PYTHONDONTWRITEBYTECODE=1, no __pycache__) recompiles about 2,200
    modules at every start, 6.9 s of a warm `--preset max` start in a profile there. The first
    run writes the bytecode, as an install would have, and the start figures are a user's.
    ``home``: that folder instead of a fresh one (made if missing), to start warm in it again."""
    if home is not None:
        home.mkdir(parents=True, exist_ok=True)
    folder = str(home) if home is not None else tempfile.mkdtemp(prefix=prefix)
    env = child_env({"ZBENCH_HOME": folder})
    for var in ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR", "PYTHONDONTWRITEBYTECODE"):
        env.pop(var, None)
    env["PYTHONPYCACHEPREFIX"] = str(Path(folder) / "pycache")
    return folder, env


def start_runs(
    argv: list[str], log: Path, timeout: float, env: dict[str, str], warm_runs: int, label: str
) -> dict[str, Any]:
    """``zbench(argv)`` once cold and ``warm_runs`` times warm in one data folder (``env``, from
    start_env), each run's start printed as it ends, and start_figures of them."""
    cold = zbench(argv, log, timeout, env)
    warms = (
        [zbench(argv, log, timeout, env) for _ in range(warm_runs)]
        if cold.get("to_measure_s")
        else []
    )
    for name, res in (("cold", cold), *((f"warm {i + 1}", w) for i, w in enumerate(warms))):
        prewarm = (res.get("settings") or {}).get("cudnn_prewarm")
        got = (
            f"{res['to_measure_s']:.1f} s to the first measured step (compile "
            f"{res.get('compile_s') or 0:.1f} s; seconds from launch: {res.get('marks_s')}; "
            f"cuDNN prewarm: {prewarm}), {res.get('samples_per_s') or 0:.0f} img/s"
            if res.get("to_measure_s")
            else res.get("error")
        )
        print(f"  {label} {name}: {got}", file=sys.stderr, flush=True)
    return {
        "runs": [cold, *warms],
        "batch": cold.get("config", {}).get("batch_size"),
        **start_figures(cold, warms),
    }


def start_figures(cold: dict[str, Any], warms: list[dict[str, Any]]) -> dict[str, Any]:
    """The cold start, the warm starts' median (None unless every warm run reached its first
    measured step: a failed one would make the median read faster) and their rates' median."""
    ok = bool(warms) and all(w.get("to_measure_s") for w in warms)
    warm_s = [w["to_measure_s"] for w in warms if w.get("to_measure_s")]
    rates = [w["samples_per_s"] for w in warms if w.get("samples_per_s")]
    return {
        "cold_s": cold.get("to_measure_s"),
        "warm_s": statistics.median(warm_s) if ok else None,
        "warm_runs_s": warm_s,
        "median": statistics.median(rates) if ok and rates else None,
    }


def _run(
    cmd: list[str], log: Path, timeout: float, env: dict[str, str]
) -> tuple[int | None, float]:
    t0 = time.perf_counter()
    with log.open("a") as fh:
        fh.write("$ " + " ".join(cmd) + "\n")
        fh.flush()
        try:
            rc: int | None = subprocess.run(
                cmd, cwd=REPO, stdout=fh, stderr=subprocess.STDOUT, timeout=timeout, env=env
            ).returncode
        except subprocess.TimeoutExpired:
            rc = None
    return rc, time.perf_counter() - t0


def _why(rc: int | None, log: Path, timeout: float) -> str:
    if rc is None:
        return f"timed out after {timeout:.0f} s"
    lines = [ln for ln in log.read_text(errors="replace").splitlines() if ln.strip()]
    return f"exit {rc}: {lines[-1][:160] if lines else 'no output'}"


def zbench(argv: list[str], log: Path, timeout: float, env: dict[str, str]) -> dict[str, Any]:
    """``python -m zbench.runners <argv> --events FILE``; the ``result`` event's figures."""
    with tempfile.TemporaryDirectory(prefix="zbench-bench-") as tmp:
        events = Path(tmp) / "events.jsonl"
        cmd = [sys.executable, "-m", "zbench.runners", *argv, "--events", str(events)]
        launched = time.time()  # events carry wall-clock times ("t")
        rc, wall = _run(cmd, log, timeout, env)
        found: dict[str, Any] = {}
        gpu = None
        marks: dict[str, float] = {}  # seconds from launch to the start event and to each phase
        for line in events.read_text().splitlines() if events.exists() else []:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if event.get("type") in ("result", "error"):
                found = event
            if event.get("type") == "start":
                gpu = ((event.get("environment") or {}).get("gpu_names") or ["cpu"])[0]
            if event.get("type") in ("start", "phase") and "t" in event:
                mark = str(event.get("phase") or event["type"])
                marks.setdefault(mark, round(float(event["t"]) - launched, 2))
        to_measure = marks.get("measure")
        if found.get("type") == "result" and rc == 0:
            # to_measure_s: from the process's launch to its first measured step (start-up, import,
            # batch search, compile, capture and warm-up: what a user waits for)
            return {
                **found,
                "process_s": wall,
                "gpu": gpu,
                "to_measure_s": to_measure,
                "marks_s": marks,
            }
        message = found.get("message") if found.get("type") == "error" else None
        return {"error": message or _why(rc, log, timeout), "process_s": wall}


def reference(cmd: list[str], log: Path, timeout: float, env: dict[str, str]) -> dict[str, Any]:
    """A reference command that takes ``--result FILE`` and writes its figures there as JSON."""
    with tempfile.TemporaryDirectory(prefix="zbench-ref-") as tmp:
        out = Path(tmp) / "result.json"
        rc, wall = _run([*cmd, "--result", str(out)], log, timeout, env)
        if rc == 0 and out.exists():
            return {**json.loads(out.read_text()), "process_s": wall}
        return {"error": _why(rc, log, timeout), "process_s": wall}


def torchrun(nproc: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nnodes",
        "1",
        "--nproc-per-node",
        str(nproc),
    ]


def visible_gpus() -> int:
    """GPUs the children will see, from NVML (no CUDA context in this parent process)."""
    try:
        import pynvml

        pynvml.nvmlInit()
        try:
            count = int(pynvml.nvmlDeviceGetCount())
        finally:
            pynvml.nvmlShutdown()
    except Exception:  # no driver or no NVML: no GPUs
        return 0
    cvd = os.environ.get("CUDA_VISIBLE_DEVICES")
    if cvd is not None:
        return min(count, len([d for d in cvd.split(",") if d.strip()]))
    return count
