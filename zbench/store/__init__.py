"""The one SQLite store (WAL): all of zbench's SQL lives in this package; typed rows in and out.

``Store(path)`` opens (creating and migrating) the database; its methods are grouped by table:
``jobs.py`` (jobs, supervisor), ``runs.py`` (runs, phase aggregates, samples), on the plumbing of
``base.py``; ``migrations.py`` is the schema and ``file.py`` the file as the OS sees it.
"""

from __future__ import annotations

from zbench.store.base import abandoned_connections
from zbench.store.file import StoreBroken, StoreError, holds_database
from zbench.store.jobs import JOB_COLUMNS, JobRow, JobsTable
from zbench.store.migrations import MIGRATIONS
from zbench.store.runs import RunFilter, RunRow, RunsTable

__all__ = [
    "JOB_COLUMNS",
    "MIGRATIONS",
    "JobRow",
    "RunFilter",
    "RunRow",
    "Store",
    "StoreBroken",
    "StoreError",
    "abandoned_connections",
    "holds_database",
]


class Store(JobsTable, RunsTable):
    """The database at ``path`` (created and migrated on first use).

    Opening it only reads, unless the schema is behind (then it migrates, which writes): listing
    jobs or results never queues behind a writer. A database that cannot be written (a read-only
    mount or file) is opened read-only; what reads works, a write fails as "read-only"."""
