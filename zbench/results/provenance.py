"""What every export says about a row: the machine, how it was measured, and what may have spoiled it
(other processes on its GPUs, a saturated host, throttled clocks, a wide spread between windows)."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from zbench.clocks import THROTTLES
from zbench.results.identity import gpu_model

SPREAD_LIMIT_PCT = 2.0
HOST_BUSY_PCT = 90.0


def cpu_model() -> str | None:
    """The host CPU's model name (Linux /proc/cpuinfo), recorded with each run."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        return None
    return None


def data_kind(row: Any) -> str:
    """ "synthetic" or "real": the comparability class of a run's input data."""
    config = getattr(row, "config", None) or {}
    result = getattr(row, "result", None) or {}
    label = str(result.get("data") or "")
    if config.get("data") or label.startswith("real"):
        return "real"
    return "synthetic"


def data_source(row: Any) -> str:
    """Where a run's data came from (synthetic or a real dataset), per its result or config."""
    result = getattr(row, "result", None) or {}
    config = getattr(row, "config", None) or {}
    return str(result.get("data") or config.get("data_source") or "n/a")


def window_rates(row: Any) -> list[float]:
    """Each measured window's samples/s (the runner's ``window_rates``, or its older name)."""
    result = getattr(row, "result", None) or {}
    for key in ("window_rates", "samples_per_s_all"):
        rates = result.get(key)
        if isinstance(rates, list) and all(isinstance(r, int | float) for r in rates):
            return [float(r) for r in rates]
    return []


def spread_pct(row: Any) -> float | None:
    """(max - min) / median of the windows' rates in %; None for a single window."""
    rates = window_rates(row)
    if len(rates) >= 2:
        median = statistics.median(rates)
        return 100.0 * (max(rates) - min(rates)) / median if median > 0 else None
    result = getattr(row, "result", None) or {}
    value = result.get("samples_per_s_spread_pct", result.get("spread_pct"))
    return float(value) if isinstance(value, int | float) and value == value else None


def repeats(row: Any) -> int | None:
    """How many measured windows a run had (from its result, window rates or config)."""
    result = getattr(row, "result", None) or {}
    config = getattr(row, "config", None) or {}
    n = result.get("repeats") or len(window_rates(row)) or config.get("repeat")
    return int(n) if n else None


def window(row: Any) -> str:
    """The measured window: steps per window, windows, and warm-up steps."""
    config = getattr(row, "config", None) or {}
    result = getattr(row, "result", None) or {}
    steps = result.get("steps") or config.get("steps")
    warmup = result.get("warmup_steps") or config.get("warmup")
    text = f"{steps} steps" if steps else "n/a"
    if repeats(row):
        text += f" x {repeats(row)}"
    return text + (f", {warmup} warm-up" if warmup else "")


def _measure(row: Any) -> dict[str, Any]:
    phases = getattr(row, "phases", None) or {}
    return phases.get("measure") or {}


def warnings(row: Any) -> list[tuple[str, str]]:
    """(flag, sentence) for each reason to distrust the row's figure."""
    m = _measure(row)
    out: list[tuple[str, str]] = []
    others = m.get("other_procs_max")
    if others:
        mem = m.get("other_mem_max_bytes")
        extra = f", {mem / 2**30:.1f} GiB" if mem else ""
        out.append(
            (
                "contention",
                f"other processes used its GPUs while it was measured (up to {others:.0f}{extra})",
            )
        )
    host = m.get("host_cpu_mean")
    if host is not None and host >= HOST_BUSY_PCT:
        out.append(("host busy", f"the host's CPUs were {host:.0f}% busy while it was measured"))
    frac = m.get("throttle_frac") or {}
    slow = {k: v for k, v in frac.items() if k in THROTTLES and v > 0}
    if slow:
        what = ", ".join(f"{k} {100 * v:.0f}% of the window" for k, v in sorted(slow.items()))
        out.append(("throttled", f"its GPU clocks were throttled ({what})"))
    result = getattr(row, "result", None) or {}
    planned, repeats = result.get("repeats_planned"), result.get("repeats")
    if isinstance(planned, int) and isinstance(repeats, int) and repeats < planned:
        out.append(
            (
                "stopped",
                f"it was stopped after {repeats} of its {planned} measured windows (the figure "
                "is theirs)",
            )
        )
    spread = spread_pct(row)
    if spread is not None and spread > SPREAD_LIMIT_PCT:
        out.append(
            ("spread", f"its windows' rates spread {spread:.1f}% (over {SPREAD_LIMIT_PCT:.0f}%)")
        )
    return out


def flags(row: Any) -> str:
    """A row's warning flags, comma-separated (empty when nothing may have spoiled it)."""
    return ", ".join(flag for flag, _ in warnings(row))


VERSION_KEYS = ("torch", "torchvision", "tensorflow", "keras", "nccl")


def machine(row: Any) -> dict[str, Any]:
    """The machine and software a row was measured on."""
    env = getattr(row, "env", None) or {}
    gpus = getattr(row, "gpus", 0) or 0
    model = gpu_model(row)
    return {
        "cpu": env.get("cpu_model"),
        "cpu_count": env.get("cpu_count"),
        "gpus": "CPU only" if model == "CPU" else f"{gpus}x {model}",
        "driver": env.get("driver"),
        "cuda": env.get("cuda"),
        "cudnn": env.get("cudnn"),
        "python": env.get("python"),
        **{k: env[k] for k in VERSION_KEYS if env.get(k) is not None},
    }


def machine_line(info: dict[str, Any]) -> str:
    """A machine record as one ``key: value; ...`` line, leaving out unknown values."""
    parts = [f"{k}: {v}" for k, v in info.items() if v is not None]
    return "; ".join(parts)
