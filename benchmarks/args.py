"""Argument types the benchmark scripts share."""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn


class OneLineParser(argparse.ArgumentParser):
    """argparse whose errors are one line, ``PROG: message``, and exit status 2 (no usage block):
    every benchmark script's bad input reads the same."""

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: {message}", file=sys.stderr)
        sys.exit(2)


def comma_choices(text: str, allowed: tuple[str, ...], what: str) -> tuple[str, ...]:
    """``"a,b"`` -> ("a", "b"), each one of ``allowed``; else one line naming what is wrong."""
    items = tuple(t.strip() for t in text.split(",") if t.strip())
    bad = [t for t in items if t not in allowed]
    if bad or not items:
        raise argparse.ArgumentTypeError(
            f"unknown {what} {', '.join(bad) or '(none given)'}; {what}s are {', '.join(allowed)}"
        )
    return items


def batch_sizes(text: str) -> tuple[int, ...]:
    """``"256,384"`` -> (256, 384), each 1 or more; else one line naming what is wrong."""
    try:
        values = tuple(int(t) for t in text.split(",") if t.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated batch sizes, got {text!r}"
        ) from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"batch sizes must be 1 or more, got {text!r}")
    return values
