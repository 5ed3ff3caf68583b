"""Helpers for job tests: fake-runner job specs and waiting for a state."""

from __future__ import annotations

import time
from pathlib import Path

from zbench.contract.config import RunConfig
from zbench.jobs import api


def fake_spec(
    behave: str = "ok",
    *,
    device: str = "cpu",
    gpus: int = 1,
    timeout_s: float | None = None,
    gpu_ids: tuple[int, ...] | None = None,
    steps: int = 10,
    step_s: float | None = None,
) -> api.JobSpec:
    extra = [f"behave={behave}"] + ([f"step_s={step_s}"] if step_s is not None else [])
    config = RunConfig(
        workload="resnet50", device=device, gpus=gpus, steps=steps, batch_size=8, extra=tuple(extra)
    )
    return api.JobSpec(config=config, gpu_ids=gpu_ids, timeout_s=timeout_s)


def wait_for(job_id: int, db: Path, states: tuple[str, ...], timeout: float = 30.0) -> api.JobInfo:
    deadline = time.monotonic() + timeout
    info = api.get_job(job_id, db)
    while time.monotonic() < deadline:
        info = api.get_job(job_id, db)
        if info.state in states:
            return info
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} stayed {info.state} ({info.reason}); wanted {states}")
