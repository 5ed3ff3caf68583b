"""The runner protocol: newline-delimited JSON events from a runner process to its supervisor.

This module is the whole contract (docs/runner-protocol.md describes it for humans). It uses only the
standard library so that the supervisor, the TUI and the CLI can read events without importing any
deep-learning framework; anyone may import it.

Each event is one JSON object on one line::

    {"v": 1, "t": 1764500000.123, "type": "progress", "step": 10, "total": 50, "samples_per_s": 2210.5}

Readers skip lines they cannot parse (a torn last line, a foreign write) and events of a newer major
schema keep their known fields.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, ClassVar, Literal, Protocol

SCHEMA_VERSION = 1
# A folder of the job's own for a runner's scratch files (the launcher's rendezvous store), set by
# the supervisor and removed once the job has ended, however the runner ended (even by SIGKILL).
ENV_JOB_TMP = "ZBENCH_JOB_TMP"

EventType = Literal["start", "phase", "progress", "result", "frame", "error", "log"]
EVENT_TYPES: tuple[str, ...] = ("start", "phase", "progress", "result", "frame", "error", "log")
# "compile" only where the runner compiles before its warm-up (torch.compile and the CUDA-graph
# capture; TensorFlow's tracing and XLA): a first run with kernel tuning spends minutes there.
Phase = Literal["setup", "compile", "warmup", "measure", "done"]
PHASES: tuple[str, ...] = ("setup", "compile", "warmup", "measure", "done")
ErrorKind = Literal["config", "oom", "crash", "interrupted", "unavailable"]
ERROR_KINDS: tuple[str, ...] = ("config", "oom", "crash", "interrupted", "unavailable")


class TypedEvent(Protocol):
    """What :meth:`EventWriter.send` takes: any class of ``zbench.contract.events``."""

    TYPE: ClassVar[str]

    def to_fields(self) -> dict[str, Any]: ...


class EventWriter:
    """Writes events to a file path or an inherited file descriptor (``"fd:N"`` or an int).

    Each event is written with a single ``write`` of one complete line and flushed, so a reader never
    sees half an event except when the process dies mid-write (readers skip that line). Thread-safe.
    """

    def __init__(self, target: str | int | os.PathLike[str]) -> None:
        self._lock = threading.Lock()
        self._fh: IO[str]
        if isinstance(target, int):
            self._fh = os.fdopen(target, "a", buffering=1, encoding="utf-8")
        elif isinstance(target, str) and target.startswith("fd:"):
            self._fh = os.fdopen(int(target[3:]), "a", buffering=1, encoding="utf-8")
        else:
            self._fh = open(target, "a", buffering=1, encoding="utf-8")  # noqa: SIM115

    def emit(self, type: EventType, **fields: Any) -> dict[str, Any]:
        if type not in EVENT_TYPES:
            raise ValueError(f"unknown event type {type!r}")
        event = {"v": SCHEMA_VERSION, "t": time.time(), "type": type, **fields}
        line = json.dumps(event, default=_json_default, allow_nan=False) + "\n"
        with self._lock:
            self._fh.write(line)
            self._fh.flush()
        return event

    def send(self, event: TypedEvent) -> dict[str, Any]:
        """Write a typed event (``zbench.contract.events``)."""
        return self.emit(event.TYPE, **event.to_fields())  # type: ignore[arg-type]

    # Convenience wrappers, so runners cannot misspell the common shapes.
    def phase(self, name: Phase, **fields: Any) -> None:
        self.emit("phase", phase=name, **fields)

    def progress(self, step: int, total: int, samples_per_s: float | None = None, **f: Any) -> None:
        self.emit("progress", step=step, total=total, samples_per_s=samples_per_s, **f)

    def error(self, kind: ErrorKind, message: str, **fields: Any) -> None:
        self.emit("error", kind=kind, message=message, **fields)

    def close(self) -> None:
        with self._lock:
            self._fh.close()

    def __enter__(self) -> EventWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _json_default(obj: Any) -> Any:
    if isinstance(obj, Path):
        return str(obj)
    if isinstance(obj, set | frozenset | tuple):
        return list(obj)
    raise TypeError(f"not JSON serializable: {type(obj).__name__}")


def parse_line(line: str) -> dict[str, Any] | None:
    """One event, or None for a line that is not a valid event (readers skip those)."""
    line = line.strip()
    if not line:
        return None
    try:
        event = json.loads(line)
    except ValueError:
        return None
    if not isinstance(event, dict) or event.get("type") not in EVENT_TYPES:
        return None
    if not isinstance(event.get("v"), int) or not isinstance(event.get("t"), int | float):
        return None
    return event


def read_events(path: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """All valid events of a finished (or growing) events file, in order."""
    try:
        fh = open(path, encoding="utf-8", errors="replace")  # noqa: SIM115
    except FileNotFoundError:
        return
    with fh:
        for line in fh:
            if not line.endswith("\n"):
                break  # a line still being written
            event = parse_line(line)
            if event is not None:
                yield event


@dataclass
class EventTail:
    """Follows a growing events file: each :meth:`poll` returns the complete new events."""

    path: Path
    offset: int = 0
    _partial: str = field(default="", repr=False)

    def poll(self) -> list[dict[str, Any]]:
        try:
            with open(self.path, encoding="utf-8", errors="replace") as fh:
                fh.seek(self.offset)
                chunk = fh.read()
                self.offset = fh.tell()
        except FileNotFoundError:
            return []
        data = self._partial + chunk
        lines = data.split("\n")
        self._partial = lines.pop()  # "" when the chunk ended on a newline
        events = []
        for line in lines:
            event = parse_line(line)
            if event is not None:
                events.append(event)
        return events
