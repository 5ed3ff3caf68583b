"""Fixtures for tests over real OpenSSH: a throwaway sshd on 127.0.0.1 whose aliases ``zb-a`` and
``zb-b`` are two "hosts", each with its own ZBENCH_HOME, and a private data dir for the launching
side."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from sshkit import Sshd, Unavailable, start_sshd

from tests.fakes.job_home import FAKE_RUNNER, kill_leftovers, use_fake_runner_home

ROOT = Path(__file__).resolve().parents[2]


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
    db = tmp_path / "home" / "zbench.db"
    use_fake_runner_home(monkeypatch, db.parent, sample_interval_s=None)
    yield db
    kill_leftovers(db)
