"""The database file as the OS sees it: what its errors mean in one line, whether it can be
written here, and creating it owner-only. The rest of ``zbench.store`` holds the SQL."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from zbench.errors import ZbenchError


def is_busy(exc: sqlite3.OperationalError) -> bool:
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
