"""The detached job supervisor: ``python -m zbench.jobs.supervisor --db PATH``.

Started by :func:`zbench.jobs.api.submit` in its own session with its output in a log file, so a
closed terminal (SIGHUP), an SSH drop or a killed ``zbench`` leaves it running. It takes queued jobs
from the store, gives each the GPUs it needs (two jobs never share a GPU unless asked; CPU jobs run
one at a time), starts the runner in its own process group, follows its events, samples telemetry for
its GPUs and process tree, and records how each job ended. It exits once nothing is queued or running.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import signal
import socket
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

from zbench import paths
from zbench.contract import kinds
from zbench.errors import ZbenchError
from zbench.jobs import liveness, records
from zbench.jobs.gpus import allocate, visible_gpus
from zbench.jobs.guard import StoreGuard
from zbench.jobs.runjob import RunningJob
from zbench.jobs.sampling import JobSampler, open_sampler
from zbench.jobs.states import JobState
from zbench.jobs.timings import env_seconds
from zbench.results.aggregate import aggregate
from zbench.store import Store, StoreBroken, StoreError, abandoned_connections
from zbench.telemetry.snapshot import Snapshot
from zbench.textfit import counted, gpu_list

log = logging.getLogger("zbench.supervisor")

TICK_S = 0.2
HEARTBEAT_S = 1.0
FLUSH_S = 5.0
TIMEOUT_GRACE_S = 10.0
IDLE_EXIT_S = env_seconds("ZBENCH_SUPERVISOR_IDLE_S")
SAMPLE_INTERVAL_S = env_seconds("ZBENCH_SAMPLE_INTERVAL_S")
# A runner that writes no event for this long is stopped as stalled (0: never); --timeout is apart.
STALL_S = env_seconds("ZBENCH_STALL_TIMEOUT_S")
STORE_RETRY_S = 1.0  # the tick while the database fails
STORE_BUSY_S = 0.5  # how long one write of the supervisor waits for another writer


class Supervisor(StoreGuard):
    """Starts queued jobs on free GPUs, watches them to their end, and stores what they measured."""

    def __init__(self, db: Path, sampler: JobSampler, gpus: list[int]) -> None:
        self.db = db
        # Short waits for a busy database: a write blocked for long would stall timeouts and
        # cancellations too; a failed write is simply tried again on the next tick.
        self.store = Store(db, busy_s=STORE_BUSY_S, retries=1)
        self.store_id = self.store.store_id()
        self.sampler = sampler
        self.gpus = gpus
        self.running: dict[int, RunningJob] = {}
        self._lock = threading.Lock()
        self.stopping = False
        self._last_flush = time.monotonic()  # durations on the monotonic clock (RunningJob)
        self._init_guard()
        self._machine_record: dict[str, Any] | None = None
        sampler.subscribe(self._on_snapshot)

    # --- telemetry fan-out (sampler thread) ----------------------------------------------------

    def _on_snapshot(self, snap: Snapshot) -> None:
        with self._lock:
            jobs = list(self.running.values())
        for job in jobs:
            job.on_snapshot(snap)

    # --- the loop -----------------------------------------------------------------------------

    def request_stop(self, *_: object) -> None:
        self.stopping = True

    def run(self) -> None:
        self.sampler.start()
        last_beat = 0.0
        idle_since: float | None = None
        try:
            while True:
                now = time.monotonic()
                if now - last_beat >= HEARTBEAT_S:
                    self._guard(self._beat)
                    last_beat = now
                if self.stopping:
                    for job in self.running.values():
                        if job.stop_kind is None:
                            job.stop("shutdown", TIMEOUT_GRACE_S)
                self._tend_running()
                if not self.stopping and self.trouble_since is None:
                    self._guard(self._start_queued)
                if self.broken is not None and not self.running:
                    raise self.broken  # every job has ended; nothing more may be written
                if self.running:
                    idle_since = None
                elif self.store.replaced():
                    log.info("%s was moved or replaced; looking at the new file", self.db)
                    return
                elif self.stopping or self._nothing_queued():
                    idle_since = idle_since or now
                    if self.stopping or now - idle_since >= IDLE_EXIT_S:
                        return
                self._tick_done()
                time.sleep(TICK_S if self.trouble_since is None else STORE_RETRY_S)
        finally:
            self.sampler.stop()
            self.sampler.close()
            for job in self.running.values():
                job.close()

    def _beat(self) -> None:
        """The heartbeat, after a look at the file itself (emptied or truncated in place, its
        -wal or -shm gone: see ``jobs.guard``)."""
        self.store.check_file()
        self.store.heartbeat(os.getpid(), socket.gethostname())

    def _nothing_queued(self) -> bool:
        queued: list[object] = []
        if not self._guard(lambda: queued.extend(self.store.jobs((JobState.QUEUED,)))):
            return False  # cannot tell: wait for the database
        return not queued

    def _tend_running(self) -> None:
        found: list[dict[str, Any]] = []
        known = self._guard(lambda: found.extend(self.store.jobs((JobState.RUNNING,))))
        rows = {r["id"]: r for r in found}
        now = time.monotonic()
        for job in list(self.running.values()):
            if job.read_events():
                job.dirty = True
            if job.dirty and job.recorded:
                job.dirty = not self._guard(self._record_progress, job)
            elif not job.recorded:
                job.recorded = self._guard(self._record_start, job)
            row = rows.get(job.id)
            if known and row is None and job.stop_kind is None and job.recorded:
                # Marked finished by someone else (a `zbench` that thought we were dead).
                job.stop("cancelled", 2.0)
            elif row is not None and row["cancel_grace"] not in (None, job.cancel_grace):
                job.cancel_grace = float(row["cancel_grace"])
                if job.stop_kind is None:
                    log.info("job %d: cancel requested", job.id)
                    job.stop("cancelled", job.cancel_grace)
                else:  # cancelled again while it stops: a shorter --grace counts
                    job.hurry(job.cancel_grace)
            timeout = job.row["timeout_s"]
            if timeout and job.stop_kind is None and now - job.started > timeout:
                log.info("job %d: timeout after %s s", job.id, timeout)
                job.stop("timeout", TIMEOUT_GRACE_S)
            if STALL_S and job.stop_kind is None and now - job.last_event > STALL_S:
                log.info("job %d: no event for %.0f s; stopping it", job.id, STALL_S)
                job.stalled_after = STALL_S
                job.stop("stalled", TIMEOUT_GRACE_S)
            job.escalate()
            rc = job.proc.poll()
            if rc is not None and job.reaped(TIMEOUT_GRACE_S):
                self._guard(self._finish, job, rc)
                stuck = self.trouble_since is not None and now - self.trouble_since >= 5.0
                if job.id in self.running and (
                    self.broken is not None or (self.stopping and stuck)
                ):
                    self._abandon(job, rc)  # stopped or broken: not waiting for the database
        if now - self._last_flush >= FLUSH_S:
            for job in self.running.values():
                pending = job.take_unsaved()
                if not self._guard(self.store.add_samples, job.id, pending):
                    job.requeue_unsaved(pending)
            self._last_flush = now

    def _record_progress(self, job: RunningJob) -> None:
        self.store.update_job(
            job.id,
            only_if_state=(JobState.RUNNING,),
            phase=job.phase,
            step=job.step,
            total=job.total,
            samples_per_s=job.samples_per_s,
            **({"precision": job.precision} if job.precision else {}),
        )

    def _start_queued(self) -> None:
        busy = {g for job in self.running.values() for g in job.gpu_ids}
        cpu_busy = any(not job.gpu_ids for job in self.running.values())
        for row in self.store.jobs((JobState.QUEUED,)):
            config = row["config"]
            want = 0 if config.get("device") == "cpu" or not self.gpus else int(config["gpus"])
            kind = kinds.get(row["kind"])
            if kind.all_gpus and not want:
                want = len(self.gpus)  # a probe measures every GPU unless told which
            if kind.gpus_named:
                want = 0  # multi-node: only its local nodes' GPUs, named in requested_gpus
            requested = row["requested_gpus"]
            if want > len(self.gpus) or (requested and not set(requested) <= set(self.gpus)):
                self.store.update_job(
                    row["id"],
                    only_if_state=(JobState.QUEUED,),
                    state=JobState.FAILED,
                    reason=(
                        f"needs {gpu_list(requested) if requested else counted(want, 'GPU')}; "
                        f"this machine offers {gpu_list(self.gpus)}"
                    ),
                    ended=time.time(),
                )
                continue
            ids = allocate(want, requested, self.gpus, busy, bool(row["share_gpus"]))
            if ids is None or (not ids and cpu_busy):
                continue  # waits for its GPUs (or for the CPU job ahead of it)
            if not self.store.update_job(
                row["id"],
                only_if_state=(JobState.QUEUED,),
                state=JobState.RUNNING,
                started=time.time(),
            ):
                continue  # cancelled meanwhile
            self._launch(row, ids)
            busy |= set(ids)
            cpu_busy = cpu_busy or not ids

    def _launch(self, row: dict[str, Any], ids: tuple[int, ...]) -> None:
        try:
            job = RunningJob.launch(row, ids, self.store_id)
        except (OSError, ZbenchError) as exc:
            self.store.update_job(
                row["id"],
                state=JobState.FAILED,
                reason=f"could not start: {exc}",
                ended=time.time(),
            )
            return
        log.info("job %d: started pid %d on GPUs %s", job.id, job.pid, list(ids) or "none (CPU)")
        self.sampler.watch_tree(job.pid)
        with self._lock:
            self.running[job.id] = job
        # From here the job runs whatever the store does; if this write fails it is retried.
        job.recorded = self._guard(self._record_start, job)

    def _record_start(self, job: RunningJob) -> None:
        self.store.update_job(
            job.id,
            pid=job.pid,
            gpu_ids=list(job.gpu_ids),
            phase=job.phase,
            log_path=str(job.log_path),
            events_path=str(job.events_path),
        )
        self.store.checkpoint()  # into the main file: a deleted -wal cannot make it queued again

    def _machine(self) -> dict[str, Any]:
        """The machine's description (``zbench doctor`` without the frameworks), read once per
        supervisor through a backend of its own (the sampler's counters are not read twice), so
        that a report of any run can show the GPUs' peaks and the topology."""
        if self._machine_record is None:
            from zbench.telemetry.doctor import json_default, machine

            try:  # NA and other non-JSON values as the doctor's JSON writes them
                self._machine_record = json.loads(json.dumps(machine(), default=json_default))
            except Exception as exc:  # a description is not worth a lost result
                self._machine_record = {"notice": f"machine not read: {exc}"}
        return self._machine_record

    def _peaks(self, job: RunningJob) -> dict[int, dict[str, Any]] | None:
        """For a probe job: each GPU's theoretical peaks, read through the sampler's backend
        (static figures, so reading them beside the sampling thread reads no counter twice)."""
        if not records.wants_peaks(job.row):
            return None
        from zbench.jobs.probe_record import read_peaks

        return read_peaks(self.sampler.backend)

    def _finish(self, job: RunningJob, rc: int) -> None:
        """Store how ``job`` ended; safe to call again when the store failed part way."""
        job.remove_scratch()  # its processes are gone (reaped): what a killed launcher left
        job.read_events()
        outcome = job.outcome(rc)
        if job.result_event is not None and job.run_id is None:
            record = job.run_record(self._peaks(job))
            record["env"].setdefault("machine", self._machine())
            job.run_id = self.store.add_run(record)
        samples = job.retag_samples()
        self.store.replace_samples(job.id, samples)
        self.store.set_phase_aggregates(job.id, job.run_id, aggregate(samples))
        self.store.update_job(
            job.id,
            only_if_state=(JobState.RUNNING,),
            state=outcome.state,
            reason=outcome.reason,
            ended=time.time(),
            phase=job.phase,
            step=job.step,
            total=job.total,
            samples_per_s=job.samples_per_s,
            run_id=job.run_id,
            log_tail="\n".join(job.log_tail()),
            **({} if job.recorded else {"pid": job.pid, "gpu_ids": list(job.gpu_ids)}),
        )
        if job.run_id is not None:
            # A job already marked lost keeps that state, but its measured run is linked.
            self.store.update_job(job.id, run_id=job.run_id)
        self.store.checkpoint()  # its result into the main file (see _record_start)
        log.info("job %d: %s (%s), exit status %d", job.id, outcome.state, outcome.reason, rc)
        self.sampler.unwatch_tree(job.pid)
        with self._lock:
            self.running.pop(job.id, None)
        job.close()


def main(argv: list[str] | None = None) -> int:
    """Run the detached supervisor for ``--db``; exit 0 at once if another holds its lock."""
    parser = argparse.ArgumentParser(prog="python -m zbench.jobs.supervisor")
    parser.add_argument("--db", type=Path, default=None)
    parser.add_argument("--lock-fd", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO,
        stream=sys.stdout,
        format=f"%(asctime)s supervisor[{os.getpid()}] %(levelname)s %(message)s",
    )
    db = paths.db_path(args.db)
    lock: IO[str] | None = (
        liveness.try_lock(db) if args.lock_fd is None else liveness.adopt_lock(args.lock_fd)
    )
    if lock is None:
        log.info("another supervisor holds %s; exiting", liveness.lock_path(db))
        return 0
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        code = _serve(db, lock)
    except ZbenchError as exc:  # the database could not be opened, failed too long, or broke
        log.error("stopped: %s", exc)
        code = 1
    if abandoned_connections():
        # No normal exit: closing the connections left open over a deleted -wal or an emptied
        # file would copy what they hold back into the file (zbench.store.base: _abandon).
        logging.shutdown()
        os._exit(code)
    return code


def _serve(db: Path, lock: IO[str] | None) -> int:
    sup: Supervisor | None = None
    while lock is not None:
        try:
            store = Store(db)
            liveness.detect_lost(store, ignore_lock=True)  # we hold it: "running" jobs are orphans
            store.set_supervisor(os.getpid(), socket.gethostname(), time.time())
            sup = Supervisor(db, open_sampler(SAMPLE_INTERVAL_S), visible_gpus())
        except BaseException:
            lock.close()
            raise
        signal.signal(signal.SIGTERM, sup.request_stop)
        log.info("started; GPUs %s", sup.gpus or "none (CPU jobs run one at a time)")
        try:
            sup.run()
        except StoreBroken:
            if not sup.store.replaced():
                raise  # every job has ended, its events kept; a fresh look is another process's
            store.abandon()  # the path names another file, with connections of its own: serve it
            log.info("%s was replaced; looking at the new file", db)
        except StoreError:
            raise  # failing for too long
        except Exception:
            log.exception("failed; its running jobs are left for the next supervisor")
            return 1
        finally:
            if sup.broken is None:  # a broken file gets no more writes, not even this one
                with contextlib.suppress(StoreError):
                    store.clear_supervisor(os.getpid())
            lock.close()
            lock = None
        if sup.stopping:
            break
        # A job queued after our last look saw the lock held and started no supervisor: look again
        # (in a fresh Store: the file at this path may have been replaced meanwhile).
        if db.exists() and Store(db).jobs((JobState.QUEUED,)):
            lock = liveness.try_lock(db)
            if lock is None:
                log.info("exiting: another supervisor runs the queued jobs")
                return 0
    log.info("exiting: %s", _why_exit(db, sup))
    return 0


def _why_exit(db: Path, sup: Supervisor | None) -> str:
    """Why the supervisor ends, as its last line: stopped with jobs still queued is not "nothing
    left to run"."""
    if sup is None or not sup.stopping:
        return "nothing left to run"
    try:
        queued = len(Store.reader(db).jobs((JobState.QUEUED,))) if db.exists() else 0
    except StoreError:
        return "stopped (SIGTERM)"
    if not queued:
        return "stopped (SIGTERM); nothing was queued"
    wait = "waits" if queued == 1 else "wait"
    return (
        f"stopped (SIGTERM); {counted(queued, 'queued job')} {wait} for the next `zbench jobs` "
        "or submission"
    )


if __name__ == "__main__":
    sys.exit(main())
