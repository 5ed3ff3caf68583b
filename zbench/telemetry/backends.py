"""Where snapshots come from: NVML (with a driver), host-only (without), or a recorded trace.

``open_backend`` picks one. Every backend has ``sample(trees=()) -> Snapshot``, ``close()`` and
``notice`` (one line saying why the view is host-only or replayed; ``None`` when live on NVML).
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence

from zbench.gpuids import check_offered
from zbench.telemetry.host import HostReader
from zbench.telemetry.sampler import Backend
from zbench.telemetry.snapshot import Snapshot


class HostOnlyBackend:
    """Host CPU/RAM and process trees only, for machines without a usable NVIDIA driver."""

    def __init__(self, notice: str) -> None:
        self.notice: str | None = notice
        self._host = HostReader()
        self._seq = 0

    def sample(self, trees: Sequence[int] = ()) -> Snapshot:
        self._seq += 1
        return Snapshot(
            t=time.time(),
            seq=self._seq,
            host=self._host.read(),
            trees=self._host.read_trees(trees),
            notice=self.notice,
        )

    def close(self) -> None:
        pass


def open_backend(
    replay: str | os.PathLike[str] | None = None, gpus: Sequence[int] | None = None
) -> Backend:
    """A replay backend for ``replay``; else NVML when a driver answers; else host-only.

    Raises ``FileNotFoundError``/``ValueError`` for a bad trace and ``gpuids.GpuRequestError`` (a
    ``ValueError``) for a GPU index that does not exist (callers turn these into one-line errors,
    exit 2).
    """
    if replay is not None:
        from zbench.telemetry.trace import ReplayBackend

        return ReplayBackend(replay, gpus=gpus)
    try:
        import pynvml
    except ImportError:
        return _host_only("nvidia-ml-py is not installed", gpus)
    from zbench.telemetry.nvml import NvmlBackend, NvmlUnavailable

    try:
        return NvmlBackend(pynvml, gpus=gpus)
    except NvmlUnavailable as exc:
        return _host_only(str(exc), gpus)


def _host_only(reason: str, gpus: Sequence[int] | None) -> HostOnlyBackend:
    check_offered(gpus, [], why=reason)  # GPUs asked for by index: an error, not a host-only view
    return HostOnlyBackend(f"{reason}: host-only mode")
