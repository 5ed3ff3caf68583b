"""The doctor's report: what the machine is and what could skew a benchmark.

Frameworks are found with ``importlib`` metadata only; whether each sees the GPUs is asked of a
*subprocess* with a timeout, so the doctor never pays for (or hangs in) a torch/TensorFlow import.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import platform
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil

from zbench.telemetry.snapshot import NA

FRAMEWORK_PROBES = {
    "torch": "import torch; print(torch.cuda.device_count() if torch.cuda.is_available() else 0)",
    "tensorflow": (
        "import os; os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '3'); import tensorflow as tf; "
        "print(len(tf.config.list_physical_devices('GPU')))"
    ),
}
FRAMEWORK_TIMEOUT_S = 90.0


Progress = Callable[[str], None]


def _quiet(_: str) -> None:
    pass


def framework_status(progress: Progress = _quiet) -> dict[str, dict[str, Any]]:
    """For torch and tensorflow: installed version, and how many GPUs a fresh process sees.
    ``progress`` is told each phase in a few words (the CLI shows it beside a spinner)."""
    out: dict[str, dict[str, Any]] = {}
    procs: dict[str, subprocess.Popen[str]] = {}
    for name, code in FRAMEWORK_PROBES.items():
        if importlib.util.find_spec(name) is None:
            out[name] = {"installed": False, "version": None, "gpus": None}
            continue
        version = _dist_version(name, f"{name}-cpu")
        out[name] = {"installed": True, "version": version, "gpus": None}
        procs[name] = subprocess.Popen(
            [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
    for name, proc in procs.items():
        progress(f"importing {name} in a fresh process to count the GPUs it sees")
        try:
            stdout, stderr = proc.communicate(timeout=FRAMEWORK_TIMEOUT_S)
            lines = stdout.strip().splitlines()
            if proc.returncode == 0 and lines and lines[-1].isdigit():
                out[name]["gpus"] = int(lines[-1])
            else:
                tail = (stderr.strip().splitlines() or ["failed"])[-1]
                out[name]["error"] = tail[:200]
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            out[name]["error"] = f"no answer within {FRAMEWORK_TIMEOUT_S:.0f} s"
    return out


def _dist_version(*dists: str) -> str | None:
    for dist in dists:
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def host_info() -> dict[str, Any]:
    """The host in a few facts: name, OS, Python, CPU, cores and threads, RAM."""
    vm = psutil.virtual_memory()
    return {
        "hostname": platform.node(),
        "os": platform.platform(),
        "python": platform.python_version(),
        "cpu": platform.processor() or platform.machine(),
        "cpu_cores": psutil.cpu_count(logical=False),
        "cpu_threads": psutil.cpu_count(logical=True),
        "ram_bytes": vm.total,
    }


def collect(progress: Progress = _quiet) -> dict[str, Any]:
    """Everything the doctor reports, as JSON-ready data."""
    frameworks = framework_status(progress)
    progress("reading the host and the GPUs through NVML")
    report = {**machine(), "frameworks": frameworks, "cache": cache_report()}
    problem = cache_warning(report["cache"])
    # What fails zbench's own commands, apart from what could skew a benchmark (``warnings``):
    # the doctor exits non-zero on an error, so a script that runs it first stops there.
    report["errors"] = [problem] if problem else []
    return report


def cache_report() -> dict[str, Any]:
    """Where the compile cache is and how many bytes it holds (``zbench cache clear`` empties it);
    ``bytes`` None and an ``error`` where it cannot be read, with ``not_a_folder`` the path in
    the way where a file stands for the cache or the data folder (a size of 0 B said "empty")."""
    from zbench import paths

    base = paths.cache_dir(create=False)
    blocked = paths.not_a_folder(base)
    if blocked is not None:
        error = f"{blocked}: exists and is not a folder"
        return {"path": str(base), "bytes": None, "error": error, "not_a_folder": str(blocked)}
    try:
        return {"path": str(base), "bytes": sum(paths.cache_usage(base).values())}
    except (paths.DataDirError, OSError) as exc:  # reported, not fatal to the doctor
        return {"path": str(base), "bytes": None, "error": str(exc)}


def cache_warning(cache: dict[str, Any]) -> str | None:
    """The doctor's warning for a cache it could not read: a file in the cache's place fails the
    runs that compile; one in the data folder's place fails every command that keeps data."""
    if not cache.get("error"):
        return None
    if "not_a_folder" not in cache:
        return f"the compile cache cannot be read: {cache['error']}"
    if cache["not_a_folder"] == cache["path"]:
        return (
            f"{cache['path']} is not a folder: runs that compile fail, and `zbench cache` too, "
            "until it is moved away (zbench makes the folder)"
        )
    home, blocked = str(Path(cache["path"]).parent), cache["not_a_folder"]
    what = f"the data folder {home} is not a folder"
    if blocked != home:  # a folder above it: $ZBENCH_HOME=file/sub
        what = f"the data folder {home} cannot be made ({blocked} is not a folder)"
    return f"{what}: zbench can keep no jobs, results or compile cache there ($ZBENCH_HOME)"


def machine() -> dict[str, Any]:
    """The host, the GPUs with their specs and theoretical peaks, and the topology: the doctor's
    report without the frameworks (which take seconds to import). Read through NVML alone, in
    well under a second; the supervisor stores it with every run (``env["machine"]``)."""
    report: dict[str, Any] = {"host": host_info(), "nvml": None, "gpus": [], "topology": None}
    report["warnings"] = []
    try:
        import pynvml
    except ImportError:
        report["notice"] = "nvidia-ml-py is not installed: no GPU information"
        return report
    from zbench.telemetry.nvml import NvmlBackend, NvmlUnavailable

    try:
        backend = NvmlBackend(pynvml)
    except NvmlUnavailable as exc:
        report["notice"] = f"{exc}: host information only"
        return report
    try:
        from zbench.telemetry.doctor_gpus import gpu_report

        report.update(gpu_report(backend))
    finally:
        backend.close()
    return report


def json_default(obj: Any) -> Any:
    """For ``json.dumps``: ``NA`` is null, anything else its string."""
    if obj is NA:
        return None
    return str(obj)
