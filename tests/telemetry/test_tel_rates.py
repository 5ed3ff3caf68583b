from __future__ import annotations

import pytest

from zbench.telemetry.rates import CounterRates
from zbench.telemetry.snapshot import NA


def test_first_reading_has_no_rate() -> None:
    assert CounterRates().update("tx", 100, 1_000_000) is NA


def test_rate_uses_the_values_own_timestamps_and_scale() -> None:
    r = CounterRates(scale=1024)
    r.update("tx", 1000, 1_000_000)
    # 1,000,000 KiB more over 0.25 s of counter time (not the sampler's nominal interval).
    assert r.update("tx", 1_001_000, 1_250_000) == pytest.approx(1_000_000 * 1024 / 0.25)


def test_counter_going_backwards_gives_na_then_recovers() -> None:
    r = CounterRates()
    r.update("tx", 5000, 0)
    assert r.update("tx", 10, 1_000_000) is NA  # reset or wrap: no negative rate
    assert r.update("tx", 110, 2_000_000) == pytest.approx(100.0)


def test_timestamp_not_advancing_gives_na() -> None:
    r = CounterRates()
    r.update("k", 1, 5)
    assert r.update("k", 2, 5) is NA


def test_keys_are_independent_and_forget_restarts() -> None:
    r = CounterRates()
    r.update("a", 0, 0)
    r.update("b", 0, 0)
    assert r.update("a", 10, 1_000_000) == 10
    r.forget("b")
    assert r.update("b", 50, 1_000_000) is NA
