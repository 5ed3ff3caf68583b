"""Running the TensorFlow runner in a fresh interpreter (TensorFlow fixes its devices and precision
policy once per process) and checking its event stream."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from zbench.runners.protocol import PHASES, read_events

REPO = Path(__file__).resolve().parents[3]
HAVE_TF = importlib.util.find_spec("tensorflow") is not None
needs_tf = pytest.mark.skipif(not HAVE_TF, reason="TensorFlow is not installed")

TINY = {
    "resnet50": ["--image-size", "32", "--batch-size", "2"],
    "vgg16": ["--image-size", "32", "--batch-size", "2"],
    "fasterrcnn": ["--image-size", "64", "--batch-size", "2"],
    "unet2d": ["--image-size", "32", "--batch-size", "2"],
    "unet3d": ["--image-size", "64", "--batch-size", "1"],
}
FAST = ["--framework", "tf", "--device", "cpu", "--steps", "2", "--warmup", "1"]


def run_tf(argv: list[str], events: Path, timeout: float = 300) -> tuple[int, list[dict[str, Any]]]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "2"}
    env.pop("TF_CONFIG", None)
    proc = subprocess.run(
        [sys.executable, "-m", "zbench.runners", *argv, "--events", str(events)],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=timeout,
    )
    return proc.returncode, list(read_events(events))


def check_stream(events: list[dict[str, Any]]) -> dict[str, Any]:
    """A finished tf run's stream follows the protocol; returns its result event."""
    types = [e["type"] for e in events]
    assert types[0] == "start", events
    assert [e["phase"] for e in events if e["type"] == "phase"] == list(PHASES)
    assert types.count("result") == 1 and "error" not in types, events
    start = events[0]
    assert start["framework"] == "tf"
    assert start["environment"]["tensorflow"]
    progress = [e for e in events if e["type"] == "progress"]
    assert progress and progress[-1]["step"] == progress[-1]["total"]
    result = next(e for e in events if e["type"] == "result")
    assert result["framework"] == "tf"
    assert result["samples_per_s"] > 0
    assert result["samples"] == result["steps"] * result["global_batch"]
    assert result["compile_s"] > 0
    return result
