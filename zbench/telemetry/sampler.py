"""The sampler: one thread that reads a backend at a fixed interval and publishes frozen snapshots.

Subscribers are delivered through a *latest-value slot* each, drained by the subscriber's own thread:
the sampler only drops the newest snapshot into each slot and never waits on a callback. A slow
subscriber therefore never delays sampling or other subscribers; it skips the snapshots it was too slow
for and is always handed the newest one. Callbacks run on their delivery thread (not the caller's), so
UI code must hand the snapshot over to its own thread (e.g. Textual's ``call_from_thread``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Protocol

from zbench.telemetry.snapshot import Snapshot

Callback = Callable[[Snapshot], None]


class Backend(Protocol):
    """What the sampler reads: one Snapshot per ``sample()``, a notice, and ``close()``."""

    notice: str | None

    def sample(self, trees: tuple[int, ...] = ()) -> Snapshot: ...

    def close(self) -> None: ...


class _Subscriber:
    """A latest-value slot and the thread that hands it to one callback."""

    def __init__(self, callback: Callback) -> None:
        self.callback = callback
        self._cond = threading.Condition()
        self._slot: Snapshot | None = None
        self._stopped = False
        self.errors = 0
        self._thread = threading.Thread(target=self._run, name="zbench-subscriber", daemon=True)
        self._thread.start()

    def offer(self, snapshot: Snapshot) -> None:
        with self._cond:
            self._slot = snapshot
            self._cond.notify()

    def _run(self) -> None:
        while True:
            with self._cond:
                while self._slot is None and not self._stopped:
                    self._cond.wait()
                if self._slot is None:  # stopped and drained
                    return
                snap, self._slot = self._slot, None
            try:
                self.callback(snap)
            except Exception:
                # A broken subscriber must not take the sampler down; it is counted, not hidden.
                self.errors += 1

    def stop(self, timeout: float | None = 2.0) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify()
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout)


class Sampler:
    """Reads ``backend`` every ``interval`` seconds on a daemon thread.

    ``latest()`` is the newest snapshot (``None`` before the first). ``subscribe(cb)`` registers a
    callback (see the module docstring for how it is called). ``watch_tree(pid)`` adds a process tree's
    CPU% and RSS to every snapshot. Errors from the backend are counted in ``errors`` and kept in
    ``last_error``; sampling continues.
    """

    def __init__(self, backend: Backend, interval: float = 0.5) -> None:
        if interval <= 0:
            raise ValueError("interval must be positive")
        self.backend = backend
        self.interval = interval
        self._lock = threading.Lock()
        self._latest: Snapshot | None = None
        self._subs: list[_Subscriber] = []
        self._trees: dict[int, None] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.errors = 0
        self.last_error: BaseException | None = None
        self.samples = 0

    # -- lifecycle ---------------------------------------------------------------------------------
    def start(self) -> Sampler:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="zbench-sampler", daemon=True)
            self._thread.start()
        return self

    def stop(self, timeout: float | None = 5.0) -> None:
        self._stop.set()
        if self._thread is not None and threading.current_thread() is not self._thread:
            self._thread.join(timeout)
        with self._lock:
            subs, self._subs = self._subs, []
        for sub in subs:
            sub.stop()

    def __enter__(self) -> Sampler:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- API ---------------------------------------------------------------------------------------
    def latest(self) -> Snapshot | None:
        return self._latest

    def subscribe(self, callback: Callback) -> Callable[[], None]:
        """Register ``callback``; returns a function that unsubscribes it."""
        sub = _Subscriber(callback)
        with self._lock:
            self._subs.append(sub)
        if self._latest is not None:
            sub.offer(self._latest)

        def unsubscribe() -> None:
            with self._lock:
                if sub in self._subs:
                    self._subs.remove(sub)
            sub.stop()

        return unsubscribe

    def watch_tree(self, pid: int) -> None:
        with self._lock:
            self._trees[pid] = None

    def unwatch_tree(self, pid: int) -> None:
        with self._lock:
            self._trees.pop(pid, None)

    def sample_once(self) -> Snapshot:
        """Take one sample now on the calling thread (used when no thread is running)."""
        with self._lock:
            trees = tuple(self._trees)
        snap = self.backend.sample(trees=trees)
        self._publish(snap)
        return snap

    # -- thread ------------------------------------------------------------------------------------
    def _publish(self, snap: Snapshot) -> None:
        self._latest = snap
        self.samples += 1
        with self._lock:
            subs = list(self._subs)
        for sub in subs:
            sub.offer(snap)

    def _run(self) -> None:
        next_t = time.monotonic()
        while not self._stop.is_set():
            try:
                self.sample_once()
            except Exception as exc:  # a sampling error is recorded; the loop goes on
                self.errors += 1
                self.last_error = exc
            # Fixed-rate schedule; if a sample overran, skip the missed ticks instead of bursting.
            next_t += self.interval
            now = time.monotonic()
            if next_t < now:
                next_t = now + self.interval - ((now - next_t) % self.interval)
            self._stop.wait(next_t - now)
