"""The harness's demo entry: a demo is an adapter whose run writes ``frame`` events; the harness
owns check, start, setup, the rate-limited frame channel, the result record and the error mapping.

``run_demo`` shares :func:`zbench.runners.harness.guard` with the benchmarks, so a demo's failures
end exactly as a benchmark's do (config: exit 2; oom, crash, interrupted, unavailable: exit 1).
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from zbench.contract.demos import figure
from zbench.contract.measure import build_demo_result
from zbench.contract.protocol import EventWriter
from zbench.runners.harness import BadInput, guard

PROGRESS_KEEP = 2000  # progress points kept for the result's series (halved when full)


class FrameChannel:
    """``frame`` events at most ``rate_hz`` a second. A frame that comes too soon is held, not
    written; a newer one replaces it, and :meth:`flush` writes the held one at the end, so a live
    view always ends on the demo's last frame."""

    def __init__(
        self, out: Any, rate_hz: float = 4.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.out, self.period, self.clock = out, 1.0 / rate_hz, clock
        self.last: float | None = None
        self.held: dict[str, Any] | None = None
        self.sent = self.dropped = 0

    def due(self) -> bool:
        """Whether a frame sent now would be written (a demo may skip building one otherwise)."""
        return self.last is None or self.clock() - self.last >= self.period

    def send(self, **fields: Any) -> bool:
        if not self.due():
            if self.held is not None:
                self.dropped += 1
            self.held = fields
            return False
        self.last = self.clock()
        self.held = None
        self.sent += 1
        self.out.emit("frame", **fields)
        return True

    def flush(self) -> None:
        if self.held is not None:
            fields, self.held = self.held, None
            self.sent += 1
            self.out.emit("frame", **fields)


def with_rate(fields: dict[str, Any], rate: str) -> dict[str, Any]:
    """``fields`` with ``samples_per_s`` set to the figure at ``rate`` (a dotted path), where
    that is a number and ``samples_per_s`` is not set already."""
    value = figure(fields, rate)
    if fields.get("samples_per_s") is None and isinstance(value, int | float):
        fields["samples_per_s"] = value
    return fields


class DemoEvents:
    """What a demo writes to: ``frame`` goes through the channel; ``result`` is kept for the
    harness (which writes the one result record); ``progress`` points are kept for the series,
    and carry ``samples_per_s`` (what a job's speed is read from) as the demo's ``rate`` figure
    where they have it."""

    def __init__(self, out: Any, frames: FrameChannel, rate: str = "samples_per_s") -> None:
        self.out, self.frames, self.rate = out, frames, rate
        self.progress_points: list[dict[str, float]] = []
        self.reported: dict[str, Any] | None = None

    def emit(self, type: Any, **fields: Any) -> None:
        if type == "frame":
            self.frames.send(**fields)
            return
        if type == "result":
            self.reported = fields
            return
        if type == "progress":
            with_rate(fields, self.rate)
            point = {k: float(v) for k, v in fields.items() if isinstance(v, int | float)}
            self.progress_points.append(point)
            if len(self.progress_points) > PROGRESS_KEEP:
                self.progress_points = self.progress_points[::2]
        self.out.emit(type, **fields)

    def phase(self, name: str, **fields: Any) -> None:
        self.emit("phase", phase=name, **fields)

    def progress(self, step: int, total: int, samples_per_s: float | None = None, **f: Any) -> None:
        self.emit("progress", step=step, total=total, samples_per_s=samples_per_s, **f)

    def error(self, kind: str, message: str, **fields: Any) -> None:
        self.out.emit("error", kind=kind, message=message, **fields)


Series = tuple[str, str, str, Sequence[Sequence[float]]]  # name, x label, unit, points


class DemoAdapter(ABC):
    """One demo under the harness. ``events`` (a :class:`DemoEvents`) is set before :meth:`check`."""

    framework: ClassVar[str] = "demo"
    name: str
    title: str
    frame_hz: float = 4.0
    rate: str = "samples_per_s"  # the figure a run's speed is (zbench.contract.demos.Demo.rate)
    events: Any = None

    def check(self) -> str | None:
        """A one-line reason when the options cannot run here (before ``start``), else None."""
        return None

    @abstractmethod
    def config(self) -> dict[str, Any]:
        """Every option, resolved, for the ``start`` event."""

    def environment(self) -> dict[str, Any]:
        return {}

    @abstractmethod
    def run(self) -> dict[str, Any]:
        """The demo itself; returns its figures."""

    def summary(self, figures: dict[str, Any]) -> list[tuple[str, Any]]:
        return []

    def series(self, figures: dict[str, Any], progress: list[dict[str, float]]) -> list[Series]:
        return []

    def is_oom(self, exc: BaseException) -> bool:
        return type(exc).__name__ in ("OutOfMemoryError", "OutOfMemory")

    def bad_input(self, exc: BaseException) -> str | None:
        return None

    def close(self) -> None:
        return None


def run_demo(adapter: DemoAdapter, writer: EventWriter) -> int:
    """check -> start -> setup -> the demo (its phases, progress, frames) -> result -> done; every
    failure one ``error`` event. The exit status: 0 done, 1 the work failed, 2 bad input."""
    events = DemoEvents(writer, FrameChannel(writer, adapter.frame_hz), adapter.rate)
    adapter.events = events

    def body() -> int:
        reason = adapter.check()
        if reason:
            raise BadInput(reason)
        writer.emit(
            "start",
            demo=adapter.name,
            workload=adapter.name,
            framework="demo",
            title=adapter.title,
            config=adapter.config(),
            environment=adapter.environment(),
        )
        writer.phase("setup")
        t0 = time.monotonic()
        figures = adapter.run()
        # The run's wall time, for every demo (the demo table's "Min" reads it; a demo's own
        # figure, Snake's measured from launch, wins).
        figures.setdefault("wall_s", round(time.monotonic() - t0, 2))
        with_rate(figures, adapter.rate)  # the job's speed, as its progress events had it
        events.frames.flush()
        result = build_demo_result(
            adapter.name,
            adapter.title,
            figures,
            summary=adapter.summary(figures),
            series=adapter.series(figures, events.progress_points),
        )
        writer.emit("result", **result)
        writer.phase("done")
        return 0

    return guard(adapter, writer, body, oom=("out of device memory; try a smaller size", {}))
