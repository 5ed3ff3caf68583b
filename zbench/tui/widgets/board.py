"""The live Snake board, its learning curve and a demo's loss curve, drawn from a demo job's
``frame`` and ``progress`` events."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.text import Text
from textual.widgets import Static

from zbench.contract.demo_views import snake_segments
from zbench.glyphs import encoding_is_utf8

from .ticks import RoundTicksPlot


class SnakeBoard(Static):
    """One board (a frame event's ``board``); ASCII cells when the terminal is not UTF-8."""

    DEFAULT_CSS = """
    SnakeBoard { width: auto; height: auto; padding: 0 1; }
    """

    def __init__(self, *, ascii: bool | None = None, id: str | None = None) -> None:
        super().__init__("waiting for the first frame...", id=id)
        self.ascii = (not encoding_is_utf8()) if ascii is None else ascii

    def show(self, board: dict[str, Any]) -> None:
        self.update(
            Text.assemble(*snake_segments(board, ascii=self.ascii), no_wrap=True, overflow="crop")
        )


class LearningCurve(RoundTicksPlot):
    """Mean and best score over wall time since launch (seconds)."""

    def show(self, points: Sequence[dict[str, Any]]) -> None:
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        plt.title("mean and best score, by seconds since launch")
        xs = [float(p.get("t_s") or 0.0) for p in points]
        means = [float(p.get("mean_score") or 0) for p in points]
        bests = [float(p.get("best_score") or 0) for p in points]
        if points:
            plt.plot(xs, means, label="mean", marker="braille")
            plt.plot(xs, bests, label="best", marker="braille")
        self.round_y(means + bests)
        self.round_x(xs)
        self.refresh()


class LossCurve(RoundTicksPlot):
    """A demo's training loss over its steps (motion, tracking): a line per training phase,
    named by it. The tracker trains its detector, then its embedder, each from step 1: drawn as
    one line, the embedder's first loss was joined back to the detector's step 1."""

    def show(self, points: Sequence[dict[str, Any]]) -> None:
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        plt.title("training loss over steps")
        lines = loss_lines(points)
        for label, (xs, ys) in lines.items():
            plt.plot(xs, ys, label=label, marker="braille")
        self.round_y(y for _, ys in lines.values() for y in ys)
        self.round_x(x for xs, _ in lines.values() for x in xs)
        self.refresh()


def loss_lines(points: Sequence[dict[str, Any]]) -> dict[str, tuple[list[float], list[float]]]:
    """The loss curve's lines: per training phase (``loss_label``), its steps and losses."""
    lines: dict[str, tuple[list[float], list[float]]] = {}
    for p in points:
        step, loss = p.get("step"), p.get("loss")
        if isinstance(step, int | float) and isinstance(loss, int | float):
            xs, ys = lines.setdefault(loss_label(p.get("phase")), ([], []))
            xs.append(float(step))
            ys.append(float(loss))
    return lines


def loss_label(phase: object) -> str:
    """A loss line's name: ``detector`` for the phase ``train_detector``; ``loss`` for the one
    training phase of a demo that has one (motion's ``train``) or none named."""
    name = phase.removeprefix("train").strip("_ ") if isinstance(phase, str) else ""
    return name or "loss"
