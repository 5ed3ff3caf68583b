"""What a demo's live view draws, described without a UI library: the Snake board as styled
segments. The TUI's board widget and the terminal player (``zbench.demos.snake.play``) each turn
the segments into Rich text in one call, so the two draw the same board.

Standard library only. Styles are Rich style names, kept as plain strings.
"""

from __future__ import annotations

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
    size = int(board.get("size") or 0)
    age = board.get("age") or [[0] * size for _ in range(size)]
    head = tuple(board.get("head") or (-1, -1))
    fruit = tuple(board.get("fruit") or (-1, -1))
    length = max(int(board.get("length") or 1), 1)
    out = [(g["tl"] + g["h"] * (2 * size) + g["tr"] + "\n", "dim")]
    for r in range(size):
        out.append((g["v"], "dim"))
        row = age[r] if r < len(age) else [0] * size
        for c in range(size):
            cell = row[c] if c < len(row) else 0
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
