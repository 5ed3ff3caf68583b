"""Case 1: a job never gets another job's result (job folders are per database, events per
attempt)."""

from __future__ import annotations

import threading
from pathlib import Path

from tests.jobs.jobkit import fake_spec, wait_for
from tests.rows import job_row
from zbench.jobs import api
from zbench.jobs.events import fresh_file
from zbench.jobs.runjob import RunningJob
from zbench.store import Store


def _runs(db: Path) -> list[dict]:
    return Store(db).runs()


def test_a_failed_job_in_a_second_database_does_not_get_the_first_ones_result(home: Path) -> None:
    a, b = home / "a.db", home / "b.db"
    [ja] = api.submit([fake_spec("ok", steps=3)], db=a)
    assert wait_for(ja, a, ("done", "failed", "crashed")).state == "done"
    [jb] = api.submit([fake_spec("crash")], db=b)
    assert ja == jb == 1  # the same id, in two databases
    info = wait_for(jb, b, ("done", "failed", "crashed"))
    assert info.state == "crashed" and info.run_id is None
    assert _runs(b) == [], "b.db holds no run: its only job crashed"
    assert Path(info.events_path or "").parent != Path(api.get_job(ja, a).events_path or "").parent


def test_an_old_oom_in_a_moved_database_does_not_turn_a_new_success_into_oom(home: Path) -> None:
    db = home / "zbench.db"
    [j1] = api.submit([fake_spec("oom")], db=db)
    assert wait_for(j1, db, ("oom", "done", "crashed")).state == "oom"
    db.rename(home / "old.db")
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    [j2] = api.submit([fake_spec("ok", steps=3)], db=db)
    assert j2 == j1
    info = wait_for(j2, db, ("oom", "done", "crashed"))
    assert (info.state, info.reason) == ("done", None)


def test_two_databases_running_at_once_keep_their_own_results(home: Path) -> None:
    dbs = {home / "a.db": 4, home / "b.db": 16}  # told apart by batch size
    ids: dict[Path, int] = {}

    def submit(db: Path, batch: int) -> None:
        spec = fake_spec("ok", steps=20, step_s=0.05)
        spec = api.JobSpec(
            config=spec.config.__class__(**{**spec.config.__dict__, "batch_size": batch}),
        )
        [ids[db]] = api.submit([spec], db=db)

    threads = [threading.Thread(target=submit, args=item) for item in dbs.items()]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for db, batch in dbs.items():
        info = wait_for(ids[db], db, ("done", "failed", "crashed"))
        assert info.state == "done", info.reason
        [run] = _runs(db)
        assert run["batch_size"] == batch


def test_an_events_file_left_by_an_earlier_attempt_is_not_read(home: Path, tmp_path: Path) -> None:
    store = Store(home / "zbench.db")
    [jid] = store.add_jobs(
        [job_row(state="running", config=fake_spec("crash").config.as_dict(), created=0.0)]
    )
    row = store.get_job(jid)
    assert row is not None
    folder = home / "jobs" / store.store_id() / str(jid)
    folder.mkdir(parents=True)
    stale = '{"v": 1, "t": 1.0, "type": "result", "samples_per_s": 2.94}\n'
    (folder / "events.jsonl").write_text(stale)
    job = RunningJob.launch(row, (), store.store_id())
    rc = job.proc.wait(30)
    job.read_events()
    assert job.result_event is None
    assert job.outcome(rc).state == "crashed"
    job.close()


def test_fresh_file_empties_what_was_there(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text("old\n")
    fresh_file(path)
    assert path.read_text() == "" and (path.stat().st_mode & 0o777) == 0o600
