"""Fixtures for job tests: a private data dir, the fake runner, fast supervisor timings."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from zbench.jobs import api
from zbench.results.store import Store
from zbench.runners.config import RunConfig

FAKE_RUNNER = Path(__file__).with_name("fake_runner.py")


@pytest.fixture
def jobenv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """ZBENCH_HOME in tmp, the fake runner, no GPUs; yields the database path. Stops whatever
    supervisor the test started."""
    monkeypatch.setenv("ZBENCH_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ZBENCH_DB", raising=False)
    monkeypatch.setenv("ZBENCH_RUNNER_MODULE", str(FAKE_RUNNER))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    monkeypatch.setenv("ZBENCH_SUPERVISOR_IDLE_S", "1")
    monkeypatch.setenv("ZBENCH_SAMPLE_INTERVAL_S", "0.1")
    monkeypatch.setenv("ZBENCH_TELEMETRY_REPLAY", "")
    db = tmp_path / "home" / "zbench.db"
    yield db
    if db.exists():
        store = Store(db)
        sup = store.supervisor()
        for job in store.jobs(("running",)):
            if job["pid"]:
                _kill_group(int(job["pid"]))
        if sup is not None:
            _kill(int(sup["pid"]))


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGKILL)


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
