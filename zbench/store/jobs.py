"""The ``jobs`` and ``supervisor`` tables: job rows in and out (``JobRow`` typed), the labels
a results filter reads, and the supervisor's row and heartbeat."""

from __future__ import annotations

import socket
import sqlite3
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from zbench.store.base import StoreBase, encode, storable

JOB_COLUMNS = [
    "suite",
    "workload",
    "framework",
    "mode",
    "precision",
    "config",
    "requested_gpus",
    "gpu_ids",
    "share_gpus",
    "timeout_s",
    "state",
    "phase",
    "step",
    "total",
    "samples_per_s",
    "reason",
    "log_tail",
    "created",
    "started",
    "ended",
    "pid",
    "log_path",
    "events_path",
    "run_id",
    "cancel_grace",
    "tag",
    "kind",
]


@dataclass(frozen=True)
class JobRow:
    """One row of ``jobs``, JSON columns decoded. ``state`` is a ``jobs.states.JobState`` value."""

    id: int
    workload: str
    framework: str
    mode: str
    config: dict[str, Any]
    state: str
    created: float
    suite: str | None = None
    precision: str | None = None
    requested_gpus: list[int] | None = None
    gpu_ids: list[int] | None = None
    share_gpus: int = 0
    timeout_s: float | None = None
    phase: str | None = None
    step: int | None = None
    total: int | None = None
    samples_per_s: float | None = None
    reason: str | None = None
    log_tail: str | None = None
    started: float | None = None
    ended: float | None = None
    pid: int | None = None
    log_path: str | None = None
    events_path: str | None = None
    run_id: int | None = None
    cancel_grace: float | None = None
    tag: str | None = None
    kind: str = "benchmark"  # its row of contract.kinds

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class JobsTable(StoreBase):
    """The methods of ``jobs`` and ``supervisor`` (``Store`` mixes them in)."""

    # --- jobs --------------------------------------------------------------------------------

    def add_jobs(self, jobs: Iterable[dict[str, Any]]) -> list[int]:
        rows = list(jobs)

        def insert(conn: sqlite3.Connection) -> list[int]:
            ids = []
            for job in rows:
                cols = [c for c in JOB_COLUMNS if c in job]
                values = [encode(c, job[c]) for c in cols]
                sql = f"INSERT INTO jobs ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})"
                cur = conn.execute(sql, values)
                ids.append(int(cur.lastrowid or 0))
            return ids

        return self._write(insert)

    def update_job(self, job_id: int, *, only_if_state: Sequence[str] = (), **fields: Any) -> bool:
        """Set ``fields``; with ``only_if_state`` only while the job is in one of those states.
        True when a row changed."""
        unknown = set(fields) - set(JOB_COLUMNS)
        if unknown:
            raise ValueError(f"unknown job fields: {sorted(unknown)}")
        sets = ", ".join(f"{k} = ?" for k in fields)
        params: list[Any] = [encode(k, v) for k, v in fields.items()] + [job_id]
        sql = f"UPDATE jobs SET {sets} WHERE id = ?"
        if only_if_state:
            sql += f" AND state IN ({', '.join('?' * len(only_if_state))})"
            params += list(only_if_state)
        return self._write(lambda conn: conn.execute(sql, params).rowcount > 0)

    def get_job(self, job_id: int) -> dict[str, Any] | None:
        if not storable(job_id):
            return None
        rows = self._read("SELECT * FROM jobs WHERE id = ?", (job_id,))
        return rows[0] if rows else None

    def jobs(self, states: Sequence[str] = (), since: float | None = None) -> list[dict[str, Any]]:
        """Jobs in ``states`` (all when empty), or created at/after ``since``, oldest first."""
        where: list[str] = []
        params: list[Any] = []
        if states:
            where.append(f"state IN ({', '.join('?' * len(states))})")
            params += list(states)
        if since is not None:
            where.append("created >= ?")
            params.append(since)
        sql = "SELECT * FROM jobs"
        if where:
            sql += " WHERE " + " OR ".join(where)
        return self._read(sql + " ORDER BY id", params)

    def job_row(self, job_id: int) -> JobRow | None:
        row = self.get_job(job_id)
        return JobRow(**row) if row is not None else None

    def job_rows(self, states: Sequence[str] = (), since: float | None = None) -> list[JobRow]:
        """:meth:`jobs` as typed rows."""
        return [JobRow(**r) for r in self.jobs(states, since)]

    # --- which jobs a results filter means ---------------------------------------------------

    def job_labels(self, job_ids: Sequence[int]) -> dict[int, dict[str, Any]]:
        """Suite name, tag and creation time of each job."""
        if not job_ids:
            return {}
        marks = ", ".join("?" * len(job_ids))
        sql = f"SELECT id, suite, tag, created FROM jobs WHERE id IN ({marks})"
        return {int(r["id"]): r for r in self._read(sql, list(job_ids))}

    def tagged_jobs(self, tag: str) -> list[int]:
        return [int(r["id"]) for r in self._read("SELECT id FROM jobs WHERE tag = ?", (tag,))]

    def suite_jobs(self, suite: str) -> list[int]:
        return [int(r["id"]) for r in self._read("SELECT id FROM jobs WHERE suite = ?", (suite,))]

    def suite_run_jobs(self, job_id: int) -> list[int]:
        """The jobs one `zbench suite` call submitted together with ``job_id`` (same suite, same
        submission time); just ``job_id`` for a job that was not part of a suite."""
        if not storable(job_id):
            return []
        rows = self._read(
            "SELECT j.id FROM jobs j, jobs k WHERE k.id = ? AND (j.id = k.id OR "
            "(k.suite IS NOT NULL AND j.suite = k.suite AND j.created = k.created)) ORDER BY j.id",
            (job_id,),
        )
        return [int(r["id"]) for r in rows]

    # --- supervisor ----------------------------------------------------------------------------

    def set_supervisor(self, pid: int, host: str, started: float) -> None:
        self._write(
            lambda conn: conn.execute(
                "INSERT OR REPLACE INTO supervisor VALUES (1, ?, ?, ?, ?)",
                (pid, host, started, time.time()),
            )
        )

    def heartbeat(self, pid: int, host: str | None = None) -> None:
        """Refresh the supervisor's heartbeat, writing its row back if something removed it (a
        heartbeat must never silently stop being seen)."""
        now = time.time()
        self._write(
            lambda conn: conn.execute(
                "INSERT INTO supervisor (id, pid, host, started, heartbeat) VALUES (1, ?, ?, ?, ?) "
                "ON CONFLICT(id) DO UPDATE SET pid = excluded.pid, host = excluded.host, "
                "heartbeat = excluded.heartbeat, "
                "started = CASE WHEN pid = excluded.pid THEN started ELSE excluded.started END",
                (pid, host or socket.gethostname(), now, now),
            )
        )

    def clear_supervisor(self, pid: int | None = None) -> None:
        if pid is None:
            self._write(lambda conn: conn.execute("DELETE FROM supervisor"))
        else:
            self._write(lambda conn: conn.execute("DELETE FROM supervisor WHERE pid = ?", (pid,)))

    def supervisor(self) -> dict[str, Any] | None:
        rows = self._read("SELECT * FROM supervisor")
        return rows[0] if rows else None
