"""Multi-object tracking demo: a detector and an appearance embedding feeding Deep SORT."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any


def run(options: Mapping[str, Any], emit: Callable[..., None]) -> dict[str, Any]:
    """Entry for the demo runner (imports torch only when called)."""
    from zbench.demos.tracking.demo import run as _run

    return _run(options, emit)
