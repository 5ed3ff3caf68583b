"""How the supervisor lives with a database that fails.

A database that is busy, full, or fails with an I/O error heals: running jobs go on and each write
is tried again on a later tick. A file that cannot heal (emptied or truncated under the
supervisor, its ``-wal``/``-shm`` deleted, or damaged for ``STORE_GIVE_UP_S``) is another matter:
what the supervisor writes could vanish, or land in a view of the database that no one else sees
(a reused job id, a finished job queued again). Then it stops writing at once ("broken"), lets its
running jobs end, keeps their events files, logs where each one is, and exits: the next look (any
``zbench jobs``, a following ``zbench run``, a submission) finds it dead and stores the result
found in each events file, as for any dead supervisor's jobs.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from zbench.jobs.runjob import RunningJob
from zbench.jobs.timings import env_seconds
from zbench.store import Store, StoreBroken, StoreError

log = logging.getLogger("zbench.supervisor")

# A database that keeps failing this long: with nothing running, the supervisor ends (one line);
# a damaged file (not busy, full or I/O) stops its writes even while jobs run.
STORE_GIVE_UP_S = env_seconds("ZBENCH_STORE_GIVE_UP_S")


class StoreGuard:
    """The supervisor's side of a failing store (``Supervisor`` mixes it in)."""

    store: Store
    running: dict[int, RunningJob]
    stopping: bool

    def _init_guard(self) -> None:
        self.trouble_since: float | None = None  # the store has failed since then (None: fine)
        self._trouble_text = ""
        self._tick_failed = False
        self.broken: StoreError | None = None  # set once the file cannot be trusted: no writes

    def _guard(self, fn: Callable[..., object], *args: Any) -> bool:
        """``fn(*args)``; a :class:`StoreError` (locked, disk full, I/O error, damaged file) is
        logged once in one line and ``fn`` is tried again on a later tick. True when it worked.
        Once broken, nothing is tried."""
        if self.broken is not None:
            return False
        try:
            fn(*args)
        except StoreBroken as exc:
            self._break(exc)
            return False
        except StoreError as exc:
            now = time.monotonic()
            self._tick_failed = True
            if self.trouble_since is None:
                self.trouble_since = now
            if str(exc) != self._trouble_text:
                self._trouble_text = str(exc)
                log.warning("the database failed (%s); running jobs go on, retrying", exc)
            if now - self.trouble_since >= STORE_GIVE_UP_S:
                if not self.running:
                    raise  # nothing is running, so nothing is lost by stopping
                if exc.exit_code == 2:  # damaged this long: it will not heal
                    self._break(exc)
            return False
        return True

    def _tick_done(self) -> None:
        """The database counts as working again after a whole tick without a failure."""
        if self.trouble_since is not None and not self._tick_failed:
            log.info("the database works again after %.0f s", time.monotonic() - self.trouble_since)
            self.trouble_since, self._trouble_text = None, ""
        self._tick_failed = False

    def _break(self, exc: StoreError) -> None:
        """Stop writing to the database for good (see the module's docstring)."""
        self.broken = exc
        log.error("stopping all writes to the database: %s", exc)
        for job in self.running.values():
            log.error(
                "job %d runs on to its end; its events stay in %s (the next `zbench jobs` "
                "stores a result found there)",
                job.id,
                job.events_path,
            )

    def _abandon(self, job: RunningJob, rc: int) -> None:
        """A job that ended but cannot be recorded (the store is broken, or failing while the
        supervisor is being stopped): log it, keep its events, let it go."""
        job.read_events()
        outcome = job.outcome(rc)
        log.error(
            "job %d: %s (%s), exit status %d; not recorded in the database; its events stay in %s",
            job.id,
            outcome.state,
            outcome.reason,
            rc,
            job.events_path,
        )
        job.remove_scratch()
        self.running.pop(job.id, None)
        job.close()
