"""One running job inside the supervisor: its runner process, its events, its telemetry samples, and
how it ended."""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from zbench import paths
from zbench.contract import kinds
from zbench.contract.events import Error, Event, PhaseEvent, Progress
from zbench.contract.protocol import ENV_JOB_TMP
from zbench.jobs import records
from zbench.jobs.events import EventStream, fresh_file
from zbench.jobs.liveness import child_env, tail_lines
from zbench.jobs.states import REFUSED_PREFIX, JobState
from zbench.results.aggregate import Sample, compact_sample
from zbench.telemetry.snapshot import Snapshot


def runner_command() -> list[str]:
    """The benchmark runner's ``python -m ...`` (a node agent starts it on its node)."""
    return kinds.KINDS[kinds.BENCHMARK].runner_command()


def command_for(kind: str, config: dict[str, Any], events_path: Path) -> list[str]:
    """The job's command line, from its kind's row of ``contract.kinds`` (the runner module and
    the config class whose ``to_argv`` gives the options)."""
    return kinds.get(kind).command_line(config, str(events_path))


def signal_name(num: int) -> str:
    """A signal's name (``SIGTERM``) for a reason line, or ``signal N`` when it has none."""
    try:
        return signal.Signals(num).name
    except ValueError:
        return f"signal {num}"


@dataclass
class Outcome:
    """How a job ended: its final state and the reason, if any."""

    state: JobState
    reason: str | None


# How a runner's log says the host (not the GPU) ran out of memory: Python's MemoryError, PyTorch's
# CPU allocator, TensorFlow's CPU allocator.
HOST_OOM_MARKS = (
    "MemoryError",
    "DefaultCPUAllocator: can't allocate memory",
    "OOM when allocating",
)
BATCH_HINT = "try a smaller --batch-size"


@dataclass
class RunningJob:
    """A job the supervisor runs: its process, log and events, live progress, and how it stops."""

    row: dict[str, Any]
    gpu_ids: tuple[int, ...]
    proc: subprocess.Popen[bytes]
    log_path: Path
    events_path: Path
    started: float  # time.monotonic() at launch: for its timeout, never shown
    tail: EventStream
    log_reader: Any = None  # the log, opened at launch: still readable if its folder is deleted
    phase: str = "setup"
    step: int | None = None
    total: int | None = None
    samples_per_s: float | None = None
    precision: str | None = None  # as the runner resolved it (the spec may leave it to the preset)
    start_event: Event | None = None
    result_event: Event | None = None
    result_events: list[Event] = field(default_factory=list)  # a probe writes several
    error_event: Error | None = None
    stop_kind: str | None = None  # "cancelled" | "timeout" | "stalled" | "shutdown"
    result_before_stop: bool = False  # its result was read before it was stopped
    # Every duration here (the timeout, the stall watchdog, the grace before SIGKILL) is measured
    # on the monotonic clock: a step of the wall clock (NTP, a user's `date -s`) must neither
    # kill a job nor let a hung one run on.
    kill_at: float | None = None  # monotonic
    gpu_names: tuple[str, ...] = ()
    samples: list[Sample] = field(default_factory=list)
    phase_marks: list[tuple[float, str]] = field(default_factory=list)  # (event time, phase)
    unsaved: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    # Every process the runner started, recorded while it runs: torchrun starts each worker in a
    # session of its own, out of reach of a signal to the runner's process group, and a dead
    # runner's children can no longer be found from it.
    descendants: dict[int, psutil.Process] = field(default_factory=dict)
    reap_deadline: float | None = None  # monotonic
    last_event: float = 0.0  # monotonic: when the runner last wrote an event (the stall watchdog)
    stalled_after: float | None = None  # the idle time after which the watchdog stopped it
    cancel_grace: float | None = None  # the --grace of the last `zbench cancel` acted on
    recorded: bool = False  # its pid and paths are in the store
    dirty: bool = False  # progress not yet written to the store
    run_id: int | None = None  # once its run is stored (finishing is retried if the store fails)

    @property
    def id(self) -> int:
        return int(self.row["id"])

    @property
    def pid(self) -> int:
        return int(self.proc.pid)

    @classmethod
    def launch(
        cls, row: dict[str, Any], gpu_ids: tuple[int, ...], store_id: str | None = None
    ) -> RunningJob:
        """Start the runner for ``row`` with a fresh events file and log in a folder of this
        start's own (under the database's ``store_id``: job ids belong to one database)."""
        folder = paths.new_job_dir(store_id, int(row["id"]))
        log_path, events_path = folder / "runner.log", folder / "events.jsonl"
        scratch = paths.make_dir(folder / "tmp")
        fresh_file(events_path)
        tail = EventStream(events_path)
        cmd = command_for(row["kind"], row["config"], events_path)
        env = child_env()
        env[ENV_JOB_TMP] = str(scratch)
        env["CUDA_VISIBLE_DEVICES"] = ",".join(str(g) for g in gpu_ids)
        env.setdefault("PYTHONUNBUFFERED", "1")
        fresh_file(log_path)
        with open(log_path, "ab") as log:
            log.write(f"$ {shlex.join(cmd)}\n".encode())
            log.flush()
            proc = subprocess.Popen(
                cmd,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: signals reach every worker
                env=env,
            )
        now = time.monotonic()
        return cls(
            row=row,
            gpu_ids=gpu_ids,
            proc=proc,
            log_path=log_path,
            events_path=events_path,
            started=now,
            tail=tail,
            log_reader=open(log_path, "rb"),  # closed by close()
            last_event=now,
        )

    def remove_scratch(self) -> None:
        """Remove the runner's scratch folder (``ENV_JOB_TMP``) once it has ended: what a killed
        launcher could not clean up itself."""
        shutil.rmtree(self.events_path.parent / "tmp", ignore_errors=True)

    def close(self) -> None:
        self.tail.close()
        if self.log_reader is not None:
            self.log_reader.close()

    def log_tail(self, lines: int = 40) -> list[str]:
        """The last lines of the runner's log, read through the handle opened at launch."""
        if self.log_reader is None or self.log_reader.closed:
            return tail_lines(self.log_path, lines)
        fh = self.log_reader
        fh.seek(0, os.SEEK_END)
        fh.seek(max(0, fh.tell() - 64 * 1024))
        return list(fh.read().decode("utf-8", errors="replace").splitlines()[-lines:])

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

    def requeue_unsaved(self, pending: list[Sample]) -> None:
        """Samples taken by :meth:`take_unsaved` that could not be saved: saved next time."""
        with self.lock:
            self.unsaved += len(pending)

    def retag_samples(self) -> list[Sample]:
        """All samples, each tagged with the phase the runner was in at its time."""
        with self.lock:
            self.unsaved = 0
            return records.retag(list(self.samples), sorted(self.phase_marks))

    # --- events -----------------------------------------------------------------------------

    def read_events(self) -> bool:
        """Apply new events; True when something the job row shows changed."""
        changed = False
        for ev in self.tail.poll():
            self.last_event = time.monotonic()
            if isinstance(ev, PhaseEvent):
                self.phase = ev.phase
                self.phase_marks.append((ev.t, ev.phase))
                changed = True
            elif isinstance(ev, Progress):
                self.step, self.total = ev.step, ev.total
                if ev.samples_per_s is not None:
                    self.samples_per_s = float(ev.samples_per_s)
                changed = True
            elif isinstance(ev, Error):
                self.error_event = ev
            elif ev.type == "start":  # a benchmark's Start, or another kind's (Unlisted)
                self.start_event = ev
                resolved = (ev.get("config") or {}).get("precision")
                if isinstance(resolved, str):
                    self.precision = resolved
                    changed = True
            elif ev.type == "result":
                self.result_event = ev
                self.result_events.append(ev)
                if ev.get("samples_per_s") is not None:
                    self.samples_per_s = float(ev.get("samples_per_s"))
                changed = True
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
            self.result_before_stop = self.result_event is not None
        self.kill_at = time.monotonic() + grace
        self._signal(signal.SIGTERM)

    def hurry(self, grace: float) -> None:
        """A stopping job's SIGKILL comes no later than ``grace`` seconds from now (a second
        `zbench cancel` with a shorter ``--grace``)."""
        deadline = time.monotonic() + grace
        if self.kill_at is not None and deadline < self.kill_at:
            self.kill_at = deadline

    def escalate(self) -> None:
        if self.kill_at is not None and time.monotonic() >= self.kill_at:
            self._signal(signal.SIGKILL)
            self.kill_at = None

    def reaped(self, grace: float) -> bool:
        """True once no descendant of the exited runner is left; until then SIGTERM them, and
        SIGKILL them after ``grace`` seconds (a job's GPUs are not free while they run). Gives up
        5 s after the SIGKILL (a process stuck in the kernel)."""
        left = self.leftovers()
        now = time.monotonic()
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
        """How the job ended; a stopped job that had measured whole windows says they are kept
        (the runner's result holds them, flagged "stopped"), and one stopped after it wrote its
        result (a runner hung on its way out) says that result is stored."""
        out = self._outcome(rc)
        planned = self.result_event.get("repeats_planned") if self.result_event else None
        if self.stop_kind is not None and planned:
            kept = self.result_event.get("repeats") if self.result_event else None
            return Outcome(
                out.state, f"{out.reason}; {kept} of its {planned} measured windows kept"
            )
        if self.stop_kind is not None and self.result_before_stop:
            return Outcome(out.state, f"{out.reason}; {records.RESULT_STORED}")
        return out

    def _outcome(self, rc: int) -> Outcome:
        err = self.error_event
        message = err.message if err else ""
        if self.stop_kind == "timeout":
            return Outcome(JobState.TIMEOUT, f"timed out after {self.row['timeout_s']:g} s")
        if self.stop_kind == "stalled":
            return Outcome(
                JobState.TIMEOUT,
                f"stalled: no event from the runner for {self.stalled_after or 0:.0f} s "
                "(stuck on I/O or a deadlock?)",
            )
        if self.stop_kind == "cancelled":
            return Outcome(JobState.CANCELLED, "cancelled by the user")
        if self.stop_kind == "shutdown":
            return Outcome(JobState.CANCELLED, "the supervisor was stopped")
        if err and err.kind == "oom":
            return Outcome(JobState.OOM, f"out of memory: {message}".rstrip(": "))
        if err and err.get("node"):  # a multi-node job whose node died (jobs.nodes_run names it)
            return Outcome(JobState.FAILED, message)
        if rc == 0 and self.result_event is not None:
            return Outcome(JobState.DONE, None)
        if rc == -signal.SIGKILL:
            return Outcome(
                JobState.CRASHED,
                "killed by SIGKILL (not by zbench): unless someone killed it, host memory was "
                "likely exhausted (the kernel's OOM killer; see `dmesg`)",
            )
        if rc < 0:
            return Outcome(JobState.CRASHED, f"killed by {signal_name(-rc)}")
        if rc == 0:
            return Outcome(JobState.FAILED, "the runner exited without a result")
        if err and err.kind == "config":
            return Outcome(JobState.FAILED, f"{REFUSED_PREFIX}{message}")
        if err and err.kind == "unavailable":
            return Outcome(JobState.FAILED, f"unavailable: {message}")
        if self._host_oom(message):
            return Outcome(JobState.OOM, f"out of host memory: {BATCH_HINT}")
        detail = f": {err.kind}: {message}" if err else ""
        return Outcome(JobState.CRASHED, f"exited with status {rc}{detail}")

    def _host_oom(self, message: str) -> bool:
        """A CPU allocation failure: in the error event or the log's last lines."""
        text = "\n".join([message, *self.log_tail(20)])
        return any(mark in text for mark in HOST_OOM_MARKS)

    def run_record(self, peaks: dict[int, dict[str, Any]] | None = None) -> dict[str, Any]:
        """The ``runs`` row for this job's result, as its kind builds it (``records.build_run``):
        full config and environment; a probe's figures beside ``peaks`` (per GPU, from the
        supervisor's telemetry) and the NVLink traffic its samples saw."""
        with self.lock:
            samples = list(self.samples)
        start = self.start_event.as_record() if self.start_event else None
        results = [ev.as_record() for ev in self.result_events]
        measured = records.Measured(
            self.row, self.gpu_ids, start, results, samples, peaks or {}, self.gpu_names
        )
        return records.build_run(measured)


def _signal_all(procs: list[psutil.Process], sig: int) -> None:
    for proc in procs:
        with contextlib.suppress(psutil.Error):
            proc.send_signal(sig)
