from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.fake_nvml import FakeNvml

TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"


@pytest.fixture(autouse=True)
def _zbench_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZBENCH_HOME", str(tmp_path / "home"))


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeNvml]:
    """A fake pynvml with two H200-like GPUs, installed as ``sys.modules['pynvml']``."""
    f = FakeNvml()
    monkeypatch.setitem(sys.modules, "pynvml", f.module)
    yield f


@pytest.fixture
def synthetic_trace() -> Path:
    return TRACES / "synthetic.jsonl"
