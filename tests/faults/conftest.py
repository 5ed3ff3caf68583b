"""Fixtures for the fault matrix: a private home with the stand-in runner, store fault injection,
running the real ``zbench`` entry point in-process or as a process."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.job_home import kill_leftovers, use_fake_runner_home
from zbench.store import Store

ROOT = Path(__file__).parents[2]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """ZBENCH_HOME in tmp with the stand-in runner and no GPUs; yields the home. Kills whatever
    runners and supervisors the test left behind, for every database in it."""
    home = tmp_path / "home"
    use_fake_runner_home(monkeypatch, home)
    yield home
    for db in home.glob("*.db") if home.is_dir() else []:
        with contextlib.suppress(Exception):  # a fault test may leave one that cannot be read
            kill_leftovers(db)


def zbench(*args: str, stdout: Any = subprocess.PIPE, timeout: float = 60) -> tuple[int, str, str]:
    """``python -m zbench ARGS`` as a process: (exit status, stdout, stderr)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    proc = subprocess.run(
        [sys.executable, "-m", "zbench", *args],
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )
    return proc.returncode, proc.stdout or "", proc.stderr


def one_line_error(err: str) -> str:
    """The single ``zbench: ...`` line of stderr, asserting there is no traceback."""
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("zbench: "), err
    return lines[0]


class StoreFault:
    """Makes every SQLite call of every :class:`Store` in this process fail with ``message``
    while on: a locked database, a full disk, an I/O error, a damaged file, as SQLite says them."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.message: str | None = None
        self.hits = 0
        self._lock = threading.Lock()
        real = Store._conn
        fault = self

        def conn(store: Store) -> Any:
            return _Faulty(real(store), fault)

        monkeypatch.setattr(Store, "_conn", conn)
        monkeypatch.setattr("zbench.store.base.BUSY_RETRIES", 2)

    def check(self) -> None:
        message = self.message
        if message is not None:
            with self._lock:
                self.hits += 1
            error = sqlite3.DatabaseError if "malformed" in message else sqlite3.OperationalError
            raise error(message)


class _Faulty:
    def __init__(self, conn: sqlite3.Connection, fault: StoreFault) -> None:
        self._conn, self._fault = conn, fault

    def execute(self, *args: Any) -> Any:
        self._fault.check()
        return self._conn.execute(*args)

    def executemany(self, *args: Any) -> Any:
        self._fault.check()
        return self._conn.executemany(*args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


@pytest.fixture
def store_fault(monkeypatch: pytest.MonkeyPatch) -> StoreFault:
    return StoreFault(monkeypatch)


@pytest.fixture
def read_only_dir(tmp_path: Path) -> Iterator[Path]:
    """A real read-only mount (a tmpfs remounted read-only); skipped where mounting is not
    allowed. Filled through ``path / "rw"`` before the test calls ``make_read_only``."""
    mnt = tmp_path / "ro"
    mnt.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a read-only file system needs root")
    if subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mnt)],
        check=False,
        capture_output=True,
    ).returncode:
        pytest.skip("cannot mount a tmpfs here")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False, capture_output=True)


def make_read_only(mnt: Path) -> None:
    subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True, capture_output=True)
