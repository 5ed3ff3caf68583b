from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from zbench.telemetry.snapshot import Snapshot
from zbench.tui.app import ZbenchApp
from zbench.tui.feed import ListFeed

from .fakes import NOW, FakeServices
from .traces import two_gpu


@pytest.fixture(autouse=True)
def zbench_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ZBENCH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ZBENCH_ASCII", "0")  # snapshots do not depend on the machine's locale
    monkeypatch.delenv("ZBENCH_INTERVAL", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def make_app(
    snapshots: list[Snapshot] | None = None,
    services: FakeServices | None = None,
    notice: str | None = "replaying a recorded trace",
) -> ZbenchApp:
    """A deterministic app: a replayed trace fed all at once, no timers, a frozen clock."""
    feed = ListFeed(two_gpu() if snapshots is None else snapshots, notice=notice)
    return ZbenchApp(services or FakeServices(), feed=feed, interval=None, clock=lambda: NOW)


@pytest.fixture
def app_factory() -> Callable[..., ZbenchApp]:
    return make_app
