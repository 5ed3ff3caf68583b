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
    """The characters for bars, sparklines, cut text and markers: a Unicode set or an ASCII set."""

    ascii: bool
    ellipsis: str
    bar_full: str
    bar_empty: str
    spark: str  # nine levels, from empty to full
    dot: str  # a value that is not available
    running: str  # before a running job's phase
    spinner: tuple[str, ...]
    up: str = "↑"
    down: str = "↓"
    degree: str = "°"
    warn: str = "⚠"
    sep: str = "·"


UNICODE = Glyphs(
    False, "…", "█", "░", " ▁▂▃▄▅▆▇█", "·", "▶", ("⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏")
)
ASCII = Glyphs(
    True, "...", "#", "-", " _.,-=+*#", ".", ">", ("|", "/", "-", "\\"), "^", "v", "", "!", "-"
)


def _utf8_name(name: str) -> bool:
    return "utf8" in name.lower().replace("-", "").replace("_", "")


def encoding_is_utf8(encoding: str | None = None) -> bool:
    """True when the terminal can show UTF-8. The locale the user set (``LC_ALL``, ``LC_CTYPE``,
    ``LANG``, the first one set) decides: Python coerces a C locale to UTF-8 for itself, but the
    terminal on the other end of SSH does not. With none set, the output encoding decides.
    ``ZBENCH_ASCII=1`` forces ASCII, ``ZBENCH_ASCII=0`` forces Unicode."""
    forced = os.environ.get("ZBENCH_ASCII")
    if forced in ("1", "0"):
        return forced == "0"
    if encoding is None:
        for var in ("LC_ALL", "LC_CTYPE", "LANG"):
            value = os.environ.get(var)
            if value:
                return _utf8_name(value)
    enc = encoding or getattr(sys.stdout, "encoding", None) or locale.getpreferredencoding(False)
    return _utf8_name(enc)


@functools.cache
def _cached(utf8: bool) -> Glyphs:
    return UNICODE if utf8 else ASCII


def glyphs(encoding: str | None = None) -> Glyphs:
    """The glyph set for this terminal (or ``encoding``): Unicode where it shows UTF-8, or ASCII."""
    return _cached(encoding_is_utf8(encoding))
