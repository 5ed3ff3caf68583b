"""Argument types the benchmark scripts share."""

from __future__ import annotations

import argparse


def comma_choices(text: str, allowed: tuple[str, ...], what: str) -> tuple[str, ...]:
    """``"a,b"`` -> ("a", "b"), each one of ``allowed``; else one line naming what is wrong."""
    items = tuple(t.strip() for t in text.split(",") if t.strip())
    bad = [t for t in items if t not in allowed]
    if bad or not items:
        raise argparse.ArgumentTypeError(
            f"unknown {what} {', '.join(bad) or '(none given)'}; {what}s are {', '.join(allowed)}"
        )
    return items
