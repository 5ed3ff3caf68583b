"""Stored rows for tests: ``run_row`` is a row for ``Store.add_run``, ``run_config`` the config
a run carries and ``job_row`` a row for ``Store.add_jobs``. Every column the store requires has a default, so a test names only the fields it
is about; a field given replaces its default (``**fields`` may also add columns, e.g. ``kind``)."""

from __future__ import annotations

from typing import Any


def run_config(**fields: Any) -> dict[str, Any]:
    """A benchmark config: ResNet-50, PyTorch, training, FP32, batch 8 on one GPU, then ``fields``."""
    return {
        "workload": "resnet50",
        "framework": "torch",
        "mode": "train",
        "precision": "fp32",
        "batch_size": 8,
        "gpus": 1,
        **fields,
    }


def run_row(**fields: Any) -> dict[str, Any]:
    """A run of no job at t=1.0: run_config()'s columns, on an NVIDIA H200, 100 samples/s."""
    return {
        "job_id": None,
        "created": 1.0,
        **run_config(),
        "gpu_name": "NVIDIA H200",
        "samples_per_s": 100.0,
        "config": {},
        "env": {},
        "result": {},
        **fields,
    }


def job_row(**fields: Any) -> dict[str, Any]:
    """A queued job at t=1.0: ResNet-50, PyTorch, training, an empty config, then ``fields``."""
    return {
        "workload": "resnet50",
        "framework": "torch",
        "mode": "train",
        "config": {},
        "state": "queued",
        "created": 1.0,
        **fields,
    }


def fleet_row(host: str, id: int, **fields: Any) -> dict[str, Any]:
    """A row of another host's ``zbench jobs --json``, with its ``host``: a done ResNet-50
    training job, then ``fields``."""
    return {
        "host": host,
        "id": id,
        "state": "done",
        "workload": "resnet50",
        "framework": "torch",
        "mode": "train",
        "kind": "benchmark",
        "samples_per_s": None,
        **fields,
    }


# A Snake demo running on another host: its speed counts board-steps/s, not samples/s.
SNAKE_ON_BETA = {"workload": "snake", "framework": "demo", "mode": "ppo", "kind": "demo"}
