"""The charts' y ticks are round values (0, 2, 4 ...; 5,800, 6,000 ...), as many as the chart's
height holds, and refit when it is resized."""

from __future__ import annotations

import itertools
import math

import pytest
from rich.console import Console
from textual.app import App, ComposeResult

from zbench.tui.widgets.board import LearningCurve
from zbench.tui.widgets.charts import ScalingChart, ThroughputHistory
from zbench.tui.widgets.ticks import columns_for_ticks, nice_ticks, rows_for_ticks, tick_labels


@pytest.mark.parametrize(
    ("lo", "hi", "most", "ticks"),
    [
        (0, 11, 6, [0, 2, 4, 6, 8, 10]),  # a Snake score: plotext drew 0.0, 1.8, 3.7 ... 11.0
        (5690, 6170, 6, [5700, 5800, 5900, 6000, 6100]),  # samples/s
        (0, 0.37, 5, [0, 0.1, 0.2, 0.3]),
        (-3, 7, 4, [0, 5]),
        (0.868, 11, 3, [5, 10]),
        (7, 7, 5, [7]),  # a flat line: its one value
        (344601.4, 344641.8, 1, [344620]),  # steps of 20 give two, of 50 none: it gave none
        (11, 0, 6, [0, 2, 4, 6, 8, 10]),  # the bounds in either order
    ],
)
def test_ticks_are_round_values_inside_the_range(
    lo: float, hi: float, most: int, ticks: list[float]
) -> None:
    assert nice_ticks(lo, hi, most) == pytest.approx(ticks)


@pytest.mark.parametrize("most", range(1, 12))
@pytest.mark.parametrize(
    ("lo", "hi"),
    [(0, 1), (0.868, 11), (5690.4, 6170.9), (1e-4, 3e-3), (-50, 9e5), (344601.4, 344641.8)],
)
def test_ticks_keep_to_the_most_with_one_round_step(lo: float, hi: float, most: int) -> None:
    ticks = nice_ticks(lo, hi, most)
    assert 1 <= len(ticks) <= most
    assert all(lo <= t <= hi for t in ticks)
    if len(ticks) > 1:
        steps = {round(b - a, 12) for a, b in itertools.pairwise(ticks)}
        assert len(steps) == 1
        mantissa = steps.pop() / 10 ** math.floor(math.log10(ticks[1] - ticks[0]))
        assert round(mantissa, 9) in (1, 2, 5)


def test_no_ticks_for_values_that_are_not_numbers() -> None:
    assert nice_ticks(math.nan, 3, 4) == [] and nice_ticks(0, math.inf, 4) == []


def test_labels_carry_thousands_separators_and_the_decimals_the_step_needs() -> None:
    assert tick_labels([5800.0, 6000.0]) == ["5,800", "6,000"]
    assert tick_labels([0.0, 2.5, 5.0]) == ["0.0", "2.5", "5.0"]
    assert tick_labels([0.0, 0.25, 0.5]) == ["0.00", "0.25", "0.50"]
    assert tick_labels([200000.0]) == ["200,000"]


def test_a_larger_chart_holds_more_ticks_a_row_apart() -> None:
    assert rows_for_ticks(0) == rows_for_ticks(7) == 1  # two would share a row
    assert rows_for_ticks(16) == 4  # 12 rows of plot: a label on every third one
    assert rows_for_ticks(16, chrome_rows=5) == 4 and rows_for_ticks(14, chrome_rows=5) == 3
    assert rows_for_ticks(30) > rows_for_ticks(16)
    assert columns_for_ticks(80) == 6 and columns_for_ticks(10) == 2


class _Charts(App[None]):
    def compose(self) -> ComposeResult:
        yield LearningCurve(id="curve")
        yield ThroughputHistory(id="rate")
        yield ScalingChart(id="scaling")


def _text(widget: object) -> str:
    console = Console(width=200, record=True, color_system=None)
    console.print(widget.render())  # type: ignore[attr-defined]
    return console.export_text()


def _y_labels(text: str) -> list[str]:
    """The labels left of the y axis (plotext draws them then a box character)."""
    labels = []
    for line in text.splitlines():
        head = line.split("┤")[0] if "┤" in line else ""
        if head.strip() and head.strip().replace(",", "").replace(".", "").lstrip("-").isdigit():
            labels.append(head.strip())
    return labels


async def test_the_snake_curve_and_the_throughput_read_round_ticks() -> None:
    app = _Charts()
    async with app.run_test(size=(80, 48)) as pilot:
        curve = app.query_one(LearningCurve)
        points = [
            {"t_s": t, "mean_score": t / 20, "best_score": min(11, t // 2)} for t in range(5, 24)
        ]
        curve.show(points)
        rate = app.query_one(ThroughputHistory)
        rate.show([(t, 5690.0 + 25 * t) for t in range(0, 20)])
        await pilot.pause()
        text = _text(curve)
        labels = _y_labels(text)
        assert len(labels) >= 2 and set(labels) <= {"0", "2", "4", "5", "6", "8", "10"}, labels
        x_axis = [line for line in text.splitlines() if line.strip()][-1]
        assert x_axis.split() == ["5", "10", "15", "20"]  # plotext's own: 5.0 9.5 14.0 18.5 23.0
        labels = _y_labels(_text(rate))
        assert labels and all(label.endswith("00") and "," in label for label in labels), labels


async def test_the_scaling_chart_names_whole_gpu_counts() -> None:
    from tests.tui.test_chart_bars import _row

    app = _Charts()
    async with app.run_test(size=(80, 48)) as pilot:
        chart = app.query_one(ScalingChart)
        chart.show([_row(1, 3080.0), _row(2, 6020.0, gpus=2)])
        await pilot.pause()
        text = _text(chart)
        assert "1.5" not in text and "6,000" in text
