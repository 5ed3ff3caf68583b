"""The detached job supervisor: ``python -m zbench.jobs.supervisor --db PATH``.

Started by :func:`zbench.jobs.api.submit` in its own session with its output in a log file, so a
closed terminal (SIGHUP), an SSH drop or a killed ``zbench`` leaves it running. It takes queued jobs
from the store, gives each the GPUs it needs (two jobs never share a GPU unless asked; CPU jobs run
one at a time), starts the runner in its own process group, follows its events, samples telemetry for
its GPUs and process tree, and records how each job ended. It exits once nothing is queued or running.
"""

from __future__ import annotations

import argparse
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
from zbench.jobs import liveness
from zbench.jobs.gpus import allocate, visible_gpus
from zbench.jobs.runjob import RunningJob
from zbench.jobs.sampling import SamplerLike, open_sampler
from zbench.results.aggregate import aggregate
from zbench.results.store import Store
from zbench.telemetry.snapshot import Snapshot

log = logging.getLogger("zbench.supervisor")

TICK_S = 0.2
HEARTBEAT_S = 1.0
FLUSH_S = 5.0
TIMEOUT_GRACE_S = 10.0
IDLE_EXIT_S = float(os.environ.get("ZBENCH_SUPERVISOR_IDLE_S", "3"))
SAMPLE_INTERVAL_S = float(os.environ.get("ZBENCH_SAMPLE_INTERVAL_S", "0.5"))


class Supervisor:
    def __init__(self, db: Path, sampler: SamplerLike, gpus: list[int]) -> None:
        self.db = db
        self.store = Store(db)
        self.sampler = sampler
        self.gpus = gpus
        self.running: dict[int, RunningJob] = {}
        self._lock = threading.Lock()
        self.stopping = False
        self._last_flush = time.time()
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
                now = time.time()
                if now - last_beat >= HEARTBEAT_S:
                    self.store.heartbeat(os.getpid(), socket.gethostname())
                    last_beat = now
                if self.stopping:
                    for job in self.running.values():
                        if job.stop_kind is None:
                            job.stop("shutdown", TIMEOUT_GRACE_S)
                self._tend_running()
                if not self.stopping:
                    self._start_queued()
                if self.running:
                    idle_since = None
                elif self.stopping or self._nothing_queued():
                    idle_since = idle_since or now
                    if self.stopping or now - idle_since >= IDLE_EXIT_S:
                        return
                time.sleep(TICK_S)
        finally:
            self.sampler.stop()
            self.sampler.close()

    def _nothing_queued(self) -> bool:
        return not self.store.jobs(("queued",))

    def _tend_running(self) -> None:
        rows = {r["id"]: r for r in self.store.jobs(("running",))}
        for job in list(self.running.values()):
            if job.read_events():
                self.store.update_job(
                    job.id,
                    only_if_state=("running",),
                    phase=job.phase,
                    step=job.step,
                    total=job.total,
                    samples_per_s=job.samples_per_s,
                    **({"precision": job.precision} if job.precision else {}),
                )
            row = rows.get(job.id)
            if row is None and job.stop_kind is None:
                # Marked finished by someone else (a `zbench` that thought we were dead).
                job.stop("cancelled", 2.0)
            elif row is not None and row["cancel_grace"] is not None and job.stop_kind is None:
                log.info("job %d: cancel requested", job.id)
                job.stop("cancelled", float(row["cancel_grace"]))
            timeout = job.row["timeout_s"]
            if timeout and job.stop_kind is None and time.time() - job.started > timeout:
                log.info("job %d: timeout after %s s", job.id, timeout)
                job.stop("timeout", TIMEOUT_GRACE_S)
            job.escalate()
            rc = job.proc.poll()
            if rc is not None and job.reaped(TIMEOUT_GRACE_S):
                self._finish(job, rc)
        if time.time() - self._last_flush >= FLUSH_S:
            for job in self.running.values():
                self.store.add_samples(job.id, job.take_unsaved())
            self._last_flush = time.time()

    def _start_queued(self) -> None:
        busy = {g for job in self.running.values() for g in job.gpu_ids}
        cpu_busy = any(not job.gpu_ids for job in self.running.values())
        for row in self.store.jobs(("queued",)):
            config = row["config"]
            want = 0 if config.get("device") == "cpu" or not self.gpus else int(config["gpus"])
            if config.get("nodes"):
                want = 0  # multi-node: only its local nodes' GPUs, named in requested_gpus
            requested = row["requested_gpus"]
            if want > len(self.gpus) or (requested and not set(requested) <= set(self.gpus)):
                self.store.update_job(
                    row["id"],
                    only_if_state=("queued",),
                    state="failed",
                    reason=f"needs {requested or want} GPU(s); this machine offers {self.gpus}",
                    ended=time.time(),
                )
                continue
            ids = allocate(want, requested, self.gpus, busy, bool(row["share_gpus"]))
            if ids is None or (not ids and cpu_busy):
                continue  # waits for its GPUs (or for the CPU job ahead of it)
            if not self.store.update_job(
                row["id"], only_if_state=("queued",), state="running", started=time.time()
            ):
                continue  # cancelled meanwhile
            self._launch(row, ids)
            busy |= set(ids)
            cpu_busy = cpu_busy or not ids

    def _launch(self, row: dict[str, Any], ids: tuple[int, ...]) -> None:
        try:
            job = RunningJob.launch(row, ids)
        except OSError as exc:
            self.store.update_job(
                row["id"], state="failed", reason=f"could not start: {exc}", ended=time.time()
            )
            return
        log.info("job %d: started pid %d on GPUs %s", job.id, job.pid, list(ids) or "none (CPU)")
        self.store.update_job(
            job.id,
            pid=job.pid,
            gpu_ids=list(ids),
            phase="setup",
            log_path=str(job.log_path),
            events_path=str(job.events_path),
        )
        self.sampler.watch_tree(job.pid)
        with self._lock:
            self.running[job.id] = job

    def _finish(self, job: RunningJob, rc: int) -> None:
        job.read_events()
        self.sampler.unwatch_tree(job.pid)
        with self._lock:
            self.running.pop(job.id, None)
        outcome = job.outcome(rc)
        log.info("job %d: %s (%s), exit status %d", job.id, outcome.state, outcome.reason, rc)
        run_id = self.store.add_run(job.run_record()) if job.result_event is not None else None
        samples = job.retag_samples()
        self.store.replace_samples(job.id, samples)
        self.store.set_phase_aggregates(job.id, run_id, aggregate(samples))
        tail = "\n".join(liveness.tail_lines(job.log_path))
        self.store.update_job(
            job.id,
            only_if_state=("running",),
            state=outcome.state,
            reason=outcome.reason,
            ended=time.time(),
            phase=job.phase,
            step=job.step,
            total=job.total,
            samples_per_s=job.samples_per_s,
            run_id=run_id,
            log_tail=tail,
        )
        if run_id is not None:
            # A job already marked lost keeps that state, but its measured run is linked.
            self.store.update_job(job.id, run_id=run_id)


def main(argv: list[str] | None = None) -> int:
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
    while lock is not None:
        store = Store(db)
        liveness.detect_lost(store, ignore_lock=True)  # we hold it: "running" jobs are orphans
        store.set_supervisor(os.getpid(), socket.gethostname(), time.time())
        sup = Supervisor(db, open_sampler(SAMPLE_INTERVAL_S), visible_gpus())
        signal.signal(signal.SIGTERM, sup.request_stop)
        log.info("started; GPUs %s", sup.gpus or "none (CPU jobs run one at a time)")
        try:
            sup.run()
        except Exception:
            log.exception("failed; its running jobs are left for the next supervisor")
            return 1
        finally:
            store.clear_supervisor(os.getpid())
            lock.close()
            lock = None
        # A job queued after our last look saw the lock held and started no supervisor: look again.
        if not sup.stopping and store.jobs(("queued",)):
            lock = liveness.try_lock(db)
    log.info("exiting: nothing left to run")
    return 0


if __name__ == "__main__":
    sys.exit(main())
