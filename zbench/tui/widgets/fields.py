"""Rows of figures that wrap between figures, never inside one, to the widget's width.

A Static wraps at any space: at 80 columns the job view split "SM 0%" into "SM" at a line's end and
"0%" at the next one's start, and "phase" from its "measure". Here a row is a sequence of fields
(content markup: "SM 0%", "mem ██░░ 2.1 GiB"); a row too wide for the widget goes on over as many
lines as it needs, each continued line indented, and each field stays whole. Textual has no such
layout for inline text (its Horizontal would give every field a widget of its own and a fixed
width), hence this small packer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from textual.content import Content
from textual.widgets import Static


@dataclass(frozen=True)
class Row:
    """One line's fields as markup, the spaces between them, and the indent of its continued lines."""

    fields: tuple[str, ...]
    gap: int = 2
    indent: int = 0


def pack(rows: Sequence[Row], width: int) -> str:
    """``rows`` as markup lines of at most ``width`` cells, broken between fields only; a field
    wider than a line has one of its own (the widget then wraps it). ``width`` < 1: one line a row."""
    lines: list[str] = []
    for row in rows:
        line, used = "", 0
        for field in row.fields:
            if not field:
                continue
            cells = Content.from_markup(field).cell_length
            if used and width > 0 and used + row.gap + cells > width:
                lines.append(line)
                line, used = " " * row.indent, row.indent
            elif used:
                line, used = line + " " * row.gap, used + row.gap
            line, used = line + field, used + cells
        lines.append(line)
    return "\n".join(lines)


def rows_of(markup: str, indent: int = 2) -> list[Row]:
    """Lines whose fields are set apart by two spaces (the demos' figures) as rows: split at the
    double spaces that no open tag spans, so a field's markup stays whole ("[$error]a  b[/]" is
    one field)."""
    rows = []
    for line in markup.splitlines():
        fields, start, depth, i = [], 0, 0, 0
        while i < len(line):
            if line.startswith("\\[", i):  # an escaped bracket: text, not a tag
                i += 2
                continue
            if line[i] == "[" and (end := line.find("]", i)) > i:
                depth += -1 if line[i + 1 : i + 2] == "/" else 1
                i = end + 1
                continue
            if depth <= 0 and line.startswith("  ", i):
                fields.append(line[start:i])
                i = start = len(line) - len(line[i:].lstrip(" "))
                continue
            i += 1
        rows.append(Row((*fields, line[start:]), indent=indent))
    return rows


class Fields(Static):
    """A Static that shows :class:`Row` s packed to its own width, again at every resize."""

    DEFAULT_CSS = "Fields { height: auto; }"

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._rows: tuple[Row, ...] = ()

    def show(self, rows: Sequence[Row]) -> None:
        self._rows = tuple(rows)
        self.on_resize()

    def on_resize(self) -> None:
        self.update(pack(self._rows, self.content_size.width))
