"""Where the TUI gets snapshots from.

The NVML sampling runs in the telemetry Sampler's own thread; its subscriber only appends to a deque
(thread-safe, never blocks the sampler) and the UI drains that deque on its refresh timer. Tests and
snapshot renders use :class:`ListFeed`, a fixed sequence of snapshots, so every frame is deterministic.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # annotations only: the snapshot classes are built when the feed opens
    from zbench.telemetry.snapshot import Snapshot


class Feed(Protocol):
    """A source of snapshots for the TUI (live sampler or recorded trace), drained each tick."""

    notice: str | None

    def drain(self) -> list[Snapshot]:
        """The snapshots that arrived since the last call, oldest first."""
        ...

    def close(self) -> None: ...


def _drain(queue: deque[Snapshot]) -> list[Snapshot]:
    out: list[Snapshot] = []
    while True:
        try:
            out.append(queue.popleft())
        except IndexError:
            return out


class SamplerFeed:
    """The live feed: a telemetry backend (NVML, host-only or a replayed trace) and its Sampler."""

    def __init__(self, replay: Path | None, interval: float, gpus: list[int] | None = None) -> None:
        from zbench.telemetry.backends import open_backend
        from zbench.telemetry.sampler import Sampler

        if replay is not None:
            # The dashboard keeps playing: a replayed trace loops instead of freezing on its end.
            from zbench.telemetry.trace import ReplayBackend

            self._backend = ReplayBackend(replay, loop=True, gpus=gpus)
        else:
            self._backend = open_backend(gpus=gpus)
        self.notice: str | None = self._backend.notice
        self.replay = replay is not None  # its processes are not this machine's: never signal them
        self._queue: deque[Snapshot] = deque(maxlen=512)
        self._sampler = Sampler(self._backend, interval=interval)
        self._sampler.subscribe(self._queue.append)
        self._sampler.start()

    def drain(self) -> list[Snapshot]:
        return _drain(self._queue)

    def close(self) -> None:
        self._sampler.stop()
        self._backend.close()


class ListFeed:
    """A fixed list of snapshots. ``step=False``: the first drain returns them all (a settled
    dashboard with full history); ``step=True``: each :meth:`advance` releases the next one."""

    def __init__(
        self,
        snapshots: Iterable[Snapshot],
        notice: str | None = None,
        *,
        step: bool = False,
        replay: bool = False,
    ) -> None:
        self.notice = notice
        self.replay = replay
        self._pending: deque[Snapshot] = deque(snapshots)
        self._ready: deque[Snapshot] = deque()
        if not step:
            self._ready.extend(self._pending)
            self._pending.clear()

    def advance(self, n: int = 1) -> int:
        moved = 0
        while moved < n and self._pending:
            self._ready.append(self._pending.popleft())
            moved += 1
        return moved

    def drain(self) -> list[Snapshot]:
        return _drain(self._ready)

    def close(self) -> None:
        self._pending.clear()
        self._ready.clear()
