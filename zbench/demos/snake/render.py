"""A Snake board (a ``frame`` event's ``board``) as Rich text: two terminal columns per cell.

Rich only (no torch): the TUI's board widget and the terminal player share it. ``ascii=True`` draws
with plain characters for terminals whose locale is not UTF-8.
"""

from __future__ import annotations

import locale
import sys
from typing import Any

from rich.text import Text

UNICODE = {"head": "██", "body": "██", "fruit": "● ", "empty": "· ", "h": "─", "v": "│",
           "tl": "┌", "tr": "┐", "bl": "└", "br": "┘"}  # fmt: skip
ASCII = {"head": "@@", "body": "##", "fruit": "* ", "empty": ". ", "h": "-", "v": "|",
         "tl": "+", "tr": "+", "bl": "+", "br": "+"}  # fmt: skip


def utf8_terminal() -> bool:
    encoding = getattr(sys.stdout, "encoding", None) or locale.getpreferredencoding(False)
    return "utf" in encoding.lower()


def render_board(board: dict[str, Any], *, ascii: bool = False) -> Text:
    """The board with a frame around it; a malformed board renders as an empty one."""
    g = ASCII if ascii else UNICODE
    size = int(board.get("size") or 0)
    age = board.get("age") or [[0] * size for _ in range(size)]
    head = tuple(board.get("head") or (-1, -1))
    fruit = tuple(board.get("fruit") or (-1, -1))
    length = max(int(board.get("length") or 1), 1)
    text = Text(no_wrap=True, overflow="crop")
    text.append(g["tl"] + g["h"] * (2 * size) + g["tr"] + "\n", style="dim")
    for r in range(size):
        text.append(g["v"], style="dim")
        row = age[r] if r < len(age) else [0] * size
        for c in range(size):
            cell = row[c] if c < len(row) else 0
            if (r, c) == head:
                text.append(g["head"], style="bold bright_green")
            elif cell:
                # Older body cells (near the tail) are darker, so the order reads at a glance.
                text.append(g["body"], style="green" if cell > length // 2 else "dark_green")
            elif (r, c) == fruit:
                text.append(g["fruit"], style="bold red")
            else:
                text.append(g["empty"], style="dim")
        text.append(g["v"] + "\n", style="dim")
    text.append(g["bl"] + g["h"] * (2 * size) + g["br"], style="dim")
    return text
