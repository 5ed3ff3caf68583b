"""Terminal charts (textual-plotext): a job's live throughput, results' throughput and GPU scaling.

Each chart owns its own ``self.plt`` (no module-global plotting state) and the plot colours follow the
app's theme through PlotextPlot's "auto" theme.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .ticks import RoundTicksPlot


class ThroughputHistory(RoundTicksPlot):
    """samples/s over the job's time, from its runner's progress events."""

    CHROME_ROWS = 5  # with the x axis's name

    def show(self, points: Sequence[tuple[float, float]]) -> None:
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        plt.title("throughput (samples/s)")
        plt.xlabel("s since start")
        xs = [t - points[0][0] for t, _ in points]
        ys = [v for _, v in points]
        if points:
            plt.plot(xs, ys, marker="braille")
        self.round_y(ys)
        self.round_x(xs)
        self.refresh()


def label(row: Any) -> str:
    """A result row's chart label: workload/framework/mode."""
    return f"{row.workload}/{row.framework}/{row.mode}"


def bar_values(rows: Sequence[Any]) -> dict[str, float]:
    """samples/s per bar: one bar per setup on one GPU, its newest run (repeats of a setup are one
    bar; unlike setups never merge, and none is left out: the table beside the chart shows every
    row, and a bar for only the newest setup of a workload hid the others). Each bar is named by
    workload, framework, mode and precision, by the GPU model when the runs span several, and by
    its setup id when another bar of that name differs in another setting (batch, compile ...)."""
    from zbench.results.identity import gpu_model, latest_per_identity, telling_apart

    drawn = latest_per_identity([r for r in rows if r.gpus == 1 and r.samples_per_s])
    several = len({gpu_model(r) for r in drawn}) > 1
    names = [f"{label(r)} {r.precision}" + (f" {gpu_model(r)}" if several else "") for r in drawn]
    return {
        name: float(r.samples_per_s)
        for name, r in zip(telling_apart(names, drawn), drawn, strict=True)
    }


class ThroughputBars(RoundTicksPlot):
    """samples/s of each setup run on one GPU, its newest run (unlike setups are never merged into
    one bar, nor left out; see :func:`bar_values`)."""

    def show(self, rows: Sequence[Any]) -> None:
        best = bar_values(rows)
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        plt.title("throughput, 1 GPU (samples/s)")
        if best:
            names = sorted(best)
            plt.bar(names, [best[n] for n in names], orientation="horizontal", width=0.1)
        self.round_x([0.0, *best.values()])  # the bars' axis, from 0
        self.refresh()


def scaling_series(rows: Sequence[Any]) -> dict[str, dict[int, float]]:
    """samples/s by GPU count, one line per scaling group (``results.identity.scaling_groups``),
    named by workload, framework, mode, precision and batch; groups that still share a name (they
    differ in another setting: compile, channels-last...) add their setup id, so no line is
    drawn over another under one name."""
    from zbench.results.identity import scaling_groups, telling_apart

    groups = scaling_groups(rows)
    names = [f"{label(g.base)} {g.base.precision} b{g.base.batch_size}" for g in groups]
    series: dict[str, dict[int, float]] = {}
    for name, g in zip(telling_apart(names, [g.base for g in groups]), groups, strict=True):
        series[name] = {1: float(g.base.samples_per_s)}
        series[name].update({n: float(r.samples_per_s) for n, r in g.runs.items()})
    return series


class ScalingChart(RoundTicksPlot):
    """samples/s against the number of GPUs, one line per set of runs identical but for the GPU
    count (a 2-GPU run at another batch size never joins a 1-GPU line; see
    :func:`scaling_series`)."""

    CHROME_ROWS = 5  # with the x axis's name

    def show(self, rows: Sequence[Any]) -> None:
        series = scaling_series(rows)
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        plt.title("GPU scaling (samples/s)")
        plt.xlabel("GPUs")
        for name, points in sorted(series.items()):
            xs = sorted(points)
            plt.plot(xs, [points[x] for x in xs], label=name, marker="braille")
        gpus = sorted({n for points in series.values() for n in points})
        if gpus:
            plt.xticks(gpus, [str(n) for n in gpus])  # GPU counts, never 1.5 GPUs
        self.round_y(v for points in series.values() for v in points.values())
        self.refresh()
