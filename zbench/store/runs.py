"""The ``runs``, ``phase_aggregates`` and ``samples`` tables: what a job measured, and the one
run filter (``RunFilter``) that reports read runs by."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from zbench.store.base import StoreBase, encode, storable


@dataclass(frozen=True)
class RunRow:
    """One row of ``runs``, JSON columns (``config``, ``env``, ``result``) decoded."""

    id: int
    job_id: int | None
    created: float
    workload: str
    framework: str
    mode: str
    precision: str | None
    batch_size: int | None
    gpus: int
    gpu_name: str | None
    samples_per_s: float | None
    config: dict[str, Any]
    env: dict[str, Any]
    result: dict[str, Any]
    kind: str = "benchmark"  # its row of contract.kinds

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class RunFilter:
    """Which runs to read; every field given must match (None: no condition). ``gpu_name_has``
    is a case-insensitive plain substring of the GPU name (``%`` and ``_`` are not wildcards);
    ``job_ids=[]`` matches no run, nor does an id past SQLite's INTEGER; ``kinds``: the job kinds
    read (None: every kind)."""

    workload: str | None = None
    framework: str | None = None
    mode: str | None = None
    gpu_name_has: str | None = None
    since: float | None = None
    run_ids: Sequence[int] | None = None
    job_ids: Sequence[int] | None = None
    kinds: Sequence[str] | None = None


VALUE_COLUMNS = ("workload", "framework", "mode", "precision")  # Store.run_values reads these


def _where(f: RunFilter) -> tuple[str, list[Any]]:
    where: list[str] = []
    params: list[Any] = []
    for column, value in (("workload", f.workload), ("framework", f.framework), ("mode", f.mode)):
        if value:
            where.append(f"{column} = ?")
            params.append(value)
    if f.gpu_name_has:
        where.append("LOWER(COALESCE(gpu_name, '')) LIKE ? ESCAPE '\\'")
        literal = f.gpu_name_has.lower()
        literal = literal.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        params.append(f"%{literal}%")
    if f.since is not None:
        where.append("created >= ?")
        params.append(f.since)
    run_ids, job_ids = (
        [n for n in i if storable(n)] if i is not None else None for i in (f.run_ids, f.job_ids)
    )
    for column, ids in (("id", run_ids), ("job_id", job_ids), ("kind", f.kinds)):
        if ids is not None:
            where.append(f"{column} IN ({', '.join('?' * len(ids))})" if ids else "0")
            params += list(ids)
    return " AND ".join(where), params


class RunsTable(StoreBase):
    """The methods of ``runs``, ``phase_aggregates`` and ``samples`` (``Store`` mixes them in)."""

    # --- runs, aggregates, samples -------------------------------------------------------------

    def add_run(self, run: dict[str, Any]) -> int:
        cols = list(run)
        sql = f"INSERT INTO runs ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})"
        values = [encode(c, run[c]) for c in cols]
        return self._write(lambda conn: int(conn.execute(sql, values).lastrowid or 0))

    def runs(self, match: RunFilter | None = None) -> list[dict[str, Any]]:
        """Runs matching every field of ``match`` (all runs when None), oldest first."""
        where, params = _where(match or RunFilter())
        sql = "SELECT * FROM runs" + (f" WHERE {where}" if where else "") + " ORDER BY id"
        return self._read(sql, params)

    def count_runs(self, match: RunFilter | None = None) -> int:
        """How many runs :meth:`runs` would return, without reading them."""
        where, params = _where(match or RunFilter())
        sql = "SELECT COUNT(*) AS n FROM runs" + (f" WHERE {where}" if where else "")
        return int(self._read(sql, params)[0]["n"])

    def run_rows(self, match: RunFilter | None = None) -> list[RunRow]:
        """:meth:`runs` as typed rows."""
        return [RunRow(**r) for r in self.runs(match)]

    def run_values(self, column: str) -> set[str]:
        """The distinct values stored runs have in ``column`` (workload, framework, mode or
        precision): what a results filter can match besides the tables' names."""
        if column not in VALUE_COLUMNS:
            raise ValueError(f"not a filter column: {column}")
        rows = self._read(f"SELECT DISTINCT {column} AS v FROM runs WHERE {column} IS NOT NULL", ())
        return {str(r["v"]) for r in rows}

    def get_run(self, run_id: int) -> dict[str, Any] | None:
        if not storable(run_id):
            return None
        rows = self._read("SELECT * FROM runs WHERE id = ?", (run_id,))
        return rows[0] if rows else None

    def set_phase_aggregates(
        self, job_id: int, run_id: int | None, phases: dict[str, dict[str, Any]]
    ) -> None:
        def write(conn: sqlite3.Connection) -> None:
            for phase, metrics in phases.items():
                conn.execute(
                    "INSERT OR REPLACE INTO phase_aggregates VALUES (?, ?, ?, ?)",
                    (job_id, run_id, phase, json.dumps(metrics)),
                )

        self._write(write)

    def phase_aggregates(self, job_ids: Sequence[int]) -> dict[int, dict[str, dict[str, Any]]]:
        if not job_ids:
            return {}
        marks = ", ".join("?" * len(job_ids))
        rows = self._read(f"SELECT * FROM phase_aggregates WHERE job_id IN ({marks})", job_ids)
        out: dict[int, dict[str, dict[str, Any]]] = {}
        for r in rows:
            out.setdefault(r["job_id"], {})[r["phase"]] = r["metrics"]
        return out

    def add_samples(self, job_id: int, samples: Sequence[dict[str, Any]]) -> None:
        rows = [(job_id, s["t"], s.get("phase"), json.dumps(s)) for s in samples]
        if rows:
            self._write(lambda conn: conn.executemany("INSERT INTO samples VALUES (?,?,?,?)", rows))

    def replace_samples(self, job_id: int, samples: Sequence[dict[str, Any]]) -> None:
        rows = [(job_id, s["t"], s.get("phase"), json.dumps(s)) for s in samples]

        def write(conn: sqlite3.Connection) -> None:
            conn.execute("DELETE FROM samples WHERE job_id = ?", (job_id,))
            conn.executemany("INSERT INTO samples VALUES (?,?,?,?)", rows)

        self._write(write)

    def samples(self, job_id: int) -> list[dict[str, Any]]:
        rows = self._read("SELECT data FROM samples WHERE job_id = ? ORDER BY t", (job_id,))
        return [r["data"] for r in rows]
