"""The supervisor process itself: its telemetry is closed when it stops, its failures are logged."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import pytest

from zbench.jobs import supervisor
from zbench.jobs.sampling import HostSampler, JobSampler
from zbench.telemetry.snapshot import HostSnapshot, Snapshot


class FakeBackend:
    def __init__(self) -> None:
        self.closed = 0

    def sample(self, trees: tuple[int, ...] = ()) -> Snapshot:
        return Snapshot(t=0.0, seq=0, host=HostSnapshot())

    def close(self) -> None:
        self.closed += 1


class RecordingSampler(HostSampler):
    def __init__(self) -> None:
        super().__init__(0.05)
        self.calls: list[str] = []

    def stop(self) -> None:
        self.calls.append("stop")
        super().stop()

    def close(self) -> None:
        self.calls.append("close")
        super().close()


def test_job_sampler_close_closes_its_backend() -> None:
    backend = FakeBackend()
    sampler = JobSampler(backend, interval=0.05).start()
    sampler.close()
    assert backend.closed == 1
    assert sampler._thread is not None and not sampler._thread.is_alive()


def test_supervisor_run_closes_its_sampler(jobenv: Path) -> None:
    sampler = RecordingSampler()
    sup = supervisor.Supervisor(jobenv, sampler, [])
    sup.request_stop()
    sup.run()
    assert "close" in sampler.calls and not sampler._thread.is_alive()


def test_an_exception_in_the_supervisor_is_logged(
    jobenv: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def boom(self: supervisor.Supervisor) -> None:
        raise RuntimeError("boom in the loop")

    closing: Callable[[float], HostSampler] = HostSampler
    monkeypatch.setattr(supervisor, "open_sampler", closing)
    monkeypatch.setattr(supervisor.Supervisor, "run", boom)
    jobenv.parent.mkdir(parents=True, exist_ok=True)
    with caplog.at_level(logging.INFO, logger="zbench.supervisor"):
        rc = supervisor.main(["--db", str(jobenv)])
    assert rc == 1
    assert "RuntimeError: boom in the loop" in caplog.text
    assert supervisor.Store(jobenv).supervisor() is None
