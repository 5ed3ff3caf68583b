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


def with_processes(snaps: list[Snapshot], now: float) -> list[Snapshot]:
    """The same trace with GPU processes in the last snapshot: a 2-GPU zbench job (runner pid
    41230, its workers in its process group), another user's process and one in a container."""
    from zbench.telemetry.snapshot import GpuProcess

    gib = 2**30
    job = [
        GpuProcess(
            pid=41231 + i,
            name="python",
            used_memory_bytes=(60 + i) * gib,
            sm_util=91.0 - i,
            user="ada",
            cpu_pct=101.0 + i,
            host_mem_bytes=6 * gib,
            started=now - 754,
            pgid=41230,
            command=f"python -m zbench.runners.torch.worker resnet50 --rank {i}",
        )
        for i in range(2)
    ]
    other = GpuProcess(
        pid=5120,
        name="python3",
        used_memory_bytes=9 * gib,
        sm_util=4.0,
        user="bob",
        cpu_pct=12.0,
        host_mem_bytes=2 * gib,
        started=now - 90000,
        pgid=5100,
        command="python3 train.py --config configs/llama-lora.yaml",
    )
    boxed = GpuProcess(
        pid=7007,
        name="tritonserver",
        used_memory_bytes=3 * gib,
        sm_util=0.0,
        user="root",
        cpu_pct=2.0,
        host_mem_bytes=1 * gib,
        started=now - 4000,
        pgid=7007,
        container="4f1c2a9e8b7d",
        command="tritonserver --model-repository=/models",
    )
    last = snaps[-1]
    gpus = tuple(
        dataclasses.replace(g, processes=(job[g.index], other) if g.index == 0 else (job[1], boxed))
        if g.index < 2
        else g
        for g in last.gpus
    )
    return [*snaps[:-1], dataclasses.replace(last, gpus=gpus)]
