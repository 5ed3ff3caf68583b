"""How long a job has run and how long its current phase has left, from the job rows a viewer
polls (phase, step, total): the CLI's progress bars and the TUI's job view read the same figures.

The estimate is the phase's own rate since the viewer first saw it past its first step (a phase's
steps, such as training steps and tracked frames, are not comparable with another's, and its first
step carries one-time costs), so it needs two looks at the phase with the step advancing; before
that there is none.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from zbench.contract.protocol import Phase


class _Job(Protocol):
    @property
    def id(self) -> int: ...
    @property
    def phase(self) -> str | None: ...
    @property
    def step(self) -> int | None: ...
    @property
    def total(self) -> int | None: ...
    @property
    def started(self) -> float | None: ...
    @property
    def ended(self) -> float | None: ...


@dataclass
class _Seen:
    phase: str | None
    step: int
    at: float


def clock(seconds: float | None) -> str:
    """``H:MM:SS`` (``-:--:--`` when unknown)."""
    if seconds is None or seconds < 0:
        return "-:--:--"
    s = int(seconds)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


# Phases whose steps are not alike, so their rate says nothing of what is left: a compile phase's
# first step compiles (minutes when the cache is cold, seconds from it) and the next one runs or
# recompiles. After its first step it read "~4:50 left" for a step that took two seconds.
NO_ESTIMATE: frozenset[Phase] = frozenset({"compile"})


class PhaseClock:
    """Feed each poll's jobs to :meth:`elapsed` and :meth:`left`; one per viewer."""

    def __init__(self) -> None:
        self._first: dict[int, _Seen] = {}

    @staticmethod
    def elapsed(job: _Job, now: float | None = None) -> float | None:
        """Seconds since the job started, up to its end once it has ended (no state: a viewer
        with no clock of its own calls it on the class)."""
        if job.started is None:
            return None
        return max(0.0, (job.ended or now or time.time()) - job.started)

    def left(self, job: _Job, now: float | None = None) -> float | None:
        """Seconds the current phase has left at its rate so far, None when unknown."""
        reading = self.look(job.id, job.phase, job.step or 0, job.total, now)
        return None if job.ended is not None else reading

    def look(
        self, key: int, phase: str | None, step: int, total: int | None, now: float | None = None
    ) -> float | None:
        """One look at a phase's progress (``key`` tells the jobs apart; ``now`` is any clock
        that runs in seconds, such as a demo's ``elapsed_s``): the seconds it has left, None
        when unknown."""
        now = time.time() if now is None else now
        seen = self._first.get(key)
        if seen is None or seen.phase != phase or step < seen.step:
            self._first[key] = _Seen(phase, step, now)
            return None
        if not total or phase in NO_ESTIMATE:
            return None
        if seen.step == 0 and step > 0:
            # A phase's first step carries its one-time costs (cuDNN's autotuning: 10 s of a 12 s
            # warm-up), so the rate is taken from past it; from step 0 a warm-up read "~6:30 left".
            self._first[key] = _Seen(phase, step, now)
            return None
        done, spent = step - seen.step, now - seen.at
        if done <= 0 or spent <= 0:
            return None
        return max(0.0, (total - step) * spent / done)
