"""Migration 3: a database written before job kinds were stored gets a ``kind`` column on jobs and
runs, each old row backfilled with the kind its config (or, for old probes, its workload) shows."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from tests.rows import job_row
from zbench.store import MIGRATIONS, Store

OLD = [  # (workload, framework, config) as zbench wrote them before the kind column
    ("resnet50", "torch", {"workload": "resnet50", "framework": "torch"}),
    ("snake", "demo", {"kind": "demo", "demo": "snake", "workload": "snake"}),
    ("probe", "torch", {"kind": "probe", "workload": "probe"}),
    ("probe", "torch", {"workload": "probe"}),  # a probe recorded with no kind in its config
    ("resnet50", "torch", {"workload": "resnet50", "nodes": [{"host": "a"}, {"host": "b"}]}),
    ("motion", "demo", {"workload": "motion"}),  # a demo known only by its framework
]
KINDS = ["benchmark", "demo", "probe", "probe", "nodes", "demo"]


def _schema_2(path: Path) -> None:
    conn = sqlite3.connect(path)
    for sql in MIGRATIONS[:2]:
        for statement in sql.split(";"):
            if statement.strip():
                conn.execute(statement)
    conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    conn.execute("INSERT INTO schema_version VALUES (2)")
    for i, (workload, framework, config) in enumerate(OLD):
        conn.execute(
            "INSERT INTO jobs (workload, framework, mode, config, state, created) "
            "VALUES (?, ?, 'train', ?, 'done', ?)",
            (workload, framework, json.dumps(config), float(i)),
        )
        conn.execute(
            "INSERT INTO runs (job_id, created, workload, framework, mode, gpus, config, env, "
            "result) VALUES (?, ?, ?, ?, 'train', 1, ?, '{}', '{}')",
            (i + 1, float(i), workload, framework, json.dumps(config)),
        )
    conn.commit()
    conn.close()


def test_an_old_database_gets_the_kind_column_backfilled(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    _schema_2(db)
    store = Store(db)
    assert store.schema_version() == len(MIGRATIONS) == 3
    assert [j.kind for j in store.job_rows()] == KINDS
    assert [r.kind for r in store.run_rows()] == KINDS
    [job] = store.add_jobs([job_row(workload="w", created=9.0)])
    row = store.job_row(job)
    assert row is not None and row.kind == "benchmark"  # a row that names none is a benchmark
