"""The NVML backend: every GPU (or the chosen ones) plus the host, one ``Snapshot`` per ``sample()``.

One backend owns NVML in a process (design.md: one sampler owns NVML). ``NvmlUnavailable`` means there
is no usable driver; ``open_backend`` then falls back to host-only mode with its message as notice.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Sequence
from types import ModuleType

from zbench.gpuids import check_offered
from zbench.telemetry.host import HostReader
from zbench.telemetry.nvml_device import DeviceReader
from zbench.telemetry.nvml_util import lost_codes, text
from zbench.telemetry.pcie import PciePoller
from zbench.telemetry.processes import ProcessReader
from zbench.telemetry.snapshot import NA, NAType, Snapshot


class NvmlUnavailable(Exception):
    """No NVIDIA driver, library, or GPU."""


class NvmlBackend:
    """The sampler's NVML backend: every chosen GPU plus the host, one Snapshot per ``sample()``."""

    def __init__(
        self,
        nv: ModuleType,
        gpus: Sequence[int] | None = None,
        host: HostReader | None = None,
    ) -> None:
        self.nv = nv
        try:
            nv.nvmlInit()
        except nv.NVMLError as exc:
            raise NvmlUnavailable(f"no NVIDIA driver ({exc})") from exc
        except OSError as exc:  # a broken libnvidia-ml install
            raise NvmlUnavailable(f"no NVIDIA driver ({exc})") from exc
        try:
            count = int(nv.nvmlDeviceGetCount())
            if count == 0:
                raise NvmlUnavailable("no NVIDIA GPU found")
            indices = list(range(count)) if gpus is None else list(gpus)
            check_offered(indices, list(range(count)))
            lost = lost_codes(nv)
            self.devices = [DeviceReader(nv, i, lost) for i in indices]
            self.driver_version: str | NAType = _safe_text(nv, nv.nvmlSystemGetDriverVersion)
        except BaseException:
            nv.nvmlShutdown()
            raise
        self.host = host or HostReader()
        self.notice: str | None = None
        self._seq = 0
        self._pcie: PciePoller | None = None  # started by the first sample
        self._procs = ProcessReader()

    def sample(self, trees: Sequence[int] = ()) -> Snapshot:
        if self._pcie is None:
            self._pcie = PciePoller([d.pcie for d in self.devices if d.pcie is not None])
        return self._sample(trees)

    def _sample(self, trees: Sequence[int]) -> Snapshot:
        self._seq += 1
        gpus = tuple(d.read() for d in self.devices)
        lost = [g.index for g in gpus if g.lost]
        notice = self.notice
        if lost:
            notice = "GPU " + ", ".join(map(str, lost)) + " lost (not answering NVML)"
        snap = Snapshot(
            t=time.time(),
            seq=self._seq,
            host=self.host.read(),
            gpus=gpus,
            driver_version=self.driver_version,
            notice=notice,
            trees=self.host.read_trees(trees),
        )
        return self._procs.enrich_snapshot(snap)

    def close(self) -> None:
        if self._pcie is not None:
            self._pcie.stop()
        for d in self.devices:
            d.close()
        with contextlib.suppress(self.nv.NVMLError):
            self.nv.nvmlShutdown()


def _safe_text(nv: ModuleType, fn: object) -> str | NAType:
    try:
        return text(fn())  # type: ignore[operator]
    except nv.NVMLError:
        return NA
