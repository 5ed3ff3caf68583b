"""Fit any column table to a terminal width: choose columns by priority and headers by width.

Stdlib only, so every view (jobs, results, monitor, doctor) can use it with its own column list. Rich
tables squeeze every column to "Re…" when a table is wider than the terminal; here a table that does
not fit first takes its short headers, then cuts its one free-text column, then drops the least
important columns whole, so every cell left on screen reads in full. Without a width (a pipe,
``--wide``) nothing is dropped or cut.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

GAP = 2  # spaces between columns


@dataclass(frozen=True)
class Column:
    """One column of a fitted table: header, short header, drop priority, alignment, flex."""

    header: str
    short: str | None = None  # the header when space is tight
    priority: int = 0  # 0: always shown; higher numbers are dropped first
    right: bool = False  # right-aligned (numbers)
    flex: bool = False  # free text that may be cut to fit (one per table)
    min_width: int = 8  # a flex column is never cut below this


@dataclass(frozen=True)
class Layout:
    """How a table fits a width: the columns kept, their headers and widths, those dropped."""

    keep: tuple[int, ...]  # indices of the columns shown, in order
    headers: tuple[str, ...]
    widths: tuple[int, ...]
    dropped: tuple[str, ...]  # headers of the columns that did not fit

    def total(self) -> int:
        return sum(self.widths) + GAP * max(0, len(self.widths) - 1)


def plural(n: int, noun: str) -> str:
    """``noun`` in the number ``n`` asks for: ``GPU`` for 1, ``GPUs`` otherwise (zbench's nouns
    all take an s)."""
    return noun if n == 1 else f"{noun}s"


def counted(n: int, noun: str) -> str:
    """``1 GPU``, ``2 GPUs``, ``0 GPUs``: a count with its noun in the right number."""
    return f"{n} {plural(n, noun)}"


def gpu_list(ids: Sequence[int]) -> str:
    """``GPU 3``, ``GPUs 0,1``, ``no GPU``: the GPUs an index list names, for a message."""
    if not ids:
        return "no GPU"
    return f"{plural(len(ids), 'GPU')} {','.join(map(str, ids))}"


def one_line(value: object) -> str:
    """A cell on one line: a line break or tab in the data (a GPU name, a command) is a space."""
    return " ".join(str(value).splitlines()).replace("\t", " ")


def _natural(col: Column, header: str, cells: Sequence[str]) -> int:
    return max([len(header), *(len(c) for c in cells)])


def fit(columns: Sequence[Column], rows: Sequence[Sequence[str]], width: int | None) -> Layout:
    """Which columns to show, with which headers and widths, for ``width`` columns (None: all)."""
    cols_cells = [[one_line(r[i]) for r in rows] for i in range(len(columns))]
    keep = list(range(len(columns)))
    headers = [c.header for c in columns]

    def widths() -> list[int]:
        return [_natural(columns[i], headers[i], cols_cells[i]) for i in keep]

    def total(ws: list[int]) -> int:
        return sum(ws) + GAP * max(0, len(ws) - 1)

    if width is None or total(widths()) <= width:
        return Layout(tuple(keep), tuple(headers[i] for i in keep), tuple(widths()), ())
    headers = [c.short or c.header for c in columns]
    dropped: list[str] = []
    while True:
        ws = widths()
        over = total(ws) - width
        if over <= 0:
            break
        flex = next((k for k, i in enumerate(keep) if columns[i].flex), None)
        if flex is not None:
            floor = max(columns[keep[flex]].min_width, len(headers[keep[flex]]))
            if ws[flex] - over >= floor:
                ws[flex] -= over
                break
        droppable = [i for i in keep if columns[i].priority > 0]
        if not droppable:
            if flex is not None:  # nothing else to drop: cut the free text to its floor
                ws[flex] = max(columns[keep[flex]].min_width, ws[flex] - over)
            break
        # The least important column goes first; among equals, the rightmost.
        victim = max(droppable, key=lambda i: (columns[i].priority, i))
        keep.remove(victim)
        dropped.append(columns[victim].header)
    return Layout(tuple(keep), tuple(headers[i] for i in keep), tuple(ws), tuple(dropped))


def cut(text: str, width: int, ellipsis: str = "…") -> str:
    """``text`` cut to ``width`` characters, ending in ``ellipsis`` when cut."""
    if len(text) <= width:
        return text
    if width <= len(ellipsis):
        return text[:width]
    return text[: width - len(ellipsis)] + ellipsis


def lines(
    columns: Sequence[Column],
    rows: Sequence[Sequence[str]],
    width: int | None,
    ellipsis: str = "…",
) -> tuple[Layout, list[str]]:
    """The header line and one line per row, space-aligned, fitted to ``width``."""
    layout = fit(columns, rows, width)

    def line(cells: Sequence[str]) -> str:
        parts = []
        for k, i in enumerate(layout.keep):
            w = layout.widths[k]
            text = cut(one_line(cells[i]), w, ellipsis)
            last = k == len(layout.keep) - 1
            if columns[i].right:
                parts.append(text.rjust(w))
            else:
                parts.append(text if last else text.ljust(w))
        return (" " * GAP).join(parts).rstrip()

    head = [""] * len(columns)
    for k, i in enumerate(layout.keep):
        head[i] = layout.headers[k]
    return layout, [line(head), *(line(r) for r in rows)]
