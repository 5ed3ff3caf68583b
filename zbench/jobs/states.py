"""The states a job can be in: the one place they are spelled."""

from __future__ import annotations

from enum import Enum


class JobState(str, Enum):
    """A job's state as stored (a ``str``: it compares equal to its stored text). Not ``StrEnum``:
    zbench supports Python 3.10."""

    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    OOM = "oom"
    TIMEOUT = "timeout"
    CANCELLED = "cancelled"
    CRASHED = "crashed"
    LOST = "lost"

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)

    @property
    def finished(self) -> bool:
        return self not in (JobState.QUEUED, JobState.RUNNING)


ACTIVE: tuple[JobState, ...] = (JobState.QUEUED, JobState.RUNNING)
FINISHED: tuple[JobState, ...] = tuple(s for s in JobState if s.finished)

# The reason of a job that failed on input its runner refused (a `config` error event: a dataset
# it could not read, an option it rejected) starts with this: bad input, exit status 2.
REFUSED_PREFIX = "config: "
