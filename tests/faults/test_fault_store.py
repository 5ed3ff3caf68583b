"""Cases 2 and 8: the supervisor outlives a sick database (locked, full, I/O error, damaged) and
the job it runs is not lost; reading never takes the write lock; errors say what is wrong."""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from tests.faults.conftest import StoreFault, make_read_only, one_line_error, zbench
from tests.jobs.jobkit import fake_spec
from tests.rows import job_row
from zbench.jobs import api, guard, supervisor
from zbench.jobs.sampling import host_sampler
from zbench.store import Store, StoreError

FAULTS = {
    "locked": "database is locked",
    "full": "database or disk is full",
    "io": "disk I/O error",
    "malformed": "database disk image is malformed",
}


@pytest.mark.parametrize("fault", FAULTS)
def test_the_supervisor_outlives_a_database_fault_and_stores_the_result(
    home: Path,
    store_fault: StoreFault,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    fault: str,
) -> None:
    db = home / "zbench.db"
    monkeypatch.setattr(supervisor, "IDLE_EXIT_S", 0.3)
    monkeypatch.setattr(supervisor, "STORE_RETRY_S", 0.2)
    store = Store(db)
    [jid] = store.add_jobs(
        [job_row(config=fake_spec("ok", steps=20, step_s=0.05).config.as_dict(), created=0.0)]
    )
    sup = supervisor.Supervisor(db, host_sampler(0.05), [])

    def sicken() -> None:  # once the job runs: 2 s of a sick database, across its end
        while not sup.running:
            time.sleep(0.02)
        store_fault.message = FAULTS[fault]
        time.sleep(2.0)
        store_fault.message = None

    thread = threading.Thread(target=sicken)
    thread.start()
    with caplog.at_level(logging.INFO, logger="zbench.supervisor"):
        sup.run()  # returns once idle; before the fix it raised at the first failed write
    thread.join()
    assert store_fault.hits > 0
    row = Store(db).get_job(jid)
    assert row is not None and row["state"] == "done", row
    assert row["run_id"] is not None and Store(db).get_run(row["run_id"]) is not None
    assert len(Store(db).runs()) == 1  # retried writes did not store the run twice
    assert "the database failed" in caplog.text and "Traceback" not in caplog.text


def test_a_database_that_stays_broken_ends_an_idle_supervisor_in_one_line(
    home: Path, store_fault: StoreFault, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = home / "zbench.db"
    Store(db)
    monkeypatch.setattr(guard, "STORE_GIVE_UP_S", 0.5)
    monkeypatch.setattr(supervisor, "STORE_RETRY_S", 0.05)
    sup = supervisor.Supervisor(db, host_sampler(0.05), [])
    store_fault.message = FAULTS["io"]
    with pytest.raises(StoreError, match="I/O error"):
        sup.run()


def test_listing_jobs_does_not_wait_for_another_programs_write_lock(home: Path) -> None:
    db = home / "zbench.db"
    [jid] = Store(db).add_jobs([job_row(state="done", created=0.0)])
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another program holds the write lock
    try:
        t0 = time.monotonic()
        jobs = api.list_jobs(db)
        assert time.monotonic() - t0 < 2.0
        assert [j.id for j in jobs] == [jid]
    finally:
        other.execute("ROLLBACK")
        other.close()


@pytest.mark.parametrize("command", [["results"], ["export", "-f", "csv"], ["demo", "results"]])
def test_reading_results_waits_seconds_not_minutes_for_a_database_another_program_holds(
    home: Path, command: list[str]
) -> None:
    """The results commands waited about 90 s for another program's exclusive lock before they
    said it was locked; they only read, and wait as little as `zbench jobs` does."""
    db = home / "zbench.db"
    Store(db).add_jobs([job_row(state="done", created=0.0)])
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("PRAGMA locking_mode = EXCLUSIVE")  # readers are shut out too, WAL or not
    other.execute("BEGIN EXCLUSIVE")
    other.execute("UPDATE jobs SET tag = 'x'")
    try:
        t0 = time.monotonic()
        code, _, err = zbench(*command, timeout=120)
        assert time.monotonic() - t0 < 20
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert code == 1 and "the database is locked by another program" in one_line_error(err)


def test_a_locked_database_is_reported_as_locked_not_as_damaged(
    home: Path, store_fault: StoreFault
) -> None:
    db = home / "zbench.db"
    Store(db)
    store_fault.message = FAULTS["locked"]
    with pytest.raises(StoreError) as err:
        Store(db).add_jobs([{"workload": "x"}])
    assert "locked by another program" in str(err.value) and err.value.exit_code == 1
    assert "not a usable" not in str(err.value)


def test_disk_full_at_submit_is_one_line_and_exit_1(
    home: Path, store_fault: StoreFault, capsys: pytest.CaptureFixture[str]
) -> None:
    from zbench.cli.jobs import run_job

    Store(home / "zbench.db")
    store_fault.message = FAULTS["full"]
    with pytest.raises(StoreError) as err:
        run_job(
            "resnet50",
            ["--device", "cpu"],
            gpu_ids=None,
            timeout=None,
            detach=True,
            db=None,
            json_out=False,
        )
    assert str(err.value).endswith("the disk is full") and err.value.exit_code == 1


def test_a_damaged_file_is_named_as_such(home: Path) -> None:
    db = home / "zbench.db"
    home.mkdir(parents=True)
    db.write_bytes(b"SQLite format 3\x00" + b"\x07" * 4096)
    code, _, err = zbench("jobs", "--db", str(db))
    assert code == 2 and "the file is damaged" in one_line_error(err)


@pytest.mark.parametrize(
    "command", [["run", "resnet50", "--device", "cpu", "--detach"], ["suite", "quick", "--detach"]]
)
def test_a_database_under_a_file_is_bad_input_in_one_line(
    home: Path, tmp_path: Path, command: list[str]
) -> None:
    """--db where no folder can hold it said "I/O error (Not a directory)", exit 1, as if the
    disk had failed: the path given is wrong, exit 2."""
    (tmp_path / "a_file").write_text("x")
    db = tmp_path / "a_file" / "zbench.db"
    code, _, err = zbench(*command, "--db", str(db))
    assert code == 2
    assert (
        one_line_error(err)
        == f"zbench: {command[0]}: {db}: cannot create the database there (Not a directory)"
    )


def test_a_database_on_a_read_only_mount_can_be_read(home: Path, read_only_dir: Path) -> None:
    db = read_only_dir / "zbench.db"
    writer = Store(db)
    [jid] = writer.add_jobs([job_row(state="done", created=0.0)])
    writer.close()  # the last connection checkpoints and removes the -wal and -shm files
    make_read_only(read_only_dir)
    code, out, err = zbench("jobs", "--all", "--json", "--db", str(db))
    assert code == 0, err
    assert f'"id": {jid}' in out
    code, _, err = zbench("cancel", str(jid + 1), "--db", str(db))
    assert code == 2 and one_line_error(err) == f"zbench: cancel: no job {jid + 1}"
    with pytest.raises(StoreError, match="read-only"):
        Store(db).add_jobs([{"workload": "x"}])


def test_a_real_full_disk_during_a_run_loses_nothing(home: Path, read_only_dir: Path) -> None:
    """The database on a 4 MB tmpfs, filled to the last byte while the job runs, then freed."""
    from tests.jobs.jobkit import wait_for

    db = read_only_dir / "zbench.db"  # the fixture's tmpfs, left writable here
    [jid] = api.submit([fake_spec("ok", steps=40, step_s=0.1)], db=db)
    deadline = time.monotonic() + 20
    while api.get_job(jid, db).state != "running":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    filler = read_only_dir / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError:
        pass  # full
    finally:
        os.close(fd)
    time.sleep(3.0)  # progress and sample writes fail meanwhile
    filler.unlink()
    info = wait_for(jid, db, ("done", "failed", "crashed", "lost"), timeout=60)
    assert info.state == "done" and info.run_id is not None, info.reason
    log = (home / "supervisor.log").read_text()
    assert "the database failed" in log and "Traceback" not in log


def test_zbench_jobs_still_lists_when_reconciling_fails(
    home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from zbench.cli.jobs_list import list_jobs

    db = home / "zbench.db"
    Store(db).add_jobs([job_row(state="done", created=0.0)])

    def busy(db: object = None) -> list[int]:
        raise StoreError(f"{db}: the database is locked by another program", exit_code=1)

    monkeypatch.setattr(api, "reconcile", busy)
    assert list_jobs(all_jobs=True, db=db, json_out=True) == 0
    out, err = capsys.readouterr()
    assert '"id": 1' in out and err.startswith("zbench: warning: could not check")


def test_a_timeout_is_enforced_while_another_program_holds_the_write_lock(home: Path) -> None:
    """A real lock from another connection: the supervisor's loop must not block on its writes
    (before, each write waited up to 90 s, and timeouts and cancellations waited with it)."""
    from tests.jobs.jobkit import wait_for
    from zbench.jobs import liveness

    db = home / "zbench.db"
    [jid] = api.submit([fake_spec("hang", timeout_s=1.0)], db=db)
    deadline = time.monotonic() + 20
    while not (Store(db).get_job(jid) or {}).get("pid"):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    runner = int((Store(db).get_job(jid) or {})["pid"])
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        gone = time.monotonic() + 8.0
        while liveness.pid_alive(runner) and time.monotonic() < gone:
            time.sleep(0.1)
        assert not liveness.pid_alive(runner), "the timeout stopped the runner under the lock"
    finally:
        other.execute("ROLLBACK")
        other.close()
    info = wait_for(jid, db, ("timeout", "done", "crashed", "lost"), timeout=30)
    assert info.state == "timeout"


def test_following_a_job_rides_out_a_busy_database(home: Path, store_fault: StoreFault) -> None:
    from tests.jobs.jobkit import wait_for
    from zbench.cli.follow import _console, follow

    db = home / "zbench.db"
    [jid] = api.submit([fake_spec("ok", steps=20, step_s=0.05)], db=db)

    def blip() -> None:
        store_fault.message = FAULTS["locked"]
        time.sleep(1.0)
        store_fault.message = None

    thread = threading.Thread(target=blip)
    thread.start()
    infos = follow([jid], db, _console())
    thread.join()
    assert store_fault.hits > 0
    assert infos is not None and infos[0].state == "done"
    assert wait_for(jid, db, ("done",)).run_id is not None
