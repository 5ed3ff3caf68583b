"""Round 3, case 3: a step of the wall clock neither kills a job nor lets a hung one run on. The
timeout and the stall watchdog measure on the monotonic clock; ``time.time`` is stepped here by an
hour once the job runs, as NTP or ``date -s`` would."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from tests.jobs.jobkit import fake_spec
from tests.rows import job_row
from zbench.jobs import supervisor
from zbench.jobs.sampling import host_sampler
from zbench.store import Store


def _run_with_clock_step(
    db: Path, behave: str, timeout_s: float | None, step_s: float, monkeypatch: pytest.MonkeyPatch
) -> dict:
    store = Store(db)
    spec = fake_spec(behave, steps=6, step_s=0.5)  # ticks between its events see the step
    [jid] = store.add_jobs(
        [job_row(config=spec.config.as_dict(), created=time.time(), timeout_s=timeout_s)]
    )
    sup = supervisor.Supervisor(db, host_sampler(0.05), [])
    real = time.time
    offset = [0.0]
    monkeypatch.setattr(time, "time", lambda: real() + offset[0])

    def step_clock() -> None:  # once the runner is measuring: after its last event if it hangs
        while not any(job.phase == "measure" for job in list(sup.running.values())):
            time.sleep(0.02)
        time.sleep(0.3)
        offset[0] = step_s

    stepper = threading.Thread(target=step_clock, daemon=True)
    stepper.start()
    runner = threading.Thread(target=sup.run, daemon=True)
    runner.start()
    runner.join(30)
    if runner.is_alive():
        sup.request_stop()
        runner.join(30)
        pytest.fail("the job was still running 30 s later")
    row = Store(db).get_job(jid)
    assert row is not None
    return row


@pytest.mark.parametrize("watch", ["timeout", "stall"])
def test_a_clock_step_forward_does_not_end_a_healthy_job(
    home: Path, monkeypatch: pytest.MonkeyPatch, watch: str
) -> None:
    monkeypatch.setattr(supervisor, "IDLE_EXIT_S", 0.2)
    monkeypatch.setattr(supervisor, "STALL_S", 600.0 if watch == "stall" else 0.0)
    timeout = 600.0 if watch == "timeout" else None
    row = _run_with_clock_step(home / "zbench.db", "ok", timeout, +3600.0, monkeypatch)
    assert (row["state"], row["reason"]) == ("done", None)


@pytest.mark.parametrize("watch", ["timeout", "stall"])
def test_a_clock_step_back_does_not_let_a_hung_job_run_on(
    home: Path, monkeypatch: pytest.MonkeyPatch, watch: str
) -> None:
    monkeypatch.setattr(supervisor, "IDLE_EXIT_S", 0.2)
    monkeypatch.setattr(supervisor, "TIMEOUT_GRACE_S", 1.0)
    monkeypatch.setattr(supervisor, "STALL_S", 2.0 if watch == "stall" else 0.0)
    timeout = 2.0 if watch == "timeout" else None
    row = _run_with_clock_step(home / "zbench.db", "hang", timeout, -3600.0, monkeypatch)
    assert row["state"] == "timeout"
    assert (row["reason"] or "").startswith(
        "stalled" if watch == "stall" else "timed out after 2 s"
    )
