"""Typed runner events: one dataclass per event type, to and from the protocol's JSON objects.

Runners build these and write them with :meth:`EventWriter.send`. Readers get them back typed at
one point: :func:`read` for a finished file, :func:`typed` for each line a follower parsed (the
supervisor's ``jobs.events.EventStream``). Fields a newer runner adds land in ``extra`` (readers
never fail on them); a ``start`` or ``result`` that lacks fields of its class (a demo's or a
probe's, whose figures are their own, or an older runner's) comes back as :class:`Unlisted`, its
type kept and every field in ``extra``, so nothing measured is dropped.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

from zbench.contract.protocol import SCHEMA_VERSION, read_events

_ENVELOPE = ("extra", "t")  # not fields of the event's JSON object (``t`` is written apart)


@dataclass(frozen=True)
class _Event:
    TYPE: ClassVar[str] = ""
    extra: dict[str, Any] = field(default_factory=dict, kw_only=True)
    t: float = field(default=0.0, kw_only=True)  # when it was written (set when read back)

    @property
    def type(self) -> str:
        """The protocol's event type."""
        return self.TYPE

    def to_fields(self) -> dict[str, Any]:
        """The event's own fields, as the protocol's JSON object has them (no v, t, type)."""
        out = {
            f.name: getattr(self, f.name)
            for f in dataclasses.fields(self)
            if f.name not in _ENVELOPE
        }
        return {**out, **self.extra}

    def get(self, name: str, default: Any = None) -> Any:
        """A field of the class or one in ``extra`` (a kind's own figures), else ``default``."""
        if name in self.__dataclass_fields__ and name not in _ENVELOPE:
            return getattr(self, name)
        return self.extra.get(name, default)

    def as_record(self) -> dict[str, Any]:
        """Its fields and time, as a stored run keeps them."""
        return {"t": self.t, **self.to_fields()}

    def to_json(self, t: float) -> str:
        return json.dumps({"v": SCHEMA_VERSION, "t": t, "type": self.TYPE, **self.to_fields()})

    @classmethod
    def from_fields(cls, event: dict[str, Any]) -> Any:
        names = {f.name for f in dataclasses.fields(cls)} - set(_ENVELOPE)
        known = {k: v for k, v in event.items() if k in names}
        extra = {k: v for k, v in event.items() if k not in names and k not in ("v", "t", "type")}
        t = event.get("t")
        return cls(**known, extra=extra, t=float(t) if isinstance(t, int | float) else 0.0)


@dataclass(frozen=True)
class Start(_Event):
    """Once, before setup: what is about to be measured, and how."""

    TYPE: ClassVar[str] = "start"
    framework: str
    workload: str
    workload_info: dict[str, Any]
    config: dict[str, Any]  # every option, resolved
    preset_choices: dict[str, str]
    data: str  # synthetic-device | synthetic-host | real:<layout>
    precision_detail: str
    tf32: dict[str, bool]  # the switches as read back: matmul_allow_tf32, cudnn_allow_tf32
    memory_format: str
    num_classes: int
    gpus: int
    global_batch: int
    unit: str
    settings: dict[str, Any]  # the switches that change speed (docs/runner-protocol.md)
    environment: dict[str, Any]


@dataclass(frozen=True)
class PhaseEvent(_Event):
    """A ``phase`` event: the runner entered a phase (setup, warmup, measure, done, a demo's)."""

    TYPE: ClassVar[str] = "phase"
    phase: str
    steps: int | None = None
    repeats: int | None = None

    def to_fields(self) -> dict[str, Any]:
        return {k: v for k, v in super().to_fields().items() if v is not None}


@dataclass(frozen=True)
class Progress(_Event):
    """A ``progress`` event: step of total, with the samples/s so far where known."""

    TYPE: ClassVar[str] = "progress"
    step: int
    total: int
    samples_per_s: float | None = None


@dataclass(frozen=True)
class Result(_Event):
    """Once, after the measured windows. Built only by ``contract.measure.build_result``, so every
    framework's result has the same fields."""

    TYPE: ClassVar[str] = "result"
    workload: str
    framework: str
    mode: str
    samples_per_s: float  # the median window's rate, all GPUs
    samples_per_s_per_gpu: float
    samples_per_s_rank0: float
    samples: int
    steps: int
    window_s: float
    step_time_median_ms: float
    step_time_p90_ms: float
    step_time_source: str  # cuda-events | host
    repeats: int
    samples_per_s_all: list[float]  # each window's rate, in order
    samples_per_s_min: float
    samples_per_s_max: float
    samples_per_s_spread_pct: float  # 100 * (max - min) / median
    unit: str
    batch_size: int
    global_batch: int
    gpus: int
    scaling: dict[str, Any]
    compile_s: float | None
    warmup_steps: int
    precision: str
    precision_detail: str
    data: str
    image_size: int
    xla: bool
    settings: dict[str, Any]
    peak_mem_allocated_bytes: int | None
    peak_mem_reserved_bytes: int | None
    peak_mem_bytes: int | None  # = peak_mem_allocated_bytes (the name older tf results used)
    # Windows asked for (--repeat) when fewer were measured: the run was stopped (cancel, timeout)
    # after ``repeats`` whole windows, and its figures are theirs. None: every window ran.
    repeats_planned: int | None = None


@dataclass(frozen=True)
class Frame(_Event):
    """Demo state for live views: every field is the demo's own (in ``extra``)."""

    TYPE: ClassVar[str] = "frame"


@dataclass(frozen=True)
class Error(_Event):
    """An ``error`` event: why the run failed (config, oom, crash, interrupted, unavailable)."""

    TYPE: ClassVar[str] = "error"
    kind: str  # config | oom | crash | interrupted | unavailable
    message: str  # one line


@dataclass(frozen=True)
class Unlisted(_Event):
    """An event whose fields do not fit its type's class (a demo's or a probe's ``start`` and
    ``result``, an older runner's): its ``type`` kept, every field in ``extra``."""

    kind_of_event: str = ""

    @property
    def type(self) -> str:
        return self.kind_of_event

    def to_fields(self) -> dict[str, Any]:
        return dict(self.extra)


EVENT_CLASSES: dict[str, type[_Event]] = {
    c.TYPE: c for c in (Start, PhaseEvent, Progress, Result, Frame, Error)
}

Event = _Event  # what readers hold: one of the classes above, or Unlisted


def from_dict(event: dict[str, Any]) -> _Event | None:
    """The typed form of one parsed event, or None for a type without a class or missing fields."""
    cls = EVENT_CLASSES.get(str(event.get("type")))
    if cls is None:
        return None
    try:
        return cls.from_fields(event)
    except TypeError:  # a required field is missing
        return None


def typed(event: dict[str, Any]) -> Event | None:
    """The one read point: a parsed event as its class, or :class:`Unlisted` where its fields do
    not fit (a ``phase`` without its name, a ``progress`` without its step stay unread: None)."""
    found = from_dict(event)
    if found is not None:
        return found
    kind = str(event.get("type"))
    fields = {k: v for k, v in event.items() if k not in ("v", "t", "type")}
    t = event.get("t")
    stamp = float(t) if isinstance(t, int | float) else 0.0
    if kind == "error":  # an error is never lost: a runner that named no kind crashed
        what, message = fields.pop("kind", None), fields.pop("message", None)
        return Error(str(what or "crash"), str(message or ""), extra=fields, t=stamp)
    if kind in ("start", "result", "log"):
        return Unlisted(kind_of_event=kind, extra=fields, t=stamp)
    return None


def read(path: str | os.PathLike[str]) -> Iterator[Event]:
    """Every event of a finished (or growing) events file, typed, in order."""
    for event in read_events(path):
        found = typed(event)
        if found is not None:
            yield found
