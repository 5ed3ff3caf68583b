"""Fixtures for job tests: a private data dir, the fake runner, fast supervisor timings."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from zbench.store import Store

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
        if sup is not None and int(sup["pid"]) != os.getpid():  # a test ran one in-process
            _kill(int(sup["pid"]))


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGKILL)
