"""The supervisor's telemetry: one sampler for every job it runs.

It uses ``zbench.telemetry`` (NVML + psutil, or a recorded trace when ``ZBENCH_TELEMETRY_REPLAY``
names one). Where that package cannot be opened, a small psutil-only sampler with the same interface
keeps jobs' CPU and memory measured, and GPU metrics stay ``NA``.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import psutil

from zbench.telemetry.sampler import Sampler
from zbench.telemetry.snapshot import NA, HostSnapshot, ProcessTreeSnapshot, Snapshot

log = logging.getLogger(__name__)
ENV_REPLAY = "ZBENCH_TELEMETRY_REPLAY"


class SamplerLike(Protocol):
    def start(self) -> Any: ...
    def stop(self) -> Any: ...
    def close(self) -> Any: ...
    def subscribe(self, callback: Callable[[Snapshot], None]) -> Any: ...
    def watch_tree(self, pid: int) -> Any: ...
    def unwatch_tree(self, pid: int) -> Any: ...


def open_sampler(interval: float) -> SamplerLike:
    replay = os.environ.get(ENV_REPLAY)
    try:
        from zbench.telemetry.backends import open_backend

        backend = open_backend(replay=Path(replay) if replay else None)
        if getattr(backend, "notice", None):
            log.info("telemetry: %s", backend.notice)
        sampler: SamplerLike = JobSampler(backend, interval=interval)
        return sampler
    except Exception as exc:
        log.warning("telemetry unavailable (%s): sampling CPU and memory only", exc)
        return HostSampler(interval)


class JobSampler(Sampler):
    """The telemetry sampler, owning its backend: ``close()`` stops sampling and closes the backend
    (NVML shut down, GPM buffers freed, its PCIe poller thread stopped)."""

    def close(self) -> None:
        self.stop()
        self.backend.close()


class HostSampler:
    """psutil-only sampling: host CPU/RAM and watched process trees, no GPUs."""

    def __init__(self, interval: float) -> None:
        self.interval = interval
        self._subs: list[Callable[[Snapshot], None]] = []
        self._trees: dict[int, dict[int, psutil.Process]] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="host-sampler", daemon=True)
        self._seq = 0

    def start(self) -> None:
        psutil.cpu_percent(None)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def close(self) -> None:
        self.stop()

    def subscribe(self, callback: Callable[[Snapshot], None]) -> None:
        self._subs.append(callback)

    def watch_tree(self, pid: int) -> None:
        with self._lock:
            self._trees[pid] = {}

    def unwatch_tree(self, pid: int) -> None:
        with self._lock:
            self._trees.pop(pid, None)

    def _tree(self, pid: int, known: dict[int, psutil.Process]) -> ProcessTreeSnapshot:
        try:
            root = psutil.Process(pid)
            procs = [root, *root.children(recursive=True)]
        except psutil.Error:
            return ProcessTreeSnapshot(pid=pid)
        cpu = rss = 0.0
        measured = False  # a process's first cpu_percent reading is a baseline, not a value
        alive: dict[int, psutil.Process] = {}
        for p in procs:
            proc = known.get(p.pid, p)  # keep the object: cpu_percent needs its last reading
            try:
                with proc.oneshot():
                    if proc.status() == psutil.STATUS_ZOMBIE:
                        continue
                    cpu += proc.cpu_percent(None)
                    rss += proc.memory_info().rss
            except psutil.Error:
                continue
            measured = measured or p.pid in known
            alive[p.pid] = proc
        known.clear()
        known.update(alive)
        if not alive:
            return ProcessTreeSnapshot(pid=pid)
        return ProcessTreeSnapshot(
            pid=pid, cpu_pct=cpu if measured else NA, rss_bytes=int(rss), n_procs=len(alive)
        )

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            with self._lock:
                trees = tuple(self._tree(pid, known) for pid, known in self._trees.items())
            vm = psutil.virtual_memory()
            self._seq += 1
            snap = Snapshot(
                t=time.time(),
                seq=self._seq,
                host=HostSnapshot(
                    cpu_pct=psutil.cpu_percent(None),
                    ram_used_bytes=int(vm.used),
                    ram_total_bytes=int(vm.total),
                ),
                notice="host-only sampling",
                trees=trees,
            )
            for cb in list(self._subs):
                try:
                    cb(snap)
                except Exception:  # a failing subscriber must not stop sampling
                    log.exception("telemetry subscriber failed")
