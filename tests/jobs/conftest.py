"""Fixtures for job tests: a private data dir, the fake runner, fast supervisor timings."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.job_home import kill_leftovers, use_fake_runner_home


@pytest.fixture
def jobenv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """ZBENCH_HOME in tmp, the fake runner, no GPUs; yields the database path. Stops whatever
    supervisor the test started."""
    db = tmp_path / "home" / "zbench.db"
    use_fake_runner_home(monkeypatch, db.parent)
    yield db
    kill_leftovers(db)
