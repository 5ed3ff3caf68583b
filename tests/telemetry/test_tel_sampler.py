from __future__ import annotations

import threading
import time

import pytest

from zbench.telemetry.sampler import Sampler
from zbench.telemetry.snapshot import Snapshot


class CountingBackend:
    notice = None

    def __init__(self, fail_on: set[int] | None = None) -> None:
        self.n = 0
        self.fail_on = fail_on or set()
        self.trees: list[tuple[int, ...]] = []

    def sample(self, trees: tuple[int, ...] = ()) -> Snapshot:
        self.n += 1
        self.trees.append(tuple(trees))
        if self.n in self.fail_on:
            raise RuntimeError("boom")
        return Snapshot(t=time.time(), seq=self.n)

    def close(self) -> None:
        pass


def test_slow_subscriber_never_stalls_sampling() -> None:
    backend = CountingBackend()
    slow_calls: list[int] = []
    fast_calls: list[int] = []
    release = threading.Event()

    def slow(s: Snapshot) -> None:
        slow_calls.append(s.seq)
        release.wait(2.0)  # blocks far longer than the interval

    with Sampler(backend, interval=0.02) as sampler:
        sampler.subscribe(slow)
        sampler.subscribe(lambda s: fast_calls.append(s.seq))
        time.sleep(0.4)
        n_during = backend.n
        slow_during = len(slow_calls)
        release.set()
        time.sleep(0.1)
        latest = sampler.latest()
    # ~20 samples were taken while the slow subscriber sat in its first call.
    assert n_during >= 10
    assert slow_during == 1
    # The fast subscriber kept up and the slow one was handed the newest snapshot when free.
    assert len(fast_calls) >= n_during - 2
    assert latest is not None and slow_calls[1] >= n_during


def test_backend_errors_are_counted_and_sampling_goes_on() -> None:
    backend = CountingBackend(fail_on={2, 3})
    sampler = Sampler(backend, interval=0.01).start()
    time.sleep(0.15)
    sampler.stop()
    assert sampler.errors == 2
    assert isinstance(sampler.last_error, RuntimeError)
    assert sampler.samples == backend.n - 2


def test_watch_tree_reaches_backend_and_unsubscribe() -> None:
    backend = CountingBackend()
    sampler = Sampler(backend, interval=1.0)
    sampler.watch_tree(123)
    sampler.sample_once()
    sampler.unwatch_tree(123)
    sampler.sample_once()
    assert backend.trees == [(123,), ()]
    got: list[int] = []
    unsubscribe = sampler.subscribe(got.append)  # type: ignore[arg-type]
    unsubscribe()
    sampler.sample_once()
    time.sleep(0.05)
    assert len(got) <= 1  # only the snapshot offered at subscription time


def test_bad_interval() -> None:
    with pytest.raises(ValueError):
        Sampler(CountingBackend(), interval=0)
