"""One running job inside the supervisor: its runner process, its events, its telemetry samples, and
how it ended."""

from __future__ import annotations

import bisect
import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from zbench import paths
from zbench.contract.config import RunConfig
from zbench.contract.protocol import EventTail, read_events
from zbench.jobs.liveness import child_env
from zbench.results.aggregate import Sample, aggregate, compact_sample
from zbench.results.provenance import cpu_model
from zbench.results.store import Store
from zbench.telemetry.snapshot import Snapshot

ENV_RUNNER = "ZBENCH_RUNNER_MODULE"  # a module name, or a .py file (tests use a fake runner)
DEFAULT_RUNNER = "zbench.runners"


def runner_command() -> list[str]:
    target = os.environ.get(ENV_RUNNER, DEFAULT_RUNNER)
    if target.endswith(".py"):
        return [sys.executable, target]
    return [sys.executable, "-m", target]


def config_from_dict(data: dict[str, Any]) -> RunConfig:
    known = {k: v for k, v in data.items() if k in RunConfig.__dataclass_fields__}
    known["extra"] = tuple(known.get("extra") or ())
    return RunConfig(**known)


def command_for(config: dict[str, Any], events_path: Path) -> list[str]:
    """The runner's command line: a benchmark (``zbench.runners``) or a demo (``zbench.demos``,
    a config with ``kind == "demo"``); the one place that tells the kinds of job apart. A multi-node
    job runs its node manager (``jobs.nodes_run``), which starts the runners on every node."""
    if config.get("nodes"):
        from zbench.jobs.nodes import manager_command

        return manager_command(config, str(events_path))
    if config.get("kind") == "demo":
        from zbench.demos.runner import DemoConfig  # standard library and zbench.contract only

        argv = DemoConfig.from_dict(config).to_argv()
        base = [sys.executable, "-m", "zbench.demos"]
    else:
        argv = config_from_dict(config).to_argv()
        base = runner_command()
    return [*base, argv[0], "--events", str(events_path), *argv[1:]]


def signal_name(num: int) -> str:
    try:
        return signal.Signals(num).name
    except ValueError:
        return f"signal {num}"


@dataclass
class Outcome:
    state: str
    reason: str | None


@dataclass
class RunningJob:
    row: dict[str, Any]
    gpu_ids: tuple[int, ...]
    proc: subprocess.Popen[bytes]
    log_path: Path
    events_path: Path
    started: float
    tail: EventTail
    phase: str = "setup"
    step: int | None = None
    total: int | None = None
    samples_per_s: float | None = None
    precision: str | None = None  # as the runner resolved it (the spec may leave it to the preset)
    start_event: dict[str, Any] | None = None
    result_event: dict[str, Any] | None = None
    error_event: dict[str, Any] | None = None
    stop_kind: str | None = None  # "cancelled" | "timeout" | "shutdown"
    kill_at: float | None = None
    gpu_names: tuple[str, ...] = ()
    samples: list[Sample] = field(default_factory=list)
    phase_marks: list[tuple[float, str]] = field(default_factory=list)  # (event time, phase)
    unsaved: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    # Every process the runner started, recorded while it runs: torchrun starts each worker in a
    # session of its own, out of reach of a signal to the runner's process group, and a dead
    # runner's children can no longer be found from it.
    descendants: dict[int, psutil.Process] = field(default_factory=dict)
    reap_deadline: float | None = None

    @property
    def id(self) -> int:
        return int(self.row["id"])

    @property
    def pid(self) -> int:
        return int(self.proc.pid)

    @classmethod
    def launch(cls, row: dict[str, Any], gpu_ids: tuple[int, ...]) -> RunningJob:
        folder = paths.jobs_dir() / str(row["id"])
        folder.mkdir(parents=True, exist_ok=True)
        log_path, events_path = folder / "runner.log", folder / "events.jsonl"
        cmd = command_for(row["config"], events_path)
        env = child_env()
        env["CUDA_VISIBLE_DEVICES"] = ",".join(str(g) for g in gpu_ids)
        env.setdefault("PYTHONUNBUFFERED", "1")
        with open(log_path, "ab") as log:
            log.write(f"$ {' '.join(cmd)}\n".encode())
            log.flush()
            proc = subprocess.Popen(
                cmd,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: signals reach every worker
                env=env,
            )
        return cls(
            row=row,
            gpu_ids=gpu_ids,
            proc=proc,
            log_path=log_path,
            events_path=events_path,
            started=time.time(),
            tail=EventTail(events_path),
        )

    # --- telemetry (called from the sampler thread) ---------------------------------------------

    def on_snapshot(self, snap: Snapshot) -> None:
        self.track_descendants()
        if not self.gpu_names:
            wanted = set(self.gpu_ids)
            self.gpu_names = tuple(g.name for g in snap.gpus if g.index in wanted)
        with self.lock:
            own = {self.pid, *self.descendants}
        sample = compact_sample(snap, self.gpu_ids, self.pid, self.phase, own)
        with self.lock:
            self.samples.append(sample)
            self.unsaved += 1

    def take_unsaved(self) -> list[Sample]:
        with self.lock:
            out = self.samples[len(self.samples) - self.unsaved :] if self.unsaved else []
            self.unsaved = 0
        return out

    def retag_samples(self) -> list[Sample]:
        """All samples, each tagged with the phase the runner was in at its time (by the events'
        own timestamps: the live tag can lag a phase change by one supervisor tick)."""
        marks = sorted(self.phase_marks)
        times = [t for t, _ in marks]
        with self.lock:
            for s in self.samples:
                i = bisect.bisect_right(times, float(s["t"])) - 1
                s["phase"] = marks[i][1] if i >= 0 else "setup"
            self.unsaved = 0
            return list(self.samples)

    # --- events -----------------------------------------------------------------------------

    def read_events(self) -> bool:
        """Apply new events; True when something the job row shows changed."""
        changed = False
        for ev in self.tail.poll():
            kind = ev["type"]
            if kind == "start":
                self.start_event = ev
                resolved = (ev.get("config") or {}).get("precision")
                if isinstance(resolved, str):
                    self.precision = resolved
                    changed = True
            elif kind == "phase" and isinstance(ev.get("phase"), str):
                self.phase = ev["phase"]
                self.phase_marks.append((float(ev["t"]), ev["phase"]))
                changed = True
            elif kind == "progress":
                self.step, self.total = ev.get("step"), ev.get("total")
                if ev.get("samples_per_s") is not None:
                    self.samples_per_s = float(ev["samples_per_s"])
                changed = True
            elif kind == "result":
                self.result_event = ev
                if ev.get("samples_per_s") is not None:
                    self.samples_per_s = float(ev["samples_per_s"])
                changed = True
            elif kind == "error":
                self.error_event = ev
        return changed

    # --- stopping ---------------------------------------------------------------------------

    def track_descendants(self) -> None:
        try:
            children = psutil.Process(self.pid).children(recursive=True)
        except psutil.Error:
            return
        with self.lock:
            for child in children:
                self.descendants.setdefault(child.pid, child)

    def leftovers(self) -> list[psutil.Process]:
        """Recorded descendants still running (psutil checks each one's start time, so a reused
        pid is never taken for one of ours)."""
        with self.lock:
            known = list(self.descendants.values())
        alive = []
        for proc in known:
            with contextlib.suppress(psutil.Error):
                if proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE:
                    alive.append(proc)
        return alive

    def stop(self, kind: str, grace: float) -> None:
        """SIGTERM to the process group and every descendant now, SIGKILL after ``grace``
        seconds."""
        if self.stop_kind is None:
            self.stop_kind = kind
        self.kill_at = time.time() + grace
        self._signal(signal.SIGTERM)

    def escalate(self) -> None:
        if self.kill_at is not None and time.time() >= self.kill_at:
            self._signal(signal.SIGKILL)
            self.kill_at = None

    def reaped(self, grace: float) -> bool:
        """True once no descendant of the exited runner is left; until then SIGTERM them, and
        SIGKILL them after ``grace`` seconds (a job's GPUs are not free while they run). Gives up
        5 s after the SIGKILL (a process stuck in the kernel)."""
        left = self.leftovers()
        now = time.time()
        if not left or (self.reap_deadline is not None and now >= self.reap_deadline + 5.0):
            return True
        if self.reap_deadline is None:
            self.reap_deadline = now + grace
            _signal_all(left, signal.SIGTERM)
        elif now >= self.reap_deadline:
            _signal_all(left, signal.SIGKILL)
        return False

    def _signal(self, sig: int) -> None:
        if self.proc.poll() is None:
            self.track_descendants()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, sig)
        _signal_all(self.leftovers(), sig)

    def outcome(self, rc: int) -> Outcome:
        err = self.error_event or {}
        message = err.get("message") or ""
        if self.stop_kind == "timeout":
            return Outcome("timeout", f"timed out after {self.row['timeout_s']:g} s")
        if self.stop_kind == "cancelled":
            return Outcome("cancelled", "cancelled by the user")
        if self.stop_kind == "shutdown":
            return Outcome("cancelled", "the supervisor was stopped")
        if err.get("kind") == "oom":
            return Outcome("oom", f"out of memory: {message}".rstrip(": "))
        if err.get("node"):  # a multi-node job whose node died (jobs.nodes_run names it)
            return Outcome("failed", message)
        if rc == 0 and self.result_event is not None:
            return Outcome("done", None)
        if rc < 0:
            return Outcome("crashed", f"killed by {signal_name(-rc)}")
        if rc == 0:
            return Outcome("failed", "the runner exited without a result")
        if err.get("kind") in ("config", "unavailable"):
            return Outcome("failed", f"{err['kind']}: {message}")
        detail = f": {err.get('kind')}: {message}" if err else ""
        return Outcome("crashed", f"exited with status {rc}{detail}")

    def run_record(self) -> dict[str, Any]:
        """The ``runs`` row for this job's result: full config and environment."""
        return run_record(
            self.row, self.gpu_ids, self.start_event, self.result_event, self.gpu_names
        )


def _signal_all(procs: list[psutil.Process], sig: int) -> None:
    for proc in procs:
        with contextlib.suppress(psutil.Error):
            proc.send_signal(sig)


def stored_result(store: Store, row: dict[str, Any]) -> int | None:
    """For a job whose supervisor died: store the result its runner already wrote to its events
    file, as the supervisor would have (run, then phase aggregates of the samples saved so far).
    Returns the run id; None when there is no result (or it is already stored)."""
    if row.get("run_id") or not row.get("events_path"):
        return None
    start: dict[str, Any] | None = None
    result: dict[str, Any] | None = None
    for ev in read_events(row["events_path"]):
        if ev["type"] == "start":
            start = ev
        elif ev["type"] == "result":
            result = ev
    if result is None:
        return None
    already = store.runs("job_id = ?", (row["id"],))
    if already:
        return int(already[-1]["id"])
    run_id = store.add_run(run_record(row, tuple(row["gpu_ids"] or ()), start, result))
    samples = store.samples(row["id"])
    if samples:
        store.set_phase_aggregates(row["id"], run_id, aggregate(samples))
    return run_id


def run_record(
    row: dict[str, Any],
    gpu_ids: tuple[int, ...],
    start_event: dict[str, Any] | None,
    result_event: dict[str, Any] | None,
    gpu_names: tuple[str, ...] = (),
) -> dict[str, Any]:
    """The ``runs`` row for a job's result event: full config and environment."""
    result = {k: v for k, v in (result_event or {}).items() if k not in ("v", "type")}
    start = start_event or {}
    config = dict(row["config"])
    resolved = start.get("config") or result.get("config") or {}
    if isinstance(resolved, dict):
        config.update(resolved)
    env = dict(start.get("env") or start.get("environment") or {})
    if not env.get("gpu_names"):
        env["gpu_names"] = list(gpu_names)
    env["host"] = socket.gethostname()
    env.setdefault("cpu_model", cpu_model())
    env["gpu_ids"] = list(gpu_ids)
    env["cuda_visible_devices"] = ",".join(str(g) for g in gpu_ids)
    names = env.get("gpu_names") or []
    gpus = len(gpu_ids) if gpu_ids else 0
    return {
        "job_id": row["id"],
        "created": time.time(),
        "workload": config.get("workload", row["workload"]),
        "framework": config.get("framework", row["framework"]),
        "mode": config.get("mode", row["mode"]),
        "precision": result.get("precision") or config.get("precision"),
        "batch_size": result.get("batch_size") or config.get("batch_size"),
        "gpus": int(result.get("gpus") or gpus) if config.get("device") != "cpu" else 0,
        "gpu_name": names[0] if names else ("CPU" if not gpus else None),
        "samples_per_s": result.get("samples_per_s"),
        "config": config,
        "env": env,
        "result": result,
    }
