"""Jobs as the CLI and the TUI see them: submit, list, cancel, read logs.

Submitting records jobs as ``queued`` in the store and makes sure a detached supervisor
(``python -m zbench.jobs.supervisor``) is alive to run them; the supervisor is in its own session, so
jobs outlive the terminal, the TUI, or the ``zbench`` process that submitted them. Every call here
first checks that the supervisor recorded in the store is alive, so a supervisor that died is noticed
by the next ``zbench`` and its jobs end as ``lost`` instead of "running" forever.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from zbench import paths
from zbench.contract.config import RunConfig
from zbench.jobs import liveness
from zbench.results.store import FINISHED_STATES, Store

if TYPE_CHECKING:
    from zbench.demos.runner import DemoConfig

STATES = ("queued", "running", *FINISHED_STATES)


@dataclass(frozen=True)
class JobSpec:
    """A workload with its options, the GPUs it may use (None: the first free ones, as many as
    ``config.gpus``; none for ``--device cpu``) and an optional timeout. ``share_gpus`` lets it run
    on GPUs another job holds."""

    config: RunConfig | DemoConfig  # a benchmark, or a demo (zbench.demos)
    gpu_ids: tuple[int, ...] | None = None
    timeout_s: float | None = None
    share_gpus: bool = False


@dataclass(frozen=True)
class JobInfo:
    id: int
    workload: str
    framework: str
    mode: str
    precision: str | None
    gpu_ids: tuple[int, ...] | None
    state: str
    phase: str | None
    step: int | None
    total: int | None
    samples_per_s: float | None
    reason: str | None
    created: float
    started: float | None
    ended: float | None
    log_path: str | None
    events_path: str | None
    run_id: int | None
    suite: str | None

    @property
    def finished(self) -> bool:
        return self.state in FINISHED_STATES


class JobNotFound(LookupError):
    """No job with that id (the CLI reports it in one line, exit 2)."""


def _store(db: str | os.PathLike[str] | None) -> Store:
    return Store(paths.db_path(db))


def _info(row: dict[str, Any]) -> JobInfo:
    gpu_ids = row["gpu_ids"] if row["gpu_ids"] is not None else row["requested_gpus"]
    return JobInfo(
        id=row["id"],
        workload=row["workload"],
        framework=row["framework"],
        mode=row["mode"],
        precision=row["precision"],
        gpu_ids=tuple(gpu_ids) if gpu_ids is not None else None,
        state=row["state"],
        phase=row["phase"],
        step=row["step"],
        total=row["total"],
        samples_per_s=row["samples_per_s"],
        reason=row["reason"],
        created=row["created"],
        started=row["started"],
        ended=row["ended"],
        log_path=row["log_path"],
        events_path=row["events_path"],
        run_id=row["run_id"],
        suite=row["suite"],
    )


def submit(
    specs: list[JobSpec],
    *,
    db: str | os.PathLike[str] | None = None,
    suite: str | None = None,
    tag: str | None = None,
) -> list[int]:
    """Record ``specs`` as queued jobs (with the user's ``tag``, if any) and start a supervisor if
    none is alive. Returns job ids."""
    db_path = paths.db_path(db)
    store = Store(db_path)
    now = time.time()
    rows = [
        {
            "suite": suite,
            "tag": tag,
            "workload": s.config.workload,
            "framework": s.config.framework,
            "mode": s.config.mode,
            "precision": s.config.precision,
            "config": s.config.as_dict(),
            "requested_gpus": list(s.gpu_ids) if s.gpu_ids is not None else None,
            "share_gpus": s.share_gpus,
            "timeout_s": s.timeout_s,
            "state": "queued",
            "created": now,
        }
        for s in specs
    ]
    ids = store.add_jobs(rows)
    liveness.detect_lost(store)
    liveness.ensure_supervisor(db_path)
    return ids


def _look(store: Store) -> None:
    """Before reading jobs: mark a dead supervisor's jobs lost, and start a supervisor when jobs
    wait with none alive (the last one was stopped, crashed, or the machine rebooted)."""
    liveness.detect_lost(store)
    if store.jobs(("queued",)):
        liveness.ensure_supervisor(store.path)


def list_jobs(
    db: str | os.PathLike[str] | None = None, *, include_finished: bool = True
) -> list[JobInfo]:
    store = _store(db)
    _look(store)
    states = () if include_finished else ("queued", "running")
    return [_info(r) for r in store.jobs(states)]


def get_job(job_id: int, db: str | os.PathLike[str] | None = None) -> JobInfo:
    store = _store(db)
    _look(store)
    row = store.get_job(job_id)
    if row is None:
        raise JobNotFound(f"no job {job_id}")
    return _info(row)


def cancel(job_id: int, db: str | os.PathLike[str] | None = None, grace: float = 10.0) -> JobInfo:
    """Cancel a queued job at once; ask the supervisor to stop a running one (SIGTERM to its
    process group, SIGKILL after ``grace`` seconds). Without a live supervisor, do it here."""
    store = _store(db)
    liveness.detect_lost(store)
    row = store.get_job(job_id)
    if row is None:
        raise JobNotFound(f"no job {job_id}")
    if row["state"] == "queued":
        store.update_job(
            job_id,
            only_if_state=("queued",),
            state="cancelled",
            reason="cancelled before it started",
            ended=time.time(),
        )
    elif row["state"] == "running":
        store.update_job(job_id, only_if_state=("running",), cancel_grace=grace)
        if not liveness.supervisor_alive(store) and row["pid"]:
            _stop_group(int(row["pid"]), grace)
            store.update_job(
                job_id,
                only_if_state=("running",),
                state="cancelled",
                reason="cancelled (no supervisor was running)",
                ended=time.time(),
            )
    return get_job(job_id, db)


def _stop_group(pgid: int, grace: float) -> None:
    liveness.signal_tree(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if not liveness.pid_alive(pgid):
            return
        time.sleep(0.1)
    liveness.signal_tree(pgid, signal.SIGKILL)


def log_tail(job_id: int, db: str | os.PathLike[str] | None = None, lines: int = 50) -> list[str]:
    """The last ``lines`` lines of the job's runner log (the stored tail when the file is gone)."""
    row = _store(db).get_job(job_id)
    if row is None:
        raise JobNotFound(f"no job {job_id}")
    if row["log_path"] and Path(row["log_path"]).exists():
        return liveness.tail_lines(Path(row["log_path"]), lines)
    return (row["log_tail"] or "").splitlines()[-lines:]


def runner_pids(db: str | os.PathLike[str] | None = None) -> dict[int, int]:
    """Runner pid -> job id of the running jobs (each runner leads its own process group), so a
    GPU process can be named as one of ours."""
    rows = _store(db).jobs(states=("running",))
    return {int(r["pid"]): int(r["id"]) for r in rows if r.get("pid")}
