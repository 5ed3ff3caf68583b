"""Running the runner (in-process or as a subprocess) and checking its event stream."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from zbench.contract.protocol import ERROR_KINDS, PHASES, SCHEMA_VERSION, read_events

REPO = Path(__file__).resolve().parents[2]
RESULT_FIELDS = (
    "samples_per_s",
    "samples_per_s_per_gpu",
    "step_time_median_ms",
    "step_time_p90_ms",
    "steps",
    "samples",
    "window_s",
    "batch_size",
    "global_batch",
    "gpus",
    "unit",
    "compile_s",
    "peak_mem_allocated_bytes",
    "peak_mem_reserved_bytes",
    "repeats",
    "samples_per_s_spread_pct",
    "precision_detail",
    "data",
    "scaling",
    "samples_per_s_all",
    "samples_per_s_min",
    "samples_per_s_max",
    "settings",
    "workload",
    "framework",
    "mode",
)


def run_in_process(argv: list[str], events: Path) -> tuple[int, list[dict[str, Any]]]:
    from zbench.runners.__main__ import main

    rc = main([*argv, "--events", str(events)])
    return rc, list(read_events(events))


def run_subprocess(
    argv: list[str], events: Path, timeout: float = 600
) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "2"}
    env.pop(
        "TF_CONFIG", None
    )  # a stray multi-worker config would make the tf runner wait for peers
    cmd = [sys.executable, "-m", "zbench.runners", *argv, "--events", str(events)]
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, cwd=REPO, env=env, timeout=timeout
        )
    except subprocess.TimeoutExpired as exc:
        # Say what was still running and how far it got, not only that time ran out.
        seen = [e.get("phase") or e["type"] for e in read_events(events)]
        err = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else exc.stderr
        pytest.fail(
            f"still running after {timeout:.0f} s: {' '.join(cmd[2:])}\n"
            f"events so far: {seen}\nstderr tail: {(err or '')[-1500:]}"
        )
    return proc, list(read_events(events))


def check_stream(events: list[dict[str, Any]], framework: str = "torch") -> dict[str, Any]:
    """A finished run's stream follows the protocol; returns its result event."""
    assert all(e["v"] == SCHEMA_VERSION and isinstance(e["t"], float) for e in events)
    types = [e["type"] for e in events]
    assert types[0] == "start", types
    phases = [e["phase"] for e in events if e["type"] == "phase"]
    # "compile" only where the run compiles (torch.compile, TensorFlow's first traced step).
    assert phases in (list(PHASES), [p for p in PHASES if p != "compile"]), phases
    assert types.count("result") == 1 and "error" not in types, types
    assert types.index("result") < len(types) - 1  # "done" comes after the result
    start = events[0]
    assert {"config", "environment", "data", "precision_detail"} <= start.keys()
    assert start["framework"] == framework
    assert start["environment"]["torch" if framework == "torch" else "tensorflow"]
    progress = [e for e in events if e["type"] == "progress"]
    assert progress and progress[-1]["step"] == progress[-1]["total"]
    # Each phase of counted steps (compile, warm-up, measure) counts up from 0; only the measured
    # steps have a rate.
    phase, counts = None, {}
    for e in events:
        if e["type"] == "phase":
            phase = e["phase"]
            assert e.get("steps") is not None or phase in ("setup", "done"), e
        elif e["type"] == "progress":
            counts.setdefault(phase, []).append(e["step"])
            assert phase in ("compile", "warmup", "measure"), e
            assert phase == "measure" or e.get("samples_per_s") is None, e
            assert e["step"] <= e["total"], e
    assert all(steps == sorted(steps) for steps in counts.values()), counts
    assert "measure" in counts
    result = next(e for e in events if e["type"] == "result")
    missing = [f for f in RESULT_FIELDS if f not in result]
    assert not missing, missing
    assert result["samples_per_s"] > 0
    assert result["samples"] == result["steps"] * result["global_batch"]
    return result


def the_error(events: list[dict[str, Any]]) -> dict[str, Any]:
    errors = [e for e in events if e["type"] == "error"]
    assert len(errors) == 1, errors
    assert errors[0]["kind"] in ERROR_KINDS
    assert "\n" not in errors[0]["message"]
    return errors[0]
