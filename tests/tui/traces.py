"""Traces the TUI tests replay.

``two_gpu()`` reads the first trace found in ``tests/fixtures/traces``: a recording of a 2-GPU NVLink
machine (``*x2-*.jsonl.gz``, written by scripts/record_traces.py) when one is there, else the
synthetic 2-GPU fixture. ``eight_gpu()`` is *derived*: there is no 8-GPU recording, so each 2-GPU
snapshot's GPUs are replicated with new indices 0-7 (a stand-in for an 8-GPU box: right for layout,
not for numbers).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from zbench.telemetry.snapshot import GpuSnapshot, Snapshot
from zbench.telemetry.trace import read_trace

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "traces"
SAMPLES = 40  # snapshots replayed into a screen: enough to fill the history lines


def trace_2gpu() -> Path:
    recorded = sorted(FIXTURES.glob("*x2-*.jsonl*"))
    return recorded[0] if recorded else FIXTURES / "synthetic.jsonl"


def two_gpu(n: int = SAMPLES) -> list[Snapshot]:
    """The last ``n`` snapshots of the 2-GPU trace (the end of a recording is its busiest part)."""
    return list(read_trace(trace_2gpu()))[-n:]


def eight_gpu(n: int = SAMPLES) -> list[Snapshot]:
    """Derived from the 2-GPU trace: GPUs replicated with new indices (see the module docstring)."""
    out = []
    for snap in two_gpu(n):
        copies = 8 // max(1, len(snap.gpus))
        gpus = tuple(
            dataclasses.replace(gpu, index=k * len(snap.gpus) + gpu.index)
            for k in range(copies)
            for gpu in snap.gpus
        )
        out.append(dataclasses.replace(snap, gpus=gpus))
    return out


def with_lost_gpu(snaps: list[Snapshot], index: int) -> list[Snapshot]:
    """The same trace with one GPU marked lost in the last snapshot."""
    last = snaps[-1]
    gpus = tuple(
        GpuSnapshot(index=g.index, name=g.name, lost=True) if g.index == index else g
        for g in last.gpus
    )
    return [*snaps[:-1], dataclasses.replace(last, gpus=gpus)]
