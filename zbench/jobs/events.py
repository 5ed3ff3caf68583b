"""Following a runner's events file through a handle opened when the job starts, so the events
survive the file being deleted or replaced while the runner writes (the runner keeps writing to
the same inode, and this handle still reads it)."""

from __future__ import annotations

from pathlib import Path
from typing import IO

from zbench.contract.events import Event, typed
from zbench.contract.protocol import parse_line


class EventStream:
    """Complete new events on each :meth:`poll`, typed (``contract.events.typed``); a partial last
    line waits for the next poll."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fh: IO[str] = open(path, encoding="utf-8", errors="replace")  # noqa: SIM115
        self._partial = ""

    def poll(self) -> list[Event]:
        if self._fh.closed:
            return []
        data = self._partial + self._fh.read()
        lines = data.split("\n")
        self._partial = lines.pop()  # "" when the chunk ended on a newline
        parsed = (parse_line(line) for line in lines)
        return [ev for ev in (typed(p) for p in parsed if p is not None) if ev is not None]

    def close(self) -> None:
        self._fh.close()


def fresh_file(path: Path) -> None:
    """Create ``path`` empty (owner-only), replacing whatever a previous attempt left there: events
    are read from the start of the file, so an old ``result`` or ``error`` must never be seen."""
    path.unlink(missing_ok=True)
    path.touch(mode=0o600)
