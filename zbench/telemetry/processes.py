"""Who the GPU processes are: user, command line, CPU, host memory, start time, container (psutil).

NVML lists the processes that hold a GPU context (pid, GPU memory, SM %); this module adds what the
host knows about them. Figures that never change for a process (user, command, start time, container,
process group) are read once per (pid, start time); CPU % and RSS are read on every sample, CPU % from
one reading of the same ``psutil.Process`` to the next, like ``host.HostReader``.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import psutil

from zbench.telemetry.snapshot import NA, GpuProcess, Snapshot

# Docker, containerd, CRI-O and podman name the container in the cgroup path; Kubernetes pods too.
_CONTAINER_RE = re.compile(
    r"(?:docker[-/]|cri-containerd-|crio-|libpod-|containerd/)([0-9a-f]{12,64})"
)


def container_of(cgroup_text: str) -> str | None:
    """The (short) container id named by a /proc/PID/cgroup file's text, or None on the host."""
    for line in cgroup_text.splitlines():
        m = _CONTAINER_RE.search(line.rsplit(":", 1)[-1])
        if m:
            return m.group(1)[:12]
    return None


def _read_container(pid: int) -> str | None:
    try:
        return container_of(Path(f"/proc/{pid}/cgroup").read_text())
    except OSError:
        return None


@dataclass(frozen=True)
class _Static:
    user: str
    command: str
    started: float
    pgid: int | None
    container: str | None


class ProcessReader:
    """Adds host figures to the GPU processes of a snapshot. Used from the sampler thread only."""

    def __init__(self) -> None:
        self._procs: dict[int, psutil.Process] = {}
        self._static: dict[int, _Static] = {}

    def _read(self, pid: int) -> tuple[_Static, float, int] | None:
        proc = self._procs.get(pid)
        try:
            if proc is None:
                proc = psutil.Process(pid)
                proc.cpu_percent(interval=None)  # prime: its first reading covers since now
                self._procs[pid] = proc
            with proc.oneshot():
                static = self._static.get(pid)
                if static is None or static.started != proc.create_time():
                    static = self._static_of(proc)
                    self._static[pid] = static
                cpu = float(proc.cpu_percent(interval=None))
                rss = int(proc.memory_info().rss)
        except (psutil.NoSuchProcess, psutil.ZombieProcess):
            self._procs.pop(pid, None)
            return None
        except (psutil.AccessDenied, OSError):
            return None
        return static, cpu, rss

    @staticmethod
    def _static_of(proc: psutil.Process) -> _Static:
        def attempt(fn: object, default: object) -> object:
            try:
                return fn()  # type: ignore[operator]
            except (psutil.Error, OSError):
                return default

        cmd = attempt(proc.cmdline, [])
        command = " ".join(cmd) if cmd else str(attempt(proc.name, "?"))  # type: ignore[arg-type]
        try:
            pgid: int | None = os.getpgid(proc.pid)
        except OSError:
            pgid = None
        return _Static(
            user=str(attempt(proc.username, "")),  # unknown: the tables say n/a
            command=command,
            started=float(proc.create_time()),
            pgid=pgid,
            container=_read_container(proc.pid),
        )

    def enrich(self, processes: Iterable[GpuProcess]) -> dict[int, GpuProcess]:
        """pid -> the process with its host figures (where the host lets us read them)."""
        out: dict[int, GpuProcess] = {}
        for p in processes:
            if p.pid in out:
                continue
            got = self._read(p.pid)
            if got is None:
                out[p.pid] = p
                continue
            static, cpu, rss = got
            out[p.pid] = dataclasses.replace(
                p,
                user=static.user,
                command=static.command,
                cpu_pct=cpu,
                host_mem_bytes=rss,
                started=static.started,
                pgid=NA if static.pgid is None else static.pgid,
                container=static.container,
            )
        for pid in list(self._procs):  # forget processes that left every GPU
            if pid not in out:
                del self._procs[pid]
                self._static.pop(pid, None)
        return out

    def enrich_snapshot(self, snap: Snapshot) -> Snapshot:
        everyone = [p for g in snap.gpus for p in g.processes]
        if not everyone and not self._procs:
            return snap
        known = self.enrich(everyone)
        gpus = tuple(
            dataclasses.replace(g, processes=tuple(known[p.pid] for p in g.processes))
            if g.processes
            else g
            for g in snap.gpus
        )
        return dataclasses.replace(snap, gpus=gpus)


def job_of(proc: GpuProcess, runners: dict[int, int]) -> int | None:
    """The zbench job a GPU process belongs to. ``runners`` maps a running job's runner pid to its
    id; the runner leads its own process group, so its torchrun workers share that group id."""
    if proc.pid in runners:
        return runners[proc.pid]
    if isinstance(proc.pgid, int):
        return runners.get(proc.pgid)
    return None
