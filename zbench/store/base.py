"""The store's plumbing: one connection per thread, short transactions, retries while busy, the
schema migrated on open, and what identifies the database file.

Several processes write at once (the job supervisor, ``zbench`` commands, the TUI), so every method
opens a short transaction, and a write that finds the database busy is retried with a growing pause
on top of SQLite's own ``busy_timeout``. Schema changes are appended to ``migrations.MIGRATIONS``;
the applied version is kept in ``schema_version``. The tables' own methods are in ``jobs.py`` and
``runs.py``.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from zbench.store.file import StoreError, create_private, is_busy, read_only, store_error
from zbench.store.migrations import MIGRATIONS

T = TypeVar("T")

BUSY_RETRIES = 8
_JSON_COLUMNS = {"config", "requested_gpus", "gpu_ids", "env", "result", "metrics", "data"}


def decode(row: sqlite3.Row) -> dict[str, Any]:
    out = {}
    for key in row.keys():  # noqa: SIM118 (sqlite3.Row is not a mapping)
        value = row[key]
        out[key] = json.loads(value) if key in _JSON_COLUMNS and value is not None else value
    return out


class StoreBase:
    """Connection, transactions, retries and migration of the database at ``path``; ``Store``
    (``zbench.store``) adds the tables' methods."""

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
        return self._retry(lambda: [decode(r) for r in self._conn().execute(sql, params)])

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


def encode(column: str, value: Any) -> Any:
    if column in _JSON_COLUMNS and value is not None:
        return json.dumps(value)
    if isinstance(value, bool):
        return int(value)
    return value
