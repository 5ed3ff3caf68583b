"""The database file as the OS sees it: what its errors mean in one line, whether it can be
written here, creating it whole and owner-only, and whether it is still the file that was opened
(not emptied, truncated, or stripped of its ``-wal``/``-shm`` under an open connection)."""

from __future__ import annotations

import os
import sqlite3
import uuid
from pathlib import Path

from zbench.errors import ZbenchError, bad_path


def is_busy(exc: sqlite3.OperationalError) -> bool:
    """Whether a SQLite error means the database is locked or busy (worth trying again)."""
    text = str(exc).lower()
    return "locked" in text or "busy" in text


class StoreError(ZbenchError):
    """The database cannot be used right now: locked, full, read-only, damaged or not a zbench
    database. One line for the user; ``exit_code`` 2 when the file itself is the problem, 1 when
    the work failed on a sound file (busy, disk full, I/O error). The supervisor keeps its running
    jobs going through any of them and tries again."""

    def __init__(self, message: str, *, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class StoreBroken(StoreError):
    """The file under an open connection was emptied, truncated, or lost its ``-wal``/``-shm``:
    what this process writes could vanish, so it stops writing; never tried again."""


def store_error(path: Path, exc: BaseException) -> StoreError:
    """``exc`` from sqlite3 or the OS as one line that names what is wrong, not "corrupt" for
    everything."""
    text = str(exc).lower()
    if isinstance(exc, sqlite3.OperationalError) and is_busy(exc):
        return StoreError(
            f"{path}: the database is locked by another program; try again when it is done",
            exit_code=1,
        )
    if "disk is full" in text or "no space" in text:
        return StoreError(f"{path}: the disk is full", exit_code=1)
    if "readonly" in text or "read-only" in text:
        return StoreError(f"{path}: the database is read-only (this command needs to write it)")
    if isinstance(exc, OSError) and bad_path(exc):  # --db under a file, in /proc, no access
        what = "open" if path.exists() else "create"
        return StoreError(f"{path}: cannot {what} the database there ({exc.strerror or exc})")
    if "disk i/o" in text or isinstance(exc, OSError):
        detail = getattr(exc, "strerror", None) or exc
        return StoreError(f"{path}: I/O error ({detail})", exit_code=1)
    if "malformed" in text or "not a database" in text or "corrupt" in text:
        return StoreError(
            f"{path}: not a usable zbench database: the file is damaged or not SQLite ({exc})"
        )
    if "unable to open" in text:
        return StoreError(f"{path}: cannot open the database file")
    return StoreError(f"{path}: not a usable zbench database ({exc})")


def read_only(path: Path) -> bool:
    """Whether the database cannot be written here: a file (or, for a new one, a folder) this
    process may not write, or a read-only mount."""
    if path.exists():
        return not os.access(path, os.W_OK) or not os.access(path.parent, os.W_OK)
    parent = next((p for p in path.parents if p.exists()), None)
    return parent is not None and not os.access(parent, os.W_OK)


def create_private(path: Path) -> None:
    """Create a new database file readable by its owner only (SQLite gives its -wal and -shm
    files the same mode)."""
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        return
    os.close(fd)


# --- what identifies the file, and whether it is still the file that was opened ------------------

FileId = tuple[int, int]


def file_id(path: Path) -> FileId | None:
    """(device, inode) of ``path``, None when it is missing."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def side_ids(path: Path) -> tuple[FileId | None, FileId | None]:
    """The identities of the database's ``-wal`` and ``-shm`` files. While a connection is open
    SQLite never removes them, so a change means someone deleted or replaced them under it."""
    return file_id(Path(f"{path}-wal")), file_id(Path(f"{path}-shm"))


def held_unlinked(ids: set[FileId]) -> bool:
    """Whether this process holds one of the files ``ids`` open although it has no name any more
    (deleted under it). Linux's ``/proc/self/fd`` tells; elsewhere assume so."""
    try:
        fds = os.listdir("/proc/self/fd")
    except OSError:
        return True
    for fd in fds:
        try:
            st = os.stat(f"/proc/self/fd/{fd}")  # the open file itself, named or not
        except OSError:
            continue
        if (st.st_dev, st.st_ino) in ids and st.st_nlink == 0:
            return True
    return False


def size_problem(path: Path, seen: int) -> str | None:
    """Why the file at ``path`` is no longer the database once ``seen`` bytes long (emptied or
    truncated under it), or None (also when it is missing: a moved file is not damaged). Only
    ``stat``: opening and closing the file here would drop SQLite's own locks on it (POSIX locks
    belong to the process, sqlite.org/howtocorrupt.html), and another process could then delete
    the -wal in use."""
    try:
        size = os.stat(path).st_size
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot look at it ({exc.strerror or exc})"
    if size == 0:
        return "the file was emptied (0 bytes)"
    if size < seen:
        return f"the file shrank from {seen} to {size} bytes (truncated?)"
    return None


def is_empty(path: Path) -> bool:
    """A 0-byte file: never a database zbench made (a new one is made whole,
    :func:`create_database`, and SQLite never empties a file), whatever ``-wal`` is beside it."""
    try:
        return os.stat(path).st_size == 0
    except OSError:
        return False


# How a SQLite database and a write-ahead log begin (sqlite.org/fileformat.html).
_HEADERS = (b"SQLite format 3\x00", b"\x37\x7f\x06\x82", b"\x37\x7f\x06\x83")


def holds_database(path: Path, db: Path | None = None) -> bool:
    """Whether writing over ``path`` would destroy a database: the file of ``db`` or its
    ``-wal``/``-shm`` (told by identity, never opened: closing a file drops this process's SQLite
    locks on it), or any file that begins as a SQLite database or write-ahead log does."""
    target = file_id(path)
    if target is None:
        return False
    if db is not None and target in (file_id(db), *side_ids(db)):
        return True
    if not os.path.isfile(path):  # a pipe or a terminal (-o /dev/stdout): reading it would wait
        return False
    try:
        with open(path, "rb") as f:
            head = f.read(16)
    except OSError:
        return False
    return any(head.startswith(h) for h in _HEADERS)


def create_database(path: Path) -> None:
    """Create a new, valid (WAL-mode, still schema-less) database at ``path``, owner-only, made
    whole under another name and linked into place: another process never sees it half made (a
    0-byte file is refused as not a database). Someone else's file already there is kept."""
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.new")
    create_private(tmp)
    try:
        conn = sqlite3.connect(tmp, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode = WAL")
        finally:
            conn.close()
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass
        except OSError:  # no hard links on this file system: the old way, a short empty window
            if not path.exists():
                create_private(path)
                with open(path, "r+b") as out:
                    out.write(tmp.read_bytes())
    finally:
        tmp.unlink(missing_ok=True)
