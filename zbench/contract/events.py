"""Typed runner events: one dataclass per event type, to and from the protocol's JSON objects.

Runners build these and write them with :meth:`EventWriter.send`; readers may keep the plain dicts
that :func:`zbench.contract.protocol.read_events` yields or turn one into its class with
:func:`from_dict`. Fields a newer runner adds land in ``extra`` (readers never fail on them).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any, ClassVar

from zbench.contract.protocol import SCHEMA_VERSION


@dataclass(frozen=True)
class _Event:
    TYPE: ClassVar[str] = ""
    extra: dict[str, Any] = field(default_factory=dict, kw_only=True)

    def to_fields(self) -> dict[str, Any]:
        """The event's own fields, as the protocol's JSON object has them (no v, t, type)."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "extra"}
        return {**out, **self.extra}

    def to_json(self, t: float) -> str:
        return json.dumps({"v": SCHEMA_VERSION, "t": t, "type": self.TYPE, **self.to_fields()})

    @classmethod
    def from_fields(cls, event: dict[str, Any]) -> Any:
        names = {f.name for f in dataclasses.fields(cls)} - {"extra"}
        known = {k: v for k, v in event.items() if k in names}
        extra = {k: v for k, v in event.items() if k not in names and k not in ("v", "t", "type")}
        return cls(**known, extra=extra)


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
    TYPE: ClassVar[str] = "phase"
    phase: str
    steps: int | None = None
    repeats: int | None = None

    def to_fields(self) -> dict[str, Any]:
        return {k: v for k, v in super().to_fields().items() if v is not None}


@dataclass(frozen=True)
class Progress(_Event):
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


@dataclass(frozen=True)
class Frame(_Event):
    """Demo state for live views: every field is the demo's own (in ``extra``)."""

    TYPE: ClassVar[str] = "frame"


@dataclass(frozen=True)
class Error(_Event):
    TYPE: ClassVar[str] = "error"
    kind: str  # config | oom | crash | interrupted | unavailable
    message: str  # one line


EVENT_CLASSES: dict[str, type[_Event]] = {
    c.TYPE: c for c in (Start, PhaseEvent, Progress, Result, Frame, Error)
}


def from_dict(event: dict[str, Any]) -> _Event | None:
    """The typed form of one parsed event, or None for a type without a class or missing fields."""
    cls = EVENT_CLASSES.get(str(event.get("type")))
    if cls is None:
        return None
    try:
        return cls.from_fields(event)
    except TypeError:  # a required field is missing
        return None
