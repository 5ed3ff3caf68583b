"""Traces the TUI tests replay.

``two_gpu()`` reads the first trace found in ``TRACES_2GPU`` (a recorded 2-GPU NVLink machine); when
none is in the tree yet it falls back to a small built-in synthetic 2-GPU trace so the tests still
run. ``eight_gpu()`` is *derived*: there is no 8-GPU recording, so each 2-GPU snapshot's GPUs are
replicated with new indices 0-7 (a stand-in for an 8-GPU box, good for layout, not for numbers).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path

from zbench.telemetry.snapshot import (
    GpmSnapshot,
    GpuSnapshot,
    HostSnapshot,
    NvLinkSnapshot,
    Snapshot,
    from_dict,
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "traces"
# First match wins: a real recording, then the telemetry package's synthetic fixture.
TRACES_2GPU = ("h200x2-nvlink.jsonl", "h200x2.jsonl", "synthetic-2gpu.jsonl")
SAMPLES = 40  # snapshots replayed into a screen: enough to fill the history lines

GIB = 1024**3
NVLINK_LINK = 26.562e9  # bytes/s per link per direction, as NVML reports on H200 NV18


def _read(path: Path) -> Iterator[Snapshot]:
    try:
        from zbench.telemetry.trace import read_trace
    except ImportError:  # before the trace module exists: one to_dict() object per line
        for line in path.read_text().splitlines():
            data = json.loads(line)
            if "t" in data and "host" in data:
                yield from_dict(Snapshot, data)
        return
    yield from read_trace(path)


def synthetic_2gpu(n: int = SAMPLES) -> list[Snapshot]:
    """A deterministic 2x H200 NVLink trace: GPU 0 busy with a high-util/low-SM phase, GPU 1 copying."""
    snaps = []
    for i in range(n):
        wave = (i * 37 % 100) / 100
        gpus = []
        for g in range(2):
            util = 97.0 if g == 0 else 40 + 50 * wave
            sm = 22.0 + 6 * wave if g == 0 else 35 + 40 * wave
            tx = (120 + 80 * wave) * 1e9 if g == 1 else 3.5e9
            gpus.append(
                GpuSnapshot(
                    index=g,
                    name="NVIDIA H200",
                    uuid=f"GPU-{g:08d}",
                    bus_id=f"00000000:{0x18 + g:02X}:00.0",
                    util_gpu=util,
                    util_mem=30 + 20 * wave,
                    mem_used_bytes=int((40 + 30 * g + 5 * wave) * GIB),
                    mem_total_bytes=143771 * 1024**2,
                    temperature_c=45.0 + 5 * g,
                    power_w=420.0 + 100 * wave,
                    power_limit_w=700.0,
                    sm_clock_mhz=1980.0,
                    mem_clock_mhz=3201.0,
                    pcie_tx_bytes_s=1.2e9,
                    pcie_rx_bytes_s=0.8e9,
                    nvlink=NvLinkSnapshot(
                        active_links=18,
                        link_capacity_bytes_s=NVLINK_LINK,
                        tx_bytes_s=tx,
                        rx_bytes_s=tx * 0.98,
                        tx_pct=100 * tx / (18 * NVLINK_LINK),
                        rx_pct=100 * tx * 0.98 / (18 * NVLINK_LINK),
                    ),
                    gpm=GpmSnapshot(sm_activity=sm, tensor_activity=12.0 + 30 * wave * g),
                )
            )
        host = HostSnapshot(
            cpu_pct=18 + 10 * wave,
            per_core_pct=tuple(float((c * 13 + i * 7) % 100) for c in range(32)),
            load_avg=(3.2, 2.9, 2.5),
            ram_used_bytes=int(61.5 * GIB),
            ram_total_bytes=int(503.5 * GIB),
            swap_used_bytes=0,
            swap_total_bytes=int(8 * GIB),
        )
        snaps.append(
            Snapshot(
                t=1_760_000_000.0 + 0.5 * i,
                seq=i + 1,
                host=host,
                gpus=tuple(gpus),
                driver_version="575.57.08",
            )
        )
    return snaps


def two_gpu(n: int = SAMPLES) -> list[Snapshot]:
    for name in TRACES_2GPU:
        path = FIXTURES / name
        if path.is_file():
            snaps = list(_read(path))
            if snaps:
                return snaps[-n:]
    return synthetic_2gpu(n)


def eight_gpu(n: int = SAMPLES) -> list[Snapshot]:
    """Derived from the 2-GPU trace: GPUs replicated with new indices (see the module docstring)."""
    out = []
    for snap in two_gpu(n):
        gpus = tuple(
            dataclasses.replace(gpu, index=k * len(snap.gpus) + gpu.index)
            for k in range(8 // max(1, len(snap.gpus)))
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
