"""Every CSV zbench writes goes through here: text cells that a spreadsheet would run are defused.

A cell starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is a formula to Excel,
LibreOffice and Google Sheets (``=HYPERLINK(...)`` in a tag or a GPU name runs when the file is
opened). OWASP's advice is followed: such a text cell gets a leading single quote. Numbers stay
numbers (``-1.5``, as a float or as its plain text, is a value), so the columns still sort and sum.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from typing import Any

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: Any) -> Any:
    """``value`` for a CSV cell: a text cell that starts like a formula gets a leading ``'``."""
    if isinstance(value, str) and value.startswith(FORMULA_START) and not _number(value):
        return "'" + value
    return value


def _number(text: str) -> bool:
    """A signed number written as text (``-1.5``, ``+3e2``): a value, not a formula."""
    if text[0] not in "+-" or any(c.isspace() for c in text):
        return False
    try:
        float(text)
    except ValueError:
        return False
    return True


def write_rows(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A CSV document (``\\n`` line ends): the header, then the rows, every cell through
    :func:`safe_cell`."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow([safe_cell(h) for h in header])
    writer.writerows([safe_cell(v) for v in row] for row in rows)
    return buf.getvalue()
