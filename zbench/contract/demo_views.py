"""What a demo's live view draws, described without a UI library: the Snake board as styled
segments. The TUI's board widget and the terminal player (``zbench.demos.snake.play``) each turn
the segments into Rich text in one call, so the two draw the same board.

Standard library only. Styles are Rich style names, kept as plain strings.
"""

from __future__ import annotations

import math
from typing import Any

SNAKE_UNICODE = {
    "head": "██",
    "body": "██",
    "fruit": "● ",
    "empty": "· ",
    "h": "─",
    "v": "│",
    "tl": "┌",
    "tr": "┐",
    "bl": "└",
    "br": "┘",
}
SNAKE_ASCII = {
    "head": "@@",
    "body": "##",
    "fruit": "* ",
    "empty": ". ",
    "h": "-",
    "v": "|",
    "tl": "+",
    "tr": "+",
    "bl": "+",
    "br": "+",
}


def snake_segments(board: dict[str, Any], *, ascii: bool = False) -> list[tuple[str, str]]:
    """A frame event's ``board`` with a frame around it, two terminal columns per cell, as
    ``(text, style)`` pairs; a malformed board draws as an empty one."""
    g = SNAKE_ASCII if ascii else SNAKE_UNICODE
    size = _count(board.get("size"), 0)
    ages = board.get("age")
    age: list[Any] = ages if isinstance(ages, list) else []
    head, fruit = _cell(board.get("head")), _cell(board.get("fruit"))
    length = max(_count(board.get("length"), 1), 1)
    out = [(g["tl"] + g["h"] * (2 * size) + g["tr"] + "\n", "dim")]
    for r in range(size):
        out.append((g["v"], "dim"))
        row = age[r] if r < len(age) and isinstance(age[r], list) else []
        for c in range(size):
            cell = _count(row[c] if c < len(row) else 0, 0)
            if (r, c) == head:
                out.append((g["head"], "bold bright_green"))
            elif cell:
                # Older body cells (near the tail) are darker, so the order reads at a glance.
                out.append((g["body"], "green" if cell > length // 2 else "dark_green"))
            elif (r, c) == fruit:
                out.append((g["fruit"], "bold red"))
            else:
                out.append((g["empty"], "dim"))
        out.append((g["v"] + "\n", "dim"))
    out.append((g["bl"] + g["h"] * (2 * size) + g["br"], "dim"))
    return out


def _count(value: Any, default: int) -> int:
    """A board's whole number (size, length, a cell's age); ``default`` for anything else."""
    if isinstance(value, int) or (isinstance(value, float) and math.isfinite(value)):
        return int(value)
    return default


def _cell(value: Any) -> tuple[int, int]:
    """A ``[row, column]`` pair (head, fruit); off the board for anything else."""
    if isinstance(value, list | tuple) and len(value) == 2:
        return _count(value[0], -1), _count(value[1], -1)
    return -1, -1
