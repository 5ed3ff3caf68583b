"""Text for telemetry values: one place decides how NA, percentages, bytes and rates read."""

from __future__ import annotations

from typing import Any

from zbench.telemetry.snapshot import NA

GIB = 2**30


def pct(value: Any, digits: int = 0) -> str:
    """A percentage as text; ``n/a`` for NA or None."""
    return "n/a" if value is NA or value is None else f"{value:.{digits}f}%"


def num(value: Any, unit: str = "", digits: int = 0) -> str:
    """A number and its unit as text; ``n/a`` for NA or None."""
    return "n/a" if value is NA or value is None else f"{value:.{digits}f}{unit}"


def gib(value: Any, digits: int = 1) -> str:
    """Bytes as GiB, the number only; ``n/a`` for NA or None."""
    return "n/a" if value is NA or value is None else f"{value / GIB:.{digits}f}"


def rate_gbs(value: Any, digits: int = 1) -> str:
    """Bytes/s as decimal GB/s (as link speeds and bandwidth specs are quoted)."""
    return "n/a" if value is NA or value is None else f"{value / 1e9:.{digits}f}"


def used_of(used: Any, total: Any) -> str:
    """``used/total GiB``; ``n/a`` when both are NA."""
    if used is NA and total is NA:
        return "n/a"
    return f"{gib(used)}/{gib(total, 0)} GiB"
