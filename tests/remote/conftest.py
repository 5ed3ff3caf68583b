"""Fixtures for tests over real OpenSSH: a throwaway sshd on 127.0.0.1 whose aliases ``zb-a`` and
``zb-b`` are two "hosts", each with its own ZBENCH_HOME, and a private data dir for the launching
side."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from sshkit import Sshd, Unavailable, start_sshd

from zbench.store import Store

ROOT = Path(__file__).resolve().parents[2]
FAKE_RUNNER = ROOT / "tests" / "jobs" / "fake_runner.py"


@pytest.fixture
def sshd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Sshd]:
    hosts = {
        alias: {
            "ZBENCH_HOME": str(tmp_path / alias),
            "ZBENCH_RUNNER_MODULE": str(FAKE_RUNNER),
            "ZBENCH_SUPERVISOR_IDLE_S": "1",
        }
        for alias in ("zb-a", "zb-b")
    }
    try:
        server = start_sshd(tmp_path / "ssh", hosts)
    except Unavailable as exc:
        pytest.skip(str(exc))
    monkeypatch.setenv("ZBENCH_SSH_CONFIG", str(server.client_config))
    monkeypatch.setenv("ZBENCH_REMOTE_PYTHON", f"env PYTHONPATH={ROOT} {sys.executable}")
    yield server
    server.stop()


@pytest.fixture
def launcher_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The launching machine's ZBENCH_HOME, the fake runner, no GPUs; yields the database path."""
    monkeypatch.setenv("ZBENCH_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ZBENCH_DB", raising=False)
    monkeypatch.setenv("ZBENCH_RUNNER_MODULE", str(FAKE_RUNNER))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    monkeypatch.setenv("ZBENCH_SUPERVISOR_IDLE_S", "1")
    monkeypatch.setenv("ZBENCH_TELEMETRY_REPLAY", "")
    db = tmp_path / "home" / "zbench.db"
    yield db
    if db.exists():
        store = Store(db)
        for job in store.jobs(("running",)):
            if job["pid"]:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(int(job["pid"]), signal.SIGKILL)
        sup = store.supervisor()
        if sup is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(int(sup["pid"]), signal.SIGKILL)
