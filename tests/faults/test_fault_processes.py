"""Cases 3, 4 and 9's process cases, with real processes and the stand-in runner: a lost job's
runner that ignores SIGTERM, a deleted jobs folder, a stalled runner, host OOM, kill and hangup."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.faults.conftest import ROOT
from tests.jobs.jobkit import fake_spec, wait_for
from zbench.jobs import api, liveness
from zbench.store import Store

FINAL = ("done", "failed", "crashed", "oom", "timeout", "cancelled", "lost")


def _running(jid: int, db: Path, timeout: float = 20) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        row = Store(db).get_job(jid) or {}
        if row.get("state") == "running" and row.get("pid") and row.get("events_path"):
            return row
        time.sleep(0.05)
    raise AssertionError(f"job {jid} never ran")


def _kill_supervisor(db: Path) -> int:
    sup = Store(db).supervisor()
    assert sup is not None
    pid = int(sup["pid"])
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while (liveness.pid_alive(pid) or liveness.lock_held(db)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return pid


def test_a_lost_jobs_runner_that_ignores_sigterm_is_killed(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = home / "zbench.db"
    monkeypatch.setattr(liveness, "LOST_GRACE_S", 1.0)
    [jid] = api.submit([fake_spec("ignoreterm")], db=db)
    runner = int(_running(jid, db)["pid"])
    time.sleep(0.5)  # past its signal.signal(SIGTERM, SIG_IGN)
    _kill_supervisor(db)
    assert api.reconcile(db) == [jid]
    assert not liveness.pid_alive(runner), "the runner is gone once the job is marked lost"
    info = api.get_job(jid, db)
    assert info.state == "lost" and f"runner (pid {runner}) was stopped" in (info.reason or "")


def test_deleting_the_jobs_folder_mid_run_keeps_the_result(home: Path) -> None:
    db = home / "zbench.db"
    [jid] = api.submit([fake_spec("ok", steps=30, step_s=0.05)], db=db)
    _running(jid, db)
    wait_for(jid, db, ("running",))
    deadline = time.monotonic() + 20
    while not (api.get_job(jid, db).step or 0) >= 2:  # mid-run: its events file is open
        assert time.monotonic() < deadline
        time.sleep(0.05)
    shutil.rmtree(home / "jobs")
    info = wait_for(jid, db, FINAL)
    assert info.state == "done", info.reason
    assert info.run_id is not None


def test_a_runner_that_writes_no_event_is_stopped_as_stalled(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ZBENCH_STALL_TIMEOUT_S", "1.5")
    db = home / "zbench.db"
    [jid] = api.submit([fake_spec("hang", steps=5)], db=db)
    info = wait_for(jid, db, FINAL, timeout=40)
    assert info.state == "timeout" and (info.reason or "").startswith("stalled: no event")


def test_zbench_jobs_flags_a_running_job_gone_quiet(home: Path) -> None:
    from zbench.cli.jobs_list import _note

    db = home / "zbench.db"
    [jid] = api.submit([fake_spec("hang", steps=5)], db=db)
    row = _running(jid, db)
    old = time.time() - 3600
    os.utime(row["events_path"], (old, old))
    info = api.get_job(jid, db)
    assert info.started is not None
    note = _note(info, info.started + 3600)
    assert note.startswith("no event from the runner for") and "min" in note


def test_a_cpu_allocation_failure_is_oom_with_a_batch_hint(home: Path) -> None:
    db = home / "zbench.db"
    [jid] = api.submit([fake_spec("hostoom")], db=db)
    info = wait_for(jid, db, FINAL)
    assert info.state == "oom" and "--batch-size" in (info.reason or "")


def test_a_runner_killed_by_sigkill_says_host_memory_was_likely_exhausted(home: Path) -> None:
    db = home / "zbench.db"
    [jid] = api.submit([fake_spec("selfkill")], db=db)
    info = wait_for(jid, db, FINAL)
    assert info.state == "crashed" and "host memory was likely exhausted" in (info.reason or "")


def test_a_recovered_result_aggregates_samples_by_phase(home: Path) -> None:
    db = home / "zbench.db"
    [jid] = api.submit([fake_spec("resulthang", steps=20, step_s=0.1)], db=db)
    row = _running(jid, db)
    deadline = time.monotonic() + 20
    while b'"result"' not in Path(row["events_path"]).read_bytes():
        assert time.monotonic() < deadline
        time.sleep(0.05)
    store = Store(db)
    # Samples as the supervisor flushes them while running: not yet tagged by phase.
    t0 = time.time()
    store.add_samples(
        jid, [{"t": t0 - 1 + i / 10, "phase": None, "cpu_util": 50.0} for i in range(10)]
    )
    _kill_supervisor(db)
    api.reconcile(db)
    info = api.get_job(jid, db)
    assert info.state == "done" and info.run_id is not None
    phases = store.phase_aggregates([jid])[jid]
    assert None not in phases and "None" not in phases, phases
    assert set(phases) <= {"setup", "compile", "warmup", "measure", "done"}


def test_sighup_and_a_killed_client_lose_no_job(home: Path) -> None:
    db = home / "zbench.db"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    client = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "zbench",
            "run",
            "resnet50",
            "--device",
            "cpu",
            "--steps",
            "30",
            "--db",
            str(db),
            "--",
            "behave=ok",
            "step_s=0.05",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while not (db.exists() and Store(db).jobs(("running",))):
        assert time.monotonic() < deadline and client.poll() is None
        time.sleep(0.05)
    [row] = Store(db).jobs(("running",))
    sup = Store(db).supervisor()
    assert sup is not None
    os.kill(int(sup["pid"]), signal.SIGHUP)  # a closed terminal
    client.kill()  # kill -9 of `zbench run`
    client.wait()
    info = wait_for(row["id"], db, FINAL)
    assert info.state == "done" and info.run_id is not None
