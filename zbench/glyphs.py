"""Characters for bars, sparklines and cut text: Unicode when the terminal's encoding can show them,
ASCII otherwise (a non-UTF-8 locale would otherwise print nothing, or "?", for every bar)."""

from __future__ import annotations

import functools
import locale
import os
import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class Glyphs:
    ascii: bool
    ellipsis: str
    bar_full: str
    bar_empty: str
    spark: str  # from lowest to highest
    spinner: tuple[str, ...]


UNICODE = Glyphs(
    False, "…", "█", "░", "▁▂▃▄▅▆▇█", ("⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏")
)
ASCII = Glyphs(True, "...", "#", ".", "_.-=*#", ("|", "/", "-", "\\"))


def encoding_is_utf8(encoding: str | None = None) -> bool:
    """True when the output encoding (or, failing that, the locale's) is UTF-8.
    ``ZBENCH_ASCII=1`` forces ASCII, ``ZBENCH_ASCII=0`` forces Unicode."""
    forced = os.environ.get("ZBENCH_ASCII")
    if forced in ("1", "0"):
        return forced == "0"
    enc = encoding or getattr(sys.stdout, "encoding", None) or locale.getpreferredencoding(False)
    return enc.lower().replace("-", "").replace("_", "") in ("utf8", "utf8mb4")


@functools.cache
def _cached(utf8: bool) -> Glyphs:
    return UNICODE if utf8 else ASCII


def glyphs(encoding: str | None = None) -> Glyphs:
    return _cached(encoding_is_utf8(encoding))
