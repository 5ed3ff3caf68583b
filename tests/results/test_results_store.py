"""The SQLite store: migrations, WAL, and several writer processes at once."""

from __future__ import annotations

import multiprocessing
import sqlite3
import time
from pathlib import Path

from tests.rows import job_row, run_row
from zbench.store import MIGRATIONS, JobRow, RunFilter, RunRow, Store


def test_schema_is_versioned_and_migrations_run_once(tmp_path: Path) -> None:
    db = tmp_path / "z.db"
    store = Store(db)
    assert store.schema_version() == len(MIGRATIONS)
    [jid] = store.add_jobs([job_row(workload="w", config={"a": 1})])
    again = Store(db)  # reopening migrates nothing and keeps data
    assert again.schema_version() == len(MIGRATIONS)
    assert (again.get_job(jid) or {})["config"] == {"a": 1}
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"jobs", "runs", "phase_aggregates", "samples", "supervisor", "schema_version"} <= tables


def test_update_only_if_state(tmp_path: Path) -> None:
    store = Store(tmp_path / "z.db")
    [jid] = store.add_jobs([job_row(workload="w", state="lost")])
    assert not store.update_job(jid, only_if_state=("running",), state="done")
    assert (store.get_job(jid) or {})["state"] == "lost"
    assert store.update_job(jid, only_if_state=("lost",), reason="x")


def _writer(db: str, worker: int, n: int) -> None:
    store = Store(db)
    for i in range(n):
        [jid] = store.add_jobs(
            [job_row(workload=f"w{worker}", config={"i": i}, created=time.time())]
        )
        store.update_job(jid, state="running", step=i)
        store.add_samples(jid, [{"t": time.time(), "phase": "measure", "cpu": float(i)}] * 3)
        store.heartbeat(worker)
        store.update_job(jid, only_if_state=("running",), state="done")


def test_concurrent_writer_processes(tmp_path: Path) -> None:
    db = tmp_path / "z.db"
    reader = Store(db)
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(db), w, 40)) for w in range(4)]
    for p in procs:
        p.start()
    while any(p.is_alive() for p in procs):
        reader.jobs(("running",))  # a reader (the TUI) polling meanwhile
        time.sleep(0.01)
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    jobs = reader.jobs()
    assert len(jobs) == 160 and {j["state"] for j in jobs} == {"done"}
    assert sum(len(reader.samples(j["id"])) for j in jobs) == 480


def test_jobs_and_runs_come_back_as_typed_rows(tmp_path: Path) -> None:
    store = Store(tmp_path / "z.db")
    [jid] = store.add_jobs([job_row(workload="w", config={"a": 1}, requested_gpus=[0, 1])])
    row = store.job_row(jid)
    assert isinstance(row, JobRow) and row.config == {"a": 1} and row.requested_gpus == [0, 1]
    assert row.as_dict() == store.get_job(jid)
    assert store.job_row(jid + 1) is None
    assert [r.id for r in store.job_rows(("queued",))] == [jid] and not store.job_rows(("done",))
    rid = store.add_run(run_row(job_id=jid, result={"samples_per_s": 5.0}))
    [run] = store.run_rows()
    assert isinstance(run, RunRow) and (run.id, run.job_id) == (rid, jid)
    assert run.result == {"samples_per_s": 5.0} and run.as_dict() == store.get_run(rid)


def test_the_run_filter_matches_every_field_given(tmp_path: Path) -> None:
    store = Store(tmp_path / "z.db")
    a = store.add_run(run_row(job_id=1))
    b = store.add_run(run_row(job_id=2, created=20.0, framework="tf", gpu_name="GPU_x%y"))
    c = store.add_run(run_row(job_id=3, framework="demo", workload="snake", mode="rl", kind="demo"))

    def ids(**kw: object) -> list[int]:
        return [r.id for r in store.run_rows(RunFilter(**kw))]  # type: ignore[arg-type]

    assert ids() == [a, b, c]
    assert ids(framework="tf") == [b] and ids(kinds=["benchmark"]) == [a, b]
    assert ids(kinds=["demo", "probe"]) == [c] and ids(kinds=[]) == []
    assert ids(workload="snake", mode="rl") == [c]
    assert ids(gpu_name_has="h200") == [a, c]  # case-insensitive substring
    assert ids(gpu_name_has="_x%") == [b] and ids(gpu_name_has="x_y") == []  # no wildcards
    assert ids(since=15.0) == [b]
    assert ids(run_ids=[a, c], job_ids=[3]) == [c]
    assert ids(job_ids=[]) == []  # an empty job list matches nothing, not everything


def test_a_stored_value_that_is_no_json_is_one_line_naming_the_database(filled: Path) -> None:
    """A config cell edited by hand ended every read with the JSON parser's words alone
    ("Expecting property name enclosed in double quotes: ...") and no word of where."""
    import subprocess
    import sys

    conn = sqlite3.connect(filled)
    conn.execute("UPDATE runs SET config = '{notjson' WHERE id = 1")
    conn.commit()
    conn.close()
    for args in (["results"], ["export", "-f", "json"]):
        got = subprocess.run(
            [sys.executable, "-m", "zbench", *args, "--db", str(filled)],
            capture_output=True,
            text=True,
        )
        assert got.returncode == 2
        assert got.stderr.startswith(
            f"zbench: {args[0]}: {filled}: damaged: the config of row 1 is not JSON ("
        )
        assert got.stderr.endswith("; was the database edited outside zbench?\n")
        assert len(got.stderr.splitlines()) == 1


def test_count_runs_counts_what_runs_returns(tmp_path: Path) -> None:
    """An empty table's note counts the other tables' runs without reading them."""
    store = Store(tmp_path / "z.db")
    for kind, workload in (("benchmark", "resnet50"), ("demo", "snake"), ("demo", "motion")):
        store.add_run(run_row(kind=kind, workload=workload))
    for match in (
        None,
        RunFilter(kinds=["demo"]),
        RunFilter(kinds=[]),
        RunFilter(workload="snake"),
    ):
        assert store.count_runs(match) == len(store.runs(match))
    assert store.count_runs(RunFilter(kinds=["demo"])) == 2
