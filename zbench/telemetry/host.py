"""Host telemetry through psutil: CPU (total and per core), load, RAM, swap, and process trees.

``psutil.cpu_percent`` measures between two calls, so a fresh reader primes every counter once on
construction; the first real reading then covers the time since construction rather than returning a
meaningless 0.0. A reading that comes sooner than ``MIN_CPU_WINDOW_S`` after the one before (a
sampler's first sample, taken as the reader is made) has no CPU figure: the kernel counts CPU time
in ticks of 10 ms, so a window of a few milliseconds reads 0% or 100%, not the load.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable

import psutil

from zbench.settings import MIN_INTERVAL
from zbench.telemetry.snapshot import NA, HostSnapshot, Metric, NAType, ProcessTreeSnapshot

# Three ticks at least, and below the shortest sampling interval with room for the timer's jitter:
# at exactly that interval (0.05 s) a reading often came 49.9 ms after the one before and had no
# figure.
MIN_CPU_WINDOW_S = 0.6 * MIN_INTERVAL


class HostReader:
    """Reads host figures. Keeps ``psutil.Process`` objects between readings, because a process's
    CPU% is measured from one reading of the same object to the next."""

    def __init__(self) -> None:
        psutil.cpu_percent(interval=None)
        psutil.cpu_percent(interval=None, percpu=True)
        self._cpu_since = time.monotonic()
        self._procs: dict[int, psutil.Process] = {}

    def read(self) -> HostSnapshot:
        cpu: Metric = float(psutil.cpu_percent(interval=None))
        cores = tuple(float(c) for c in psutil.cpu_percent(interval=None, percpu=True))
        now = time.monotonic()
        if now - self._cpu_since < MIN_CPU_WINDOW_S:
            cpu, cores = NA, ()
        self._cpu_since = now
        vm = psutil.virtual_memory()
        sw = psutil.swap_memory()
        try:
            load: tuple[float, ...] | NAType = tuple(os.getloadavg())
        except (OSError, AttributeError):
            load = NA
        return HostSnapshot(
            cpu_pct=cpu,
            per_core_pct=cores,
            load_avg=load,
            ram_used_bytes=int(vm.total - vm.available),
            ram_total_bytes=int(vm.total),
            swap_used_bytes=int(sw.used),
            swap_total_bytes=int(sw.total),
        )

    def read_trees(self, pids: Iterable[int]) -> tuple[ProcessTreeSnapshot, ...]:
        seen: set[int] = set()
        out = []
        for pid in pids:
            out.append(self._tree(pid, seen))
        # Forget processes that left every watched tree, so pids reused later start fresh.
        for pid in list(self._procs):
            if pid not in seen:
                del self._procs[pid]
        return tuple(out)

    def _process(self, pid: int) -> psutil.Process:
        proc = self._procs.get(pid)
        if proc is None:
            proc = psutil.Process(pid)
            proc.cpu_percent(interval=None)  # prime: its first reading is since now
            self._procs[pid] = proc
        return proc

    def _tree(self, pid: int, seen: set[int]) -> ProcessTreeSnapshot:
        try:
            root = self._process(pid)
            members = [root, *root.children(recursive=True)]
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            return ProcessTreeSnapshot(pid=pid)
        cpu = 0.0
        rss = 0
        n = 0
        for member in members:
            try:
                proc = self._process(member.pid)
                with proc.oneshot():
                    cpu += proc.cpu_percent(interval=None)
                    rss += proc.memory_info().rss
                n += 1
                seen.add(member.pid)
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue
        if n == 0:
            return ProcessTreeSnapshot(pid=pid)
        cpu_pct: Metric = cpu
        return ProcessTreeSnapshot(pid=pid, cpu_pct=cpu_pct, rss_bytes=rss, n_procs=n)
