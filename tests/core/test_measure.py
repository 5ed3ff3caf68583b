from __future__ import annotations

import math

import pytest

from zbench.contract.measure import combine_repeats, percentile, window_stats


def test_throughput_is_samples_over_window_wall_time() -> None:
    # Step times sum to less than the window (host gaps): the window, not the sum, divides.
    stats = window_stats([0.1, 0.1, 0.2, 0.1], samples_per_step=32, window_s=0.64)
    assert stats["samples"] == 128
    assert stats["samples_per_s"] == pytest.approx(200.0)
    assert stats["step_time_median_ms"] == pytest.approx(100.0)
    assert stats["step_time_p90_ms"] == pytest.approx(170.0)


def test_percentile_matches_numpy_linear() -> None:
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile([5], 90) == 5
    assert math.isnan(percentile([], 50))


def test_repeats_report_median_and_spread() -> None:
    windows = [window_stats([0.1] * 4, 10, w) for w in (1.0, 0.8, 0.5)]
    out = combine_repeats(windows)
    assert out["samples_per_s"] == pytest.approx(50.0)
    assert out["repeats"] == 3
    assert out["samples_per_s_min"] == pytest.approx(40.0)
    assert out["samples_per_s_spread_pct"] == pytest.approx(100 * 40 / 50)
    with pytest.raises(ValueError):
        combine_repeats([])
