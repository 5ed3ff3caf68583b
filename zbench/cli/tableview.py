"""Print a fitted column table (``textfit``) to a Rich console: bold headers on a terminal, plain
aligned text when stdout is a pipe or a file, every column in full with ``wide``."""

from __future__ import annotations

import os
from collections.abc import Sequence

from rich.console import Console
from rich.text import Text

from zbench.glyphs import glyphs
from zbench.textfit import Column, Layout, lines


def table_width(console: Console, wide: bool) -> int | None:
    """The width to fit to: the terminal's; for a pipe, ``$COLUMNS`` when set, else None (no
    limit, nothing cut); None with ``--wide``."""
    if wide:
        return None
    if not console.is_terminal:
        columns = os.environ.get("COLUMNS", "")
        return int(columns) if columns.isdigit() and int(columns) > 0 else None
    return console.width


def print_table(
    console: Console,
    columns: Sequence[Column],
    rows: Sequence[Sequence[str]],
    *,
    wide: bool = False,
    title: str | None = None,
    width: int | None = -1,
) -> Layout:
    """``width=-1``: decide from the console (see :func:`table_width`)."""
    fit_to = table_width(console, wide) if width == -1 else width
    layout, out = lines(columns, rows, fit_to, glyphs().ellipsis)
    if title:
        console.print(Text(title, style="bold"))
    console.print(Text(out[0], style="bold"), soft_wrap=True)
    for line in out[1:]:
        console.print(Text(line), soft_wrap=True)
    if layout.dropped:
        console.print(
            Text(
                f"(not shown at this width: {', '.join(layout.dropped)}; --wide shows all)",
                style="dim",
            )
        )
    return layout
