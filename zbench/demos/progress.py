"""One phase's ``progress`` events for every demo: steps done of a total, at most twice a second.

A phase bounded by a time budget has no step count known in advance: its total is projected from
the rate so far (steps x budget / elapsed) and becomes the steps done when the phase ends, so a
finished phase always reads done of total. Viewers (the CLI's bar, the TUI's jobs table) take the
job's step and total from these events and estimate the time left from them. A phase that measures
a rate as it goes (tracking's frames/s) adds it through ``live``, read only when an event is sent.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

PERIOD_S = 0.5  # at most two events a second, and never fewer than one while steps advance


class PhaseProgress:
    """``progress(step)`` after each step; ``done()`` once the phase ends."""

    def __init__(
        self,
        emit: Callable[..., Any],
        phase: str,
        total: int | None = None,
        budget_s: float | None = None,
        live: Callable[[], Mapping[str, Any]] | None = None,
    ) -> None:
        self.emit, self.phase, self.total, self.budget_s = emit, phase, total, budget_s
        self.live = live  # fields measured so far, added to each event sent
        self.start = time.monotonic()
        self.last = 0.0
        self.step = 0

    def _total(self, elapsed: float) -> int | None:
        if self.total is not None:
            return self.total
        if self.budget_s and self.step and elapsed > 0:
            return max(self.step, round(self.step * self.budget_s / elapsed))
        return None

    def __call__(self, step: int, force: bool = False, **fields: Any) -> None:
        self.step = step
        now = time.monotonic()
        if not force and now - self.last < PERIOD_S and step != self.total:
            return
        self.last = now
        elapsed = now - self.start
        self.emit(
            "progress",
            phase=self.phase,
            step=step,
            total=self._total(elapsed),
            elapsed_s=round(elapsed, 2),
            **{**(self.live() if self.live is not None else {}), **fields},
        )

    def done(self, **fields: Any) -> None:
        """The phase's last event: the steps done are the total."""
        self.total = self.step
        self.__call__(self.step, force=True, **fields)
