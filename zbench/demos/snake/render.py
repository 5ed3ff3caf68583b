"""A Snake board (a ``frame`` event's ``board``) as Rich text, for the terminal player: the board is
described once in ``zbench.contract.demo_views`` (the TUI's board widget draws the same segments).
``ascii=True`` draws with plain characters for terminals whose locale is not UTF-8."""

from __future__ import annotations

from typing import Any

from rich.text import Text

from zbench.contract.demo_views import snake_segments
from zbench.glyphs import encoding_is_utf8


def utf8_terminal() -> bool:
    """Whether the terminal shows UTF-8 (``zbench.glyphs`` decides for all of zbench)."""
    return encoding_is_utf8()


def render_board(board: dict[str, Any], *, ascii: bool = False) -> Text:
    """The board with a frame around it; a malformed board renders as an empty one."""
    return Text.assemble(*snake_segments(board, ascii=ascii), no_wrap=True, overflow="crop")
