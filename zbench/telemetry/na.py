"""``NA``, the value of a metric the hardware or the driver does not offer (see ``snapshot``).

Kept apart from the snapshot dataclasses so that code which only tests values against it (the
TUI's formatting, imported before its first frame) does not pay for building those classes.
"""

from __future__ import annotations

from typing import Final


class _NotAvailable:
    """Singleton for "this hardware/driver does not offer the metric"."""

    _instance: _NotAvailable | None = None

    def __new__(cls) -> _NotAvailable:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "NA"

    def __str__(self) -> str:
        return "n/a"

    def __reduce__(self) -> str:
        return "NA"


NA: Final = _NotAvailable()
NAType = _NotAvailable
