"""A private ZBENCH_HOME where jobs run the fake runner on no GPUs, and the teardown that kills
the runners and supervisor a test left behind in it."""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

import pytest

from zbench.store import Store

FAKE_RUNNER = Path(__file__).parents[1] / "jobs" / "fake_runner.py"


def use_fake_runner_home(
    monkeypatch: pytest.MonkeyPatch, home: Path, *, sample_interval_s: str | None = "0.1"
) -> None:
    """ZBENCH_HOME at ``home`` (no ZBENCH_DB), the fake runner, no GPUs, no telemetry replay, a
    supervisor that quits after 1 s idle and samples every ``sample_interval_s`` (None: its
    default)."""
    monkeypatch.setenv("ZBENCH_HOME", str(home))
    monkeypatch.delenv("ZBENCH_DB", raising=False)
    monkeypatch.setenv("ZBENCH_RUNNER_MODULE", str(FAKE_RUNNER))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    monkeypatch.setenv("ZBENCH_SUPERVISOR_IDLE_S", "1")
    if sample_interval_s is not None:
        monkeypatch.setenv("ZBENCH_SAMPLE_INTERVAL_S", sample_interval_s)
    monkeypatch.setenv("ZBENCH_TELEMETRY_REPLAY", "")


def kill_leftovers(db: Path) -> None:
    """SIGKILL the process group of every job ``db`` holds as running, then its supervisor, unless
    that is this process (a test ran one in-process). Nothing when ``db`` does not exist."""
    if not db.exists():
        return
    store = Store(db)
    sup = store.supervisor()
    for job in store.jobs(("running",)):
        if job["pid"]:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(int(job["pid"]), signal.SIGKILL)
    if sup is not None and int(sup["pid"]) != os.getpid():
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(int(sup["pid"]), signal.SIGKILL)
