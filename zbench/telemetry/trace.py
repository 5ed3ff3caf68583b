"""Trace files: record snapshots to JSONL, read them back, and replay them as if live.

Format (docs/traces.md): the first line is a header object ``{"format": "zbench-trace", "version": 1,
...}``; every following line is one :func:`~zbench.telemetry.snapshot.to_dict` snapshot. A path ending
in ``.gz`` is written gzip-compressed; readers tell by the first bytes. Readers skip lines they cannot
parse (a torn last line) or whose values have the wrong types.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import os
import platform
import threading
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from zbench.gpuids import check_offered
from zbench.telemetry.snapshot import Snapshot, from_dict, to_dict
from zbench.textfit import counted

FORMAT = "zbench-trace"
VERSION = 1


def _open(path: Path, mode: str) -> IO[str]:
    """Writing, a ``.gz`` name compresses; reading, the file's first bytes say whether it is gzip,
    so a compressed trace renamed without ``.gz`` (or a plain one with it) still reads."""
    if mode == "r":
        with open(path, "rb") as fh:
            compressed = fh.read(2) == b"\x1f\x8b"
    else:
        compressed = path.suffix == ".gz"
    if compressed:
        return gzip.open(path, mode + "t", encoding="utf-8")  # type: ignore[return-value]
    return open(path, mode, encoding="utf-8")


class TraceWriter:
    """Appends snapshots to a trace file, one line each, flushed per line so that an interrupted
    recording is complete up to its last sample. The header is written with the first snapshot (it
    names the GPUs that snapshot saw)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        interval: float | None = None,
        meta: dict[str, Any] | None = None,
    ) -> None:
        self.path = Path(path)
        self.interval = interval
        self.meta = dict(meta or {})
        self._fh: IO[str] | None = _open(self.path, "w")
        self._lock = threading.Lock()
        self._header_written = False
        self.count = 0

    def _header(self, first: Snapshot | None) -> dict[str, Any]:
        header = {
            "format": FORMAT,
            "version": VERSION,
            "host": platform.node(),
            "created": time.time(),
            "interval": self.interval,
            "gpus": [g.name for g in first.gpus] if first else [],
            "driver_version": to_dict(first.driver_version) if first else None,
        }
        header.update(self.meta)
        header["format"], header["version"] = FORMAT, VERSION
        return header

    def _write_line(self, obj: dict[str, Any]) -> None:
        assert self._fh is not None
        self._fh.write(json.dumps(obj, separators=(",", ":"), allow_nan=False) + "\n")
        self._fh.flush()

    def write(self, snapshot: Snapshot) -> None:
        with self._lock:
            if self._fh is None:
                raise ValueError("trace is closed")
            if not self._header_written:
                self._write_line(self._header(snapshot))
                self._header_written = True
            self._write_line(_clean(to_dict(snapshot)))
            self.count += 1

    def close(self) -> None:
        with self._lock:
            if self._fh is None:
                return
            if not self._header_written:
                self._write_line(self._header(None))
                self._header_written = True
            self._fh.close()
            self._fh = None

    def __enter__(self) -> TraceWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _clean(obj: Any) -> Any:
    """JSON has no NaN/inf: write them as null (read back as NA)."""
    if isinstance(obj, float) and (obj != obj or obj in (float("inf"), float("-inf"))):
        return None
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_clean(v) for v in obj]
    return obj


def read_header(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The trace's header; raises ``FileNotFoundError`` for a missing file and ``ValueError`` if
    the file is not a zbench trace (the one wording of both, for the TUI and ``monitor``)."""
    where = Path(path)
    if not where.exists():
        raise FileNotFoundError(f"no such trace file: {path}")
    if where.is_dir():
        raise ValueError(f"{path} is a folder, not a trace file")
    if not where.is_file():  # a device or a pipe (/dev/null): reading it could block or say nothing
        raise ValueError(f"{path} is not a zbench trace (not a regular file)")
    try:
        with _open(where, "r") as fh:
            first = fh.readline()
        header = json.loads(first)
    except (ValueError, EOFError, gzip.BadGzipFile):  # not text (a database...), not gzip, not JSON
        header = None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise ValueError(f"{path} is not a zbench trace (no header line)")
    return header


def read_trace(path: str | os.PathLike[str]) -> Iterator[Snapshot]:
    """Every snapshot of a trace, in order. Raises ``FileNotFoundError`` / ``ValueError`` for a missing
    file or one that is not a trace; skips lines it cannot parse; a compressed file cut short (the
    recording machine went down) gives the snapshots before the cut."""
    yield from _read(path)[0]


def _read(path: str | os.PathLike[str]) -> tuple[list[Snapshot], bool, int]:
    """The trace's snapshots, whether its compressed stream ended before its end marker, and how
    many lines were skipped because they are no snapshot."""
    read_header(path)
    out: list[Snapshot] = []
    skipped = 0
    with _open(Path(path), "r") as fh:
        fh.readline()
        try:
            for line in fh:
                try:
                    data = json.loads(line)
                    if isinstance(data, dict) and "t" in data:
                        out.append(from_dict(Snapshot, data))
                        continue
                except (ValueError, TypeError):
                    pass
                skipped += bool(line.strip())
        except (EOFError, zlib.error, gzip.BadGzipFile):
            # A line cut in two does not parse: every sample kept is whole.
            return out, True, skipped
    return out, False, skipped


class ReplayBackend:
    """Plays a trace back as if it were live.

    Time is mapped, not stepped: ``sample()`` returns the newest recorded snapshot whose offset from the
    trace's first sample is at most the (``speed``-scaled) time elapsed since the replay started, with
    its ``t`` moved to the present. So a sampler polling every 0.5 s over a 0.1 s trace sees every fifth
    record, exactly as it would have live. At the end the last snapshot is repeated and ``finished``
    is set, or with ``loop=True`` playback starts again.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        loop: bool = False,
        speed: float = 1.0,
        gpus: Sequence[int] | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.path = Path(path)
        self.header = read_header(self.path)
        self.records, cut, skipped = _read(self.path)
        why = [f"{counted(skipped, 'unreadable line')} skipped"] if skipped else []
        if not self.records:
            why = (["it was cut short"] if cut else []) + why
            raise ValueError(f"{path} holds no samples" + (f" ({'; '.join(why)})" if why else ""))
        if cut:
            why.insert(0, f"cut short: its first {len(self.records)} samples")
        if gpus is not None:
            known = sorted(g.index for g in self.records[0].gpus)
            check_offered(gpus, known, machine="the traced machine")
        self.gpus = None if gpus is None else tuple(gpus)
        self.loop = loop
        self.speed = speed
        self._clock = clock
        self._wall = wall
        self._t0 = self.records[0].t
        self._start = clock()
        self._i = 0
        self.finished = False
        self.notice: str | None = f"replaying {self.path.name}" + (
            f" ({'; '.join(why)})" if why else ""
        )

    def sample(self, trees: Sequence[int] = ()) -> Snapshot:
        elapsed = (self._clock() - self._start) * self.speed
        span = self.records[-1].t - self._t0
        if self.loop and span > 0 and elapsed > span:
            # Restart; the gap between the last and first record counts as one median step.
            period = span + span / max(len(self.records) - 1, 1)
            elapsed %= period
            self._i = 0
        while self._i + 1 < len(self.records) and self.records[self._i + 1].t - self._t0 <= elapsed:
            self._i += 1
        self.finished = not self.loop and self._i == len(self.records) - 1
        rec = self.records[self._i]
        gpus = rec.gpus if self.gpus is None else tuple(g for g in rec.gpus if g.index in self.gpus)
        return dataclasses.replace(rec, t=self._wall(), gpus=gpus, notice=self.notice)

    def close(self) -> None:
        pass
