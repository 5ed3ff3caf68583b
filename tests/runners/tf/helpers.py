"""Running the TensorFlow runner in a fresh interpreter (TensorFlow fixes its devices and precision
policy once per process) and checking its event stream."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

from tests.runners.events import check_stream as events_check_stream
from tests.runners.events import run_subprocess

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


def run_tf(argv: list[str], events: Path, timeout: float = 600) -> tuple[int, list[dict[str, Any]]]:
    proc, stream = run_subprocess(argv, events, timeout)
    return proc.returncode, stream


def check_stream(events: list[dict[str, Any]]) -> dict[str, Any]:
    """A finished tf run's stream follows the protocol; returns its result event."""
    result = events_check_stream(events, framework="tf")
    assert result["framework"] == "tf"
    assert result["samples"] == result["steps"] * result["global_batch"]
    assert result["compile_s"] > 0  # the first step (tracing) is timed apart
    return result
