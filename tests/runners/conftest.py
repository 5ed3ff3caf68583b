from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _zbench_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZBENCH_HOME", str(tmp_path / "zbench-home"))
