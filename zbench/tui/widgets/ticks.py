"""Round axis ticks for the terminal charts: 0, 2, 4 ... or 5,800, 6,000 ... instead of plotext's
own, which split the data's range evenly (1.8, 3.7, 5.5 ...; 5,713.3, 5,806.7 ...).

Written here rather than taken from matplotlib's ``MaxNLocator``: that would import matplotlib
into the TUI for a dozen lines of arithmetic.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from textual.app import RenderResult
from textual_plotext import PlotextPlot

STEPS = (1.0, 2.0, 5.0, 10.0)  # the round steps, times a power of ten (2.5 reads badly for scores)
# A label every third row at the most: plotext puts each tick on the row nearest its value, so at
# two rows apart the labels' spacing visibly alternates between one and three rows.
ROWS_PER_TICK = 3
COLUMNS_PER_TICK = 12


def nice_ticks(lo: float, hi: float, most: int) -> list[float]:
    """At most ``most`` (at least 1) round values from ``lo`` to ``hi``, evenly spaced by a round
    step (1, 2 or 5 times a power of ten), the smallest step that keeps to ``most``."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return []
    lo, hi = min(lo, hi), max(lo, hi)
    if hi == lo:
        return [lo]
    most = max(1, most)
    magnitude = 10.0 ** math.floor(math.log10((hi - lo) / most))
    spans = [(m * magnitude, *_multiples(lo, hi, m * magnitude)) for m in STEPS]
    for step, first, last in spans:
        if 1 <= last - first + 1 <= most:
            return [round(k * step, 12) for k in range(first, last + 1)]
    # One tick asked of a short range whose steps give two values or none (40 around 344,620:
    # 344,620 and 344,640, or no multiple of 50): the roundest value in it. A step of the
    # magnitude, at most the range, always has one.
    for step, first, last in reversed(spans):
        if first <= last:
            return [round(first * step, 12)]
    return [lo]


def _multiples(lo: float, hi: float, step: float) -> tuple[int, int]:
    """The first and last k with k * step from ``lo`` to ``hi`` (first > last: none)."""
    return math.ceil(lo / step - 1e-9), math.floor(hi / step + 1e-9)


def tick_labels(ticks: list[float]) -> list[str]:
    """Each tick as text, with thousands separators and the decimals its step needs (2.5: one)."""
    decimals = 0
    for t in ticks:
        while decimals < 6 and abs(t - round(t, decimals)) > 1e-9 * max(1.0, abs(t)):
            decimals += 1
    return [f"{t:,.{decimals}f}" for t in ticks]


def rows_for_ticks(plot_height: int, chrome_rows: int = 4) -> int:
    """How many y ticks a chart ``plot_height`` rows tall holds, ``ROWS_PER_TICK`` apart: its title,
    its frame and the x axis's labels take four rows (``chrome_rows``), an x axis's name one more."""
    rows = plot_height - chrome_rows
    # One in a chart too short for two: plotext shows one of two labels that fall on one row, and
    # which one changes from process to process.
    return max(1, (rows - 1) // ROWS_PER_TICK + 1)


def columns_for_ticks(plot_width: int) -> int:
    """How many x ticks a chart ``plot_width`` columns wide holds, with room for ``12,345.5``."""
    return max(2, plot_width // COLUMNS_PER_TICK)


class RoundTicksPlot(PlotextPlot):
    """A chart whose ticks are round values, as many as its size holds when it is drawn (so a
    resize refits them). A chart's ``show`` hands over the values it plots with :meth:`round_y` and
    :meth:`round_x`; an axis with no values handed over keeps plotext's ticks or the chart's own."""

    CHROME_ROWS = 4  # the rows that are not plot: 5 in a chart that names its x axis
    _y_values: tuple[float, ...] = ()
    _x_values: tuple[float, ...] = ()

    def round_y(self, values: Iterable[float]) -> None:
        self._y_values = tuple(v for v in values if math.isfinite(v))

    def round_x(self, values: Iterable[float]) -> None:
        self._x_values = tuple(v for v in values if math.isfinite(v))

    def render(self) -> RenderResult:
        if self._y_values:
            ticks = nice_ticks(
                *_span(self._y_values), rows_for_ticks(self.size.height, self.CHROME_ROWS)
            )
            self.plt.yticks(ticks, tick_labels(ticks))
        if self._x_values:
            ticks = nice_ticks(*_span(self._x_values), columns_for_ticks(self.size.width))
            self.plt.xticks(ticks, tick_labels(ticks))
        return super().render()


def _span(values: tuple[float, ...]) -> tuple[float, float]:
    return min(values), max(values)
