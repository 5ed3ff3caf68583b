"""A one-line history of a percentage, on an absolute 0-100 scale.

Textual's Sparkline scales each draw to the data's own min and max, which turns a steady 99-100%
utilization into a jagged line; a load history must keep 0 and 100 fixed, so this one is drawn here.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.content import Content
from textual.widget import Widget

from ..format import blocks, level


def spark(values: Sequence[float], width: int) -> str:
    """The last ``width`` values as block characters in content markup (coloured by level)."""
    tail = list(values)[-width:] if width > 0 else []
    cells = []
    levels = blocks()
    for v in tail:
        p = max(0.0, min(100.0, v))
        cells.append(f"[{level(p)}]{levels[max(1, round(p / 100 * 8))]}[/]")
    return " " * (width - len(tail)) + "".join(cells)


def spark_content(values: Sequence[float], width: int) -> Content:
    """:func:`spark` as Content built directly, one span per run of one level: parsing the markup
    took ~9 ms a line on a busy 2-core host, most of an idle dashboard's CPU at 8 GPUs."""
    tail = list(values)[-width:] if width > 0 else []
    levels = blocks()
    parts: list[tuple[str, str] | str] = [" " * (width - len(tail))] if width > len(tail) else []
    run, run_style = "", ""
    for v in tail:
        p = max(0.0, min(100.0, v))
        style = level(p)
        if style != run_style and run:
            parts.append((run, run_style))
            run = ""
        run_style = style
        run += levels[max(1, round(p / 100 * 8))]
    if run:
        parts.append((run, run_style))
    return Content.assemble(*parts)


class History(Widget):
    """A one-line sparkline of a percentage's recent values, on a 0-100 scale."""

    DEFAULT_CSS = "History { height: 1; width: 1fr; }"

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._values: Sequence[float] = ()

    @property
    def values(self) -> Sequence[float]:
        return self._values

    @values.setter
    def values(self, values: Sequence[float]) -> None:
        self._values = tuple(values)
        self.refresh()

    def render(self) -> Content:
        return spark_content(self._values, self.size.width)
