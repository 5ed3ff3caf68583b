"""The store's plumbing: one connection per thread, short transactions, retries while busy, the
schema migrated on open, and what identifies the database file.

Several processes write at once (the job supervisor, ``zbench`` commands, the TUI), so every method
opens a short transaction, and a write that finds the database busy is retried with a growing pause
on top of SQLite's own ``busy_timeout``. Schema changes are appended to ``migrations.MIGRATIONS``;
the applied version is kept in ``schema_version``. The tables' own methods are in ``jobs.py`` and
``runs.py``.
"""

from __future__ import annotations

import contextlib
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

from zbench.store.file import (
    FileId,
    StoreBroken,
    StoreError,
    create_database,
    file_id,
    held_unlinked,
    is_busy,
    is_empty,
    read_only,
    side_ids,
    size_problem,
    store_error,
)
from zbench.store.migrations import MIGRATIONS

T = TypeVar("T")
_S = TypeVar("_S", bound="StoreBase")

BUSY_RETRIES = 8
# What a command that only reads waits for a busy database, at most about READ_BUSY_S * READ_RETRIES
# (`zbench jobs` must answer, not queue behind a wedged writer for minutes).
READ_BUSY_S = 2.0
READ_RETRIES = 3
# Connections over files deleted or emptied under them, kept open on purpose (Store._abandon).
_ABANDONED: list[sqlite3.Connection] = []
_JSON_COLUMNS = {"config", "requested_gpus", "gpu_ids", "env", "result", "metrics", "data"}


def storable(value: int) -> bool:
    """Whether ``value`` fits SQLite's INTEGER (64-bit): an id that does not names no row (binding
    it would raise OverflowError), so the id lookups answer "none" for it."""
    return -(2**63) <= value < 2**63


def decode(row: sqlite3.Row, path: Path | None = None) -> dict[str, Any]:
    """A row as a dict, its JSON columns decoded; a :class:`StoreError` naming the database
    ``path``, the column and the row where one holds no JSON (edited outside zbench)."""
    out = {}
    for key in row.keys():  # noqa: SIM118 (sqlite3.Row is not a mapping)
        value = row[key]
        try:
            out[key] = json.loads(value) if key in _JSON_COLUMNS and value is not None else value
        except (ValueError, TypeError, RecursionError) as exc:
            where = f" of row {row['id']}" if "id" in row.keys() else ""  # noqa: SIM118
            raise StoreError(
                f"{path}: damaged: the {key}{where} is not JSON ({exc}); "
                "was the database edited outside zbench?"
            ) from None
    return out


class StoreBase:
    """Connection, transactions, retries and migration of the database at ``path``; ``Store``
    (``zbench.store``) adds the tables' methods."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        busy_s: float = 10.0,
        retries: int | None = None,
    ) -> None:
        """``busy_s``, ``retries``: how long one statement waits for another writer, and how
        often a busy one is tried again (default ``BUSY_RETRIES``) before :class:`StoreError`
        says the database is locked. The supervisor waits briefly: it tries again on its own.
        Once the ``-wal``/``-shm`` under this object's connection are deleted or replaced, or
        the file is emptied, a call raises :class:`StoreBroken`: no one may go on from a view
        of the database that is gone."""
        self.path = Path(path)
        self.busy_s = busy_s
        self.retries = retries
        self._size_seen = 0  # the file's largest size seen by check_file (zbench never vacuums)
        self._local = threading.local()
        self.readonly = read_only(self.path)
        try:
            self._refuse_empty()
            if not self.readonly and not self.path.exists():
                self.path.parent.mkdir(parents=True, exist_ok=True)
                create_database(self.path)
            self._file_id = file_id(self.path)
            self._retry(self._migrate_if_behind)
        except StoreError:
            self.close()
            raise
        except (sqlite3.DatabaseError, OSError) as exc:
            self.close()
            raise store_error(self.path, exc) from None

    @classmethod
    def reader(cls: type[_S], path: str | os.PathLike[str]) -> _S:
        """The database for a command that only reads: it waits a few seconds at most."""
        return cls(path, busy_s=READ_BUSY_S, retries=READ_RETRIES)

    def _refuse_empty(self) -> None:
        """A 0-byte file is not a database zbench made (a new one is made whole): say so rather
        than quietly starting a new database in it (or in a file emptied under a supervisor). A second hard link is refused too:
        SQLite keeps the write-ahead log beside each name, so two names for one file give two
        logs and a corrupt database (sqlite.org/howtocorrupt.html). A new file is linked into
        place (two links, or empty without hard links, for a moment): hence the second looks."""
        if os.path.isdir(self.path):  # its link count read as "hard links" before
            raise StoreError(f"{self.path}: a folder, not a database file (--db names a file)")
        for _ in range(10):
            problem = self._file_problem()
            if problem is None:
                return
            time.sleep(0.1)
        raise StoreError(f"{self.path}: {problem}")

    def _refuse_foreign(self, conn: sqlite3.Connection) -> None:
        """Another program's database (tables, and no ``schema_version``, which zbench writes
        with its first tables in one transaction) is refused on the connection's first read,
        before it turns on write-ahead logging, a lasting change to the file; the first
        migration then failed on a table of the same name ("table runs already exists")."""
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        ]
        if tables and "schema_version" not in tables:
            conn.close()
            shown = ", ".join(sorted(tables)[:5]) + (", ..." if len(tables) > 5 else "")
            raise StoreError(
                f"{self.path}: not a zbench database (it holds another program's tables: "
                f"{shown}); --db takes zbench's own file or a new one"
            )

    def _file_problem(self) -> str | None:
        try:
            links = os.stat(self.path).st_nlink
        except FileNotFoundError:
            return None
        if is_empty(self.path):
            return (
                "the file is empty (0 bytes), not a zbench database; delete it to start a new one"
            )
        if links > 1 and not self.readonly:
            return (
                f"the file has {links} hard links: SQLite keeps its log beside each name, so "
                "two names for one database corrupt it; keep one (a symlink is fine)"
            )
        return None

    # --- plumbing ----------------------------------------------------------------------------

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None and not self.readonly:
            self._check_sides(conn)
            conn = getattr(self._local, "conn", None)
        if conn is None:
            if self.readonly:
                # immutable: no -wal/-shm files are needed (none can be made on a read-only mount)
                uri = f"{self.path.resolve().as_uri()}?immutable=1"
                conn = sqlite3.connect(uri, uri=True, timeout=self.busy_s, isolation_level=None)
            else:
                conn = sqlite3.connect(self.path, timeout=self.busy_s, isolation_level=None)
            conn.row_factory = sqlite3.Row
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_s * 1000)}")
            self._refuse_foreign(conn)
            if not self.readonly:
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = NORMAL")
                # A first read opens the -wal and -shm: remember which files they are.
                conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
                self._local.sides = side_ids(self.path)
            self._local.conn = conn
        return conn

    def _check_sides(self, conn: sqlite3.Connection) -> None:
        """:class:`StoreBroken` when the ``-wal``/``-shm`` this connection opened were deleted or
        replaced under it (SQLite never removes them while a connection is open; a person or a
        tool can). The connection is abandoned, not closed (see :func:`_abandon`)."""
        before: tuple[FileId | None, FileId | None] = getattr(self._local, "sides", (None, None))
        now = side_ids(self.path)
        changed = {
            name: was
            for name, was, is_ in zip(("-wal", "-shm"), before, now, strict=True)
            if was is not None and is_ != was
        }
        if not changed:
            return
        if not held_unlinked(set(changed.values())):
            self._local.sides = now  # not the files this connection uses: nothing was lost
            return
        self._abandon()
        raise StoreBroken(
            f"{self.path}{next(iter(changed))}: deleted or replaced while the database was in "
            "use; stopping writes (what it held since the last checkpoint is not in the file)",
            exit_code=1,
        )

    def check_file(self) -> None:
        """:class:`StoreBroken` when the file at ``path``, still the one opened, was emptied or
        truncated, or its ``-wal``/``-shm`` were deleted or replaced (a moved file is fine:
        this object goes on with it; see :meth:`replaced`)."""
        if self.readonly or file_id(self.path) != self._file_id:
            return
        problem = size_problem(self.path, self._size_seen)
        with contextlib.suppress(OSError):
            self._size_seen = max(self._size_seen, os.stat(self.path).st_size)
        if problem:
            self._abandon()
            raise StoreBroken(f"{self.path}: {problem} while in use; stopping writes", exit_code=1)
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            self._check_sides(conn)

    def abandon(self) -> None:
        """Let go of this thread's connection without closing it (see :meth:`_abandon`)."""
        self._abandon()

    def _abandon(self) -> None:
        """Let go of this thread's connection without closing it: closing the last connection
        copies its write-ahead log into the main file, and a log that was deleted (or a file
        that was emptied) must not be written back over what others wrote since. Python 3.12
        can close without that copy; before, the connection is kept open until the process
        ends (the supervisor then ends with ``os._exit``)."""
        conn = getattr(self._local, "conn", None)
        self._local.conn = None
        if conn is None:
            return
        no_checkpoint = getattr(sqlite3, "SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE", None)
        if no_checkpoint is not None and hasattr(conn, "setconfig"):
            conn.setconfig(no_checkpoint, True)
            conn.close()
        else:
            _ABANDONED.append(conn)

    def __del__(self) -> None:
        # A sqlite3 connection refers to itself (its statement cache), so it would stay open,
        # holding the files, until the cyclic garbage collector ran: close it with its Store.
        with contextlib.suppress(Exception):
            self.close()

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
        if not self.readonly:
            self._check_sides(conn)  # committed into a log that was just deleted: say so

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
        was replaced or a transaction was left open); abandoned if the file was truncated."""
        if size_problem(self.path, self._size_seen) and file_id(self.path) == self._file_id:
            self._abandon()
            return
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
        return self._retry(
            lambda: [decode(r, self.path) for r in self._conn().execute(sql, params)]
        )

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

    def checkpoint(self) -> None:
        """Copy what the write-ahead log holds into the main file now, without waiting for
        readers (SQLite does it every 1000 pages): a job's start and end, once there, survive
        the ``-wal`` being deleted."""
        self._retry(lambda: self._conn().execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall())

    def schema_version(self) -> int:
        return int(self._read("SELECT version FROM schema_version")[0]["version"])

    # --- identity of this database (for job folders) -------------------------------------------

    def replaced(self) -> bool:
        """Whether the file at ``path`` is no longer the one opened (moved away or swapped: this
        object still works on the old one)."""
        return file_id(self.path) != self._file_id

    def store_id(self) -> str:
        """A random id made once per database file and kept in it: job ids belong to one
        database, so job folders are keyed by this too. The file's identity (device and inode)
        is kept beside it: a copy (``cp zbench.db b.db``) or a restored backup is another file,
        and gets an id of its own the first time it is used; a renamed file keeps its id. Kept
        in its own table, apart from ``MIGRATIONS``."""
        me = ":".join(map(str, self._file_id)) if self._file_id else None

        def read() -> dict[str, str]:
            conn = self._conn()
            if not conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'store_meta'"
            ).fetchone():
                return {}
            return {str(k): str(v) for k, v in conn.execute("SELECT key, value FROM store_meta")}

        found = self._retry(read)
        if found.get("store_id") and (self.readonly or found.get("file_id") == me or me is None):
            return found["store_id"]

        def make(conn: sqlite3.Connection) -> str:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS store_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
            )
            meta = {str(k): str(v) for k, v in conn.execute("SELECT key, value FROM store_meta")}
            sid = meta.get("store_id")
            if sid is None or meta.get("file_id", me) != me:  # none yet, or a copy
                sid = uuid.uuid4().hex[:12]
            conn.executemany(
                "INSERT OR REPLACE INTO store_meta VALUES (?, ?)",
                [("store_id", sid), ("file_id", me)],
            )
            return sid

        return self._write(make)


def abandoned_connections() -> bool:
    """Whether this process let go of a connection over a deleted -wal or an emptied file: it
    must then end with ``os._exit``, as closing those would copy a dead log back."""
    return bool(_ABANDONED)


def encode(column: str, value: Any) -> Any:
    """A value as stored in ``column``: JSON for the JSON columns, booleans as 0 or 1."""
    if column in _JSON_COLUMNS and value is not None:
        return json.dumps(value)
    if isinstance(value, bool):
        return int(value)
    return value
