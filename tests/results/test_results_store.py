"""The SQLite store: migrations, WAL, and several writer processes at once."""

from __future__ import annotations

import multiprocessing
import sqlite3
import time
from pathlib import Path

from zbench.results.store import MIGRATIONS, Store


def test_schema_is_versioned_and_migrations_run_once(tmp_path: Path) -> None:
    db = tmp_path / "z.db"
    store = Store(db)
    assert store.schema_version() == len(MIGRATIONS)
    [jid] = store.add_jobs([{"workload": "w", "framework": "torch", "mode": "train",
                             "config": {"a": 1}, "state": "queued", "created": 1.0}])  # fmt: skip
    again = Store(db)  # reopening migrates nothing and keeps data
    assert again.schema_version() == len(MIGRATIONS)
    assert (again.get_job(jid) or {})["config"] == {"a": 1}
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"jobs", "runs", "phase_aggregates", "samples", "supervisor", "schema_version"} <= tables


def test_update_only_if_state(tmp_path: Path) -> None:
    store = Store(tmp_path / "z.db")
    [jid] = store.add_jobs([{"workload": "w", "framework": "torch", "mode": "train",
                             "config": {}, "state": "lost", "created": 1.0}])  # fmt: skip
    assert not store.update_job(jid, only_if_state=("running",), state="done")
    assert (store.get_job(jid) or {})["state"] == "lost"
    assert store.update_job(jid, only_if_state=("lost",), reason="x")


def _writer(db: str, worker: int, n: int) -> None:
    store = Store(db)
    for i in range(n):
        [jid] = store.add_jobs([{"workload": f"w{worker}", "framework": "torch", "mode": "train",
                                 "config": {"i": i}, "state": "queued", "created": time.time()}])  # fmt: skip
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
