"""The supervisor's telemetry: telemetry's one sampler, owned for every job the process runs.

It samples through ``zbench.telemetry`` (NVML + psutil, or a recorded trace when
``ZBENCH_TELEMETRY_REPLAY`` names one). Where no GPU backend can be opened, the same sampler runs
on telemetry's host-only backend: jobs' CPU and memory stay measured (host RAM as telemetry
defines it, total minus available) and GPU metrics are ``NA``.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from zbench.telemetry.backends import HostOnlyBackend, open_backend
from zbench.telemetry.sampler import Backend, Sampler

log = logging.getLogger(__name__)
ENV_REPLAY = "ZBENCH_TELEMETRY_REPLAY"


class JobSampler(Sampler):
    """The telemetry sampler, owning its backend: ``close()`` stops sampling and closes the backend
    (NVML shut down, GPM buffers freed, its PCIe poller thread stopped)."""

    def close(self) -> None:
        self.stop()
        self.backend.close()


def host_sampler(interval: float, notice: str = "host-only sampling") -> JobSampler:
    """A sampler of the host and watched process trees only (no GPUs)."""
    return JobSampler(HostOnlyBackend(notice), interval=interval)


def open_sampler(interval: float) -> JobSampler:
    """The sampler a supervisor (or a node of a multi-node job) uses for all its jobs."""
    replay = os.environ.get(ENV_REPLAY)
    try:
        backend: Backend = open_backend(replay=Path(replay) if replay else None)
    except Exception as exc:  # a bad trace or a failing driver: measure the host at least
        log.warning("telemetry unavailable (%s): sampling CPU and memory only", exc)
        return host_sampler(interval, f"telemetry unavailable ({exc}): host-only sampling")
    if getattr(backend, "notice", None):
        log.info("telemetry: %s", backend.notice)
    return JobSampler(backend, interval=interval)
