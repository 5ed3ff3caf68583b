"""Display helpers: numbers to short strings, percentages to coloured bars.

An adapter between snapshot values and widgets (colour thresholds live here, not in the snapshot).
Colours are theme variables in Textual content markup, never RGB literals. ``NA`` prints as ``n/a``.
"""

from __future__ import annotations

from zbench.glyphs import glyphs
from zbench.telemetry.na import NA

GIB = 1024**3


def blocks() -> str:
    """Nine levels from empty to full: block characters, or ASCII in a non-UTF-8 locale."""
    return glyphs().spark


def is_num(value: object) -> bool:
    """Whether ``value`` is a number to show (neither NA nor None)."""
    return value is not NA and value is not None


def level(pct: object) -> str:
    """The theme variable for a load level: calm, busy, saturated."""
    if not is_num(pct):
        return "$text-muted"
    p = float(pct)  # type: ignore[arg-type]
    if p < 50:
        return "$success"
    if p < 85:
        return "$warning"
    return "$error"


def pct(value: object, digits: int = 0) -> str:
    """A percentage as text; ``n/a`` when it is not a number."""
    if not is_num(value):
        return "n/a"
    return f"{float(value):.{digits}f}%"  # type: ignore[arg-type]


def num(value: object, unit: str = "", digits: int = 0) -> str:
    """A number and its unit as text; ``n/a`` when it is not a number."""
    if not is_num(value):
        return "n/a"
    return f"{float(value):.{digits}f}{unit}"  # type: ignore[arg-type]


def gib(value: object, digits: int = 1) -> str:
    """Bytes as GiB, the number only; ``n/a`` when it is not a number."""
    if not is_num(value):
        return "n/a"
    return f"{float(value) / GIB:.{digits}f}"  # type: ignore[arg-type]


def rate(value: object) -> str:
    """Bytes/s as a short decimal rate (NVLink and PCIe are quoted in GB/s)."""
    if not is_num(value):
        return "n/a"
    v = float(value)  # type: ignore[arg-type]
    for unit, scale in (("GB/s", 1e9), ("MB/s", 1e6), ("kB/s", 1e3)):
        if v >= scale:
            return f"{v / scale:.1f} {unit}"
    return f"{v:.0f} B/s"


def short_rate(value: object) -> str:
    """Bytes/s in at most five characters and a unit letter (``924k``, ``6.0M``, ``392G``)."""
    if not is_num(value):
        return "n/a"
    v = float(value)  # type: ignore[arg-type]
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if v >= scale:
            return f"{v / scale:.0f}{unit}" if v >= 100 * scale else f"{v / scale:.1f}{unit}"
    return f"{v:.0f}"


def ratio_pct(used: object, total: object) -> object:
    """``used`` as a percentage of ``total``; NA when either is missing or the total is 0."""
    if not (is_num(used) and is_num(total)) or not total:
        return NA
    return 100.0 * float(used) / float(total)  # type: ignore[arg-type]


def bar(value: object, width: int) -> str:
    """A percentage as a bar of ``width`` cells in content markup, coloured by level."""
    if not is_num(value):
        return f"[$text-muted]{glyphs().dot * width}[/]"
    p = max(0.0, min(100.0, float(value)))  # type: ignore[arg-type]
    filled = round(p / 100 * width)
    g = glyphs()
    return f"[{level(p)}]{g.bar_full * filled}[/][$text-muted]{g.bar_empty * (width - filled)}[/]"


def block(value: object) -> str:
    """One cell for a percentage (per-core CPU): a block of height proportional to the value."""
    if not is_num(value):
        return f"[$text-muted]{glyphs().dot}[/]"
    p = max(0.0, min(100.0, float(value)))  # type: ignore[arg-type]
    return f"[{level(p)}]{blocks()[max(1, round(p / 100 * 8))]}[/]"


def escape(text: str) -> str:
    """Escape user text (job names, paths) for content markup."""
    return text.replace("[", r"\[")
