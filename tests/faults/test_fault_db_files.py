"""Round 3, cases 4 and 9: the database's files changed under a running supervisor. Its -wal and
-shm deleted, or the file emptied: the supervisor stops writing at once (no lost result stored
into a log no one sees, no job id given twice, no finished job queued again), its job runs to its
end with its events kept, SIGTERM still stops it, and `zbench jobs` answers in seconds."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from tests.faults.conftest import StoreFault, zbench
from tests.jobs.jobkit import fake_spec, wait_for
from tests.rows import job_row
from zbench.contract.protocol import read_events
from zbench.jobs import api, liveness, supervisor
from zbench.jobs.sampling import host_sampler
from zbench.store import Store

FINAL = ("done", "failed", "crashed", "oom", "timeout", "cancelled", "lost")


def _measuring(jid: int, db: Path, timeout: float = 30) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        row = Store.reader(db).get_job(jid) or {}
        if row.get("state") == "running" and (row.get("step") or 0) >= 2:
            return row
        time.sleep(0.05)
    raise AssertionError(f"job {jid} never measured")


def _gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while liveness.pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not liveness.pid_alive(pid)


def test_deleting_the_wal_and_shm_mid_run_loses_no_result_and_reuses_no_id(home: Path) -> None:
    db = home / "zbench.db"
    [first] = api.submit([fake_spec("ok", steps=30, step_s=0.1)], db=db)
    _measuring(first, db)
    sup = Store.reader(db).supervisor()
    assert sup is not None
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink()
    assert _gone(int(sup["pid"]), 30), "the supervisor ends once its job has"
    api.reconcile(db)  # what the next `zbench jobs` does: its result, from its events file
    info = wait_for(first, db, FINAL, timeout=10)
    assert info.state == "done" and info.run_id is not None, info.reason
    [second] = api.submit([fake_spec("ok", steps=2)], db=db)
    assert second != first, "a job id was given twice"
    assert wait_for(second, db, FINAL).state == "done"
    store = Store(db)
    assert [r["job_id"] for r in store.runs()] == [first, second], "stored once each"
    assert store.get_job(first)["state"] == "done", "the finished job was not run again"
    log = (home / "supervisor.log").read_text()
    assert "-wal: deleted or replaced while the database was in use" in log
    assert "Traceback" not in log


def test_a_database_emptied_under_a_running_supervisor_stops_its_writes(home: Path) -> None:
    db = home / "zbench.db"
    [jid] = api.submit([fake_spec("hang")], db=db)
    row = _measuring_or_hanging(jid, db)
    sup = Store.reader(db).supervisor()
    assert sup is not None
    try:
        _empty_it_and_look(home, db, int(sup["pid"]), row)
    finally:  # the fixture cannot read the pids from an emptied file
        for pid in (int(sup["pid"]), int(row["pid"])):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def _empty_it_and_look(home: Path, db: Path, sup_pid: int, row: dict) -> None:
    with open(db, "r+b") as fh:
        fh.truncate(0)
    log = home / "supervisor.log"
    deadline = time.monotonic() + 15
    while "stopping all writes" not in log.read_text():
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.1)
    assert "the file was emptied" in log.read_text()
    t0 = time.monotonic()
    code, _, err = zbench("jobs", "--db", str(db), timeout=60)
    assert time.monotonic() - t0 < 20, "zbench jobs waited on a wedged database"
    assert code in (1, 2) and "Traceback" not in err
    assert all(line.startswith("zbench: ") for line in err.splitlines() if line.strip()), err
    os.kill(sup_pid, signal.SIGTERM)
    assert _gone(sup_pid, 30), "the supervisor ignored SIGTERM"
    assert _gone(int(row["pid"]), 5), "its runner was stopped"
    kinds = [ev["type"] for ev in read_events(row["events_path"])]
    assert kinds[:2] == ["start", "phase"], "the job's events are kept"


def _measuring_or_hanging(jid: int, db: Path) -> dict:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        row = Store.reader(db).get_job(jid) or {}
        if row.get("state") == "running" and row.get("phase") == "measure":
            return row
        time.sleep(0.05)
    raise AssertionError(f"job {jid} never ran")


def test_sigterm_is_honoured_while_the_database_keeps_failing(
    home: Path, store_fault: StoreFault, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = home / "zbench.db"
    monkeypatch.setattr(supervisor, "TIMEOUT_GRACE_S", 1.0)
    monkeypatch.setattr(supervisor, "STORE_RETRY_S", 0.1)
    store = Store(db)
    [jid] = store.add_jobs([job_row(config=fake_spec("hang").config.as_dict(), created=0.0)])
    sup = supervisor.Supervisor(db, host_sampler(0.05), [])
    thread = threading.Thread(target=sup.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not sup.running:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    [job] = sup.running.values()
    store_fault.message = "database is locked"  # from now on, for good
    sup.request_stop()  # what SIGTERM does
    thread.join(20)
    store_fault.message = None
    assert not thread.is_alive(), "the supervisor kept retrying after SIGTERM"
    assert job.proc.poll() is not None, "its runner was stopped"
    row = Store(db).get_job(jid)
    assert row is not None and row["state"] == "running"  # left for the next look: marked lost
