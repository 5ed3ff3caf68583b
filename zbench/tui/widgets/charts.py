"""Terminal charts (textual-plotext): a job's live throughput, results' throughput and GPU scaling.

Each chart owns its own ``self.plt`` (no module-global plotting state) and the plot colours follow the
app's theme through PlotextPlot's "auto" theme.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from textual_plotext import PlotextPlot


class ThroughputHistory(PlotextPlot):
    """samples/s over the job's time, from its runner's progress events."""

    def show(self, points: Sequence[tuple[float, float]]) -> None:
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        plt.title("throughput (samples/s)")
        plt.xlabel("s since start")
        if points:
            t0 = points[0][0]
            plt.plot([t - t0 for t, _ in points], [v for _, v in points], marker="braille")
        self.refresh()


def label(row: Any) -> str:
    return f"{row.workload}/{row.framework}/{row.mode}"


class ThroughputBars(PlotextPlot):
    """Best samples/s per workload, framework and mode (one GPU)."""

    def show(self, rows: Sequence[Any]) -> None:
        best: dict[str, float] = {}
        for r in rows:
            if r.gpus == 1 and r.samples_per_s:
                best[label(r)] = max(best.get(label(r), 0.0), float(r.samples_per_s))
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        plt.title("throughput, 1 GPU (samples/s)")
        if best:
            names = sorted(best)
            plt.bar(names, [best[n] for n in names], orientation="horizontal", width=0.3)
        self.refresh()


class ScalingChart(PlotextPlot):
    """samples/s against the number of GPUs, one line per workload, framework and mode."""

    def show(self, rows: Sequence[Any]) -> None:
        series: dict[str, dict[int, float]] = defaultdict(dict)
        for r in rows:
            if r.samples_per_s:
                s = series[label(r)]
                s[int(r.gpus)] = max(s.get(int(r.gpus), 0.0), float(r.samples_per_s))
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        plt.title("GPU scaling (samples/s)")
        plt.xlabel("GPUs")
        for name, points in sorted(series.items()):
            if len(points) > 1:
                xs = sorted(points)
                plt.plot(xs, [points[x] for x in xs], label=name, marker="braille")
        self.refresh()
