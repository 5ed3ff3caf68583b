"""The supervisor process itself: its telemetry is closed when it stops, its failures are logged."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import pytest

from zbench.jobs import supervisor
from zbench.jobs.sampling import JobSampler, host_sampler
from zbench.telemetry.backends import HostOnlyBackend
from zbench.telemetry.snapshot import HostSnapshot, Snapshot


class FakeBackend:
    def __init__(self) -> None:
        self.closed = 0

    def sample(self, trees: tuple[int, ...] = ()) -> Snapshot:
        return Snapshot(t=0.0, seq=0, host=HostSnapshot())

    def close(self) -> None:
        self.closed += 1


class RecordingSampler(JobSampler):
    def __init__(self) -> None:
        super().__init__(HostOnlyBackend("test"), interval=0.05)
        self.calls: list[str] = []

    def stop(self, timeout: float | None = 5.0) -> None:
        self.calls.append("stop")
        super().stop(timeout)

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

    closing: Callable[[float], JobSampler] = host_sampler
    monkeypatch.setattr(supervisor, "open_sampler", closing)
    monkeypatch.setattr(supervisor.Supervisor, "run", boom)
    jobenv.parent.mkdir(parents=True, exist_ok=True)
    with caplog.at_level(logging.INFO, logger="zbench.supervisor"):
        rc = supervisor.main(["--db", str(jobenv)])
    assert rc == 1
    assert "RuntimeError: boom in the loop" in caplog.text
    assert supervisor.Store(jobenv).supervisor() is None


def test_jobs_read_host_ram_as_telemetry_does(monkeypatch: pytest.MonkeyPatch) -> None:
    import psutil

    real = psutil.virtual_memory()
    fake = real._replace(total=100 * 2**30, available=30 * 2**30, used=50 * 2**30)
    monkeypatch.setattr(psutil, "virtual_memory", lambda: fake)
    sampler = host_sampler(0.05)
    snap = sampler.sample_once()
    sampler.close()
    assert snap.host.ram_used_bytes == 70 * 2**30  # total - available, not psutil's `used`
    assert snap.host.ram_total_bytes == 100 * 2**30


def test_a_bad_telemetry_trace_leaves_host_only_sampling(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("ZBENCH_TELEMETRY_REPLAY", str(tmp_path / "missing.jsonl"))
    sampler = supervisor.open_sampler(0.05)
    sampler.watch_tree(1 if Path("/proc/1").exists() else 0)
    snap = sampler.sample_once()
    sampler.close()
    assert isinstance(sampler, JobSampler) and snap.gpus == ()
    assert snap.notice and "host-only" in snap.notice and "missing.jsonl" in snap.notice
    assert len(snap.trees) == 1
