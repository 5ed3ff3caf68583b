"""The results database: SQLite in WAL mode, the only place in zbench where SQL lives.

Several processes write at once (the job supervisor, ``zbench`` commands, the TUI), so every method
opens a short transaction, and a write that finds the database busy is retried with a growing pause
on top of SQLite's own ``busy_timeout``. Schema changes are appended to ``MIGRATIONS``; the applied
version is kept in ``schema_version``.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from zbench.results.storefile import (
    StoreError,
    create_private,
    is_busy,
    read_only,
    store_error,
)

T = TypeVar("T")

# Each entry moves the schema one version up; never edit an entry that has shipped.
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE jobs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        suite TEXT,
        workload TEXT NOT NULL,
        framework TEXT NOT NULL,
        mode TEXT NOT NULL,
        precision TEXT,
        config TEXT NOT NULL,
        requested_gpus TEXT,
        gpu_ids TEXT,
        share_gpus INTEGER NOT NULL DEFAULT 0,
        timeout_s REAL,
        state TEXT NOT NULL,
        phase TEXT,
        step INTEGER,
        total INTEGER,
        samples_per_s REAL,
        reason TEXT,
        log_tail TEXT,
        created REAL NOT NULL,
        started REAL,
        ended REAL,
        pid INTEGER,
        log_path TEXT,
        events_path TEXT,
        run_id INTEGER,
        cancel_grace REAL
    );
    CREATE INDEX jobs_state ON jobs(state);
    CREATE TABLE runs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        job_id INTEGER,
        created REAL NOT NULL,
        workload TEXT NOT NULL,
        framework TEXT NOT NULL,
        mode TEXT NOT NULL,
        precision TEXT,
        batch_size INTEGER,
        gpus INTEGER NOT NULL,
        gpu_name TEXT,
        samples_per_s REAL,
        config TEXT NOT NULL,
        env TEXT NOT NULL,
        result TEXT NOT NULL
    );
    CREATE INDEX runs_created ON runs(created);
    CREATE TABLE phase_aggregates (
        job_id INTEGER NOT NULL,
        run_id INTEGER,
        phase TEXT NOT NULL,
        metrics TEXT NOT NULL,
        PRIMARY KEY (job_id, phase)
    );
    CREATE TABLE samples (
        job_id INTEGER NOT NULL,
        t REAL NOT NULL,
        phase TEXT,
        data TEXT NOT NULL
    );
    CREATE INDEX samples_job ON samples(job_id, t);
    CREATE TABLE supervisor (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        pid INTEGER NOT NULL,
        host TEXT NOT NULL,
        started REAL NOT NULL,
        heartbeat REAL NOT NULL
    );
    """,
    # 2: a user's tag on a job (`zbench run --tag`, `zbench suite --tag`), to publish one session.
    "ALTER TABLE jobs ADD COLUMN tag TEXT",
)

BUSY_RETRIES = 8
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
]
_JSON_COLUMNS = {"config", "requested_gpus", "gpu_ids", "env", "result", "metrics", "data"}


def _decode(row: sqlite3.Row) -> dict[str, Any]:
    out = {}
    for key in row.keys():  # noqa: SIM118 (sqlite3.Row is not a mapping)
        value = row[key]
        out[key] = json.loads(value) if key in _JSON_COLUMNS and value is not None else value
    return out


class Store:
    """The results database at ``path`` (created and migrated on first use).

    Opening it only reads, unless the schema is behind (then it migrates, which writes): listing
    jobs or results never queues behind a writer. A database that cannot be written (a read-only
    mount or file) is opened read-only; what reads works, a write fails as "read-only"."""

    def __init__(
        self, path: str | os.PathLike[str], *, busy_s: float = 10.0, retries: int | None = None
    ) -> None:
        """``busy_s``, ``retries``: how long one statement waits for another writer, and how
        often a busy one is tried again (default ``BUSY_RETRIES``) before :class:`StoreError`
        says the database is locked. The supervisor waits briefly: it tries again on its own."""
        self.path = Path(path)
        self.busy_s = busy_s
        self.retries = retries
        self._local = threading.local()
        self.readonly = read_only(self.path)
        try:
            if not self.readonly:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                create_private(self.path)
            self._retry(self._migrate_if_behind)
            self._file_id = _file_id(self.path)
        except StoreError:
            self.close()
            raise
        except (sqlite3.DatabaseError, OSError) as exc:
            self.close()
            raise store_error(self.path, exc) from None

    # --- plumbing ----------------------------------------------------------------------------

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            if self.readonly:
                # immutable: no -wal/-shm files are needed (none can be made on a read-only mount)
                uri = f"{self.path.resolve().as_uri()}?immutable=1"
                conn = sqlite3.connect(uri, uri=True, timeout=self.busy_s, isolation_level=None)
            else:
                conn = sqlite3.connect(self.path, timeout=self.busy_s, isolation_level=None)
            conn.row_factory = sqlite3.Row
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_s * 1000)}")
            if not self.readonly:
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = NORMAL")
            self._local.conn = conn
        return conn

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        """One short write transaction; BEGIN IMMEDIATE takes the write lock up front so two
        writers never deadlock upgrading read locks."""
        conn = self._conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def _retry(self, fn: Callable[[], T]) -> T:
        """``fn``, tried again while the database is busy; any other database or OS error (and
        busy for too long) becomes a one-line :class:`StoreError`."""
        tries = BUSY_RETRIES if self.retries is None else self.retries
        for attempt in range(tries):
            try:
                return fn()
            except sqlite3.OperationalError as exc:
                if not is_busy(exc) or attempt == tries - 1:
                    self._reset()
                    raise store_error(self.path, exc) from None
                time.sleep(0.05 * 2**attempt)
            except (sqlite3.DatabaseError, OSError) as exc:
                self._reset()
                raise store_error(self.path, exc) from None
        raise AssertionError("unreachable")

    def _reset(self) -> None:
        """After an error: drop this thread's connection (a fresh one next time, in case the file
        was replaced or a transaction was left open)."""
        try:
            self.close()
        except sqlite3.Error:
            self._local.conn = None

    def _write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        def attempt() -> T:
            with self._tx() as conn:
                return fn(conn)

        return self._retry(attempt)

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        return self._retry(lambda: [_decode(r) for r in self._conn().execute(sql, params)])

    def _migrate_if_behind(self) -> None:
        """Read the schema version; take the write lock only when there is something to do."""
        conn = self._conn()
        has_version = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
        ).fetchone()
        if has_version:
            row = conn.execute("SELECT version FROM schema_version").fetchone()
            if row is not None and row[0] == len(MIGRATIONS):
                return
            if row is not None and row[0] > len(MIGRATIONS):
                raise StoreError(
                    f"{self.path}: written by a newer zbench (schema {row[0]}); upgrade zbench"
                )
        if self.readonly:
            raise StoreError(f"{self.path}: read-only and not a current zbench database")
        self._migrate()

    def _migrate(self) -> None:
        with self._tx() as conn:
            conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
            row = conn.execute("SELECT version FROM schema_version").fetchone()
            version = row[0] if row else 0
            for sql in MIGRATIONS[version:]:
                for statement in sql.split(";"):
                    if statement.strip():
                        conn.execute(statement)
            if row is None:
                conn.execute("INSERT INTO schema_version VALUES (?)", (len(MIGRATIONS),))
            elif version != len(MIGRATIONS):
                conn.execute("UPDATE schema_version SET version = ?", (len(MIGRATIONS),))

    def schema_version(self) -> int:
        return int(self._read("SELECT version FROM schema_version")[0]["version"])

    # --- jobs --------------------------------------------------------------------------------

    def add_jobs(self, jobs: Iterable[dict[str, Any]]) -> list[int]:
        rows = list(jobs)

        def insert(conn: sqlite3.Connection) -> list[int]:
            ids = []
            for job in rows:
                cols = [c for c in JOB_COLUMNS if c in job]
                values = [_encode(c, job[c]) for c in cols]
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
        params: list[Any] = [_encode(k, v) for k, v in fields.items()] + [job_id]
        sql = f"UPDATE jobs SET {sets} WHERE id = ?"
        if only_if_state:
            sql += f" AND state IN ({', '.join('?' * len(only_if_state))})"
            params += list(only_if_state)
        return self._write(lambda conn: conn.execute(sql, params).rowcount > 0)

    def get_job(self, job_id: int) -> dict[str, Any] | None:
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

    # --- runs, aggregates, samples -------------------------------------------------------------

    def add_run(self, run: dict[str, Any]) -> int:
        cols = list(run)
        sql = f"INSERT INTO runs ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})"
        values = [_encode(c, run[c]) for c in cols]
        return self._write(lambda conn: int(conn.execute(sql, values).lastrowid or 0))

    def runs(self, where: str = "", params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Runs matching a WHERE clause built by ``results.api`` (columns of ``runs``)."""
        sql = "SELECT * FROM runs" + (f" WHERE {where}" if where else "") + " ORDER BY id"
        return self._read(sql, params)

    def get_run(self, run_id: int) -> dict[str, Any] | None:
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

    # --- identity of this database (for job folders) -------------------------------------------

    def replaced(self) -> bool:
        """Whether the file at ``path`` is no longer the one opened (moved away or swapped: this
        object still works on the old one)."""
        return _file_id(self.path) != self._file_id

    def store_id(self) -> str:
        """A random id made once per database and kept in it: job ids belong to one database,
        so job folders are keyed by this too (a copied or renamed file keeps it, a new file at
        the old path gets a new one). Kept in its own table, apart from ``MIGRATIONS``."""

        def read() -> str | None:
            conn = self._conn()
            if not conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'store_meta'"
            ).fetchone():
                return None
            row = conn.execute("SELECT value FROM store_meta WHERE key = 'store_id'").fetchone()
            return str(row[0]) if row else None

        found = self._retry(read)
        if found:
            return found

        def make(conn: sqlite3.Connection) -> str:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS store_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
            )
            conn.execute(
                "INSERT OR IGNORE INTO store_meta VALUES ('store_id', ?)", (uuid.uuid4().hex[:12],)
            )
            row = conn.execute("SELECT value FROM store_meta WHERE key = 'store_id'").fetchone()
            return str(row[0])

        return self._write(make)


def _file_id(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def _encode(column: str, value: Any) -> Any:
    if column in _JSON_COLUMNS and value is not None:
        return json.dumps(value)
    if isinstance(value, bool):
        return int(value)
    return value
