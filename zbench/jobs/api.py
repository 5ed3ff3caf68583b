"""Jobs as the CLI and the TUI see them: submit, list, cancel, read logs.

Submitting records jobs as ``queued`` in the store and makes sure a detached supervisor
(``python -m zbench.jobs.supervisor``) is alive to run them; the supervisor is in its own session, so
jobs outlive the terminal, the TUI, or the ``zbench`` process that submitted them. Reading jobs has no
side effects: :func:`reconcile` is the one explicit call (made by ``zbench jobs``, ``zbench cancel``
and the TUI's poll) that marks a dead supervisor's jobs ``lost`` and starts a supervisor for jobs
that wait with none alive.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from zbench import paths
from zbench.contract import kinds
from zbench.contract.config import RunConfig
from zbench.contract.probe_options import ProbeConfig
from zbench.errors import ZbenchError
from zbench.jobs import liveness
from zbench.jobs.states import ACTIVE, REFUSED_PREFIX, JobState
from zbench.jobs.timings import check_env_seconds, env_seconds
from zbench.store import JobRow, Store

if TYPE_CHECKING:
    from zbench.contract.demo_options import DemoConfig

STATES = tuple(JobState)
# `zbench jobs` flags a running job whose runner wrote no event for this long (a hang on I/O?)
QUIET_WARN_S = env_seconds("ZBENCH_QUIET_WARN_S")


@dataclass(frozen=True)
class JobSpec:
    """A workload with its options, the GPUs it may use (None: the first free ones, as many as
    ``config.gpus``; none for ``--device cpu``) and an optional timeout. ``share_gpus`` lets it run
    on GPUs another job holds."""

    # one per row of contract.kinds (jobs.nodes.NodesConfig too: nodes_spec)
    config: RunConfig | DemoConfig | ProbeConfig
    gpu_ids: tuple[int, ...] | None = None
    timeout_s: float | None = None
    share_gpus: bool = False


@dataclass(frozen=True)
class JobInfo:
    """One job as the CLI and the TUI show it: spec, state, phase, progress, times, files, run."""

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
    kind: str = "benchmark"  # its row of contract.kinds
    tag: str | None = None  # the user's (run/suite --tag)
    config: dict[str, Any] = field(
        default_factory=dict
    )  # as submitted (zbench.jobs.apart reads it)

    @property
    def finished(self) -> bool:
        return JobState(self.state).finished

    def rate(self, missing: str = "") -> str:
        """Its speed as every jobs view prints it (rate_text)."""
        return rate_text(self.samples_per_s, missing)

    @property
    def rate_unit(self) -> str:
        """What its speed counts: samples/s, or a demo's own (frames/s, board-steps/s)."""
        return rate_unit_of(self.kind, self.workload)

    @property
    def refused(self) -> bool:
        """Failed on input its runner refused (a dataset it could not read, a bad option)."""
        return self.state == JobState.FAILED and (self.reason or "").startswith(REFUSED_PREFIX)

    def quiet_s(self, now: float | None = None) -> float | None:
        """Seconds since a running job's runner last wrote an event (None when not running)."""
        if self.state != JobState.RUNNING or not self.events_path:
            return None
        try:
            last = os.stat(self.events_path).st_mtime
        except OSError:
            return None
        return max(0.0, (now or time.time()) - max(last, self.started or 0.0))


def rate_text(samples_per_s: float | None, missing: str = "") -> str:
    """A job's samples/s as the jobs table, the job view, `--follow` and the fleet print it: one
    decimal with thousands separators; ``missing`` until one is reported (a reported 0.0 is 0.0)."""
    return missing if samples_per_s is None else f"{samples_per_s:,.1f}"


def rate_unit_of(kind: str | None, workload: str | None) -> str:
    """What a job's speed counts, from its kind and workload (a job, or a row of another host's
    ``zbench jobs --json``): samples/s, or a demo's own (frames/s, board-steps/s)."""
    if kind != kinds.DEMO:
        return "samples/s"
    from zbench.contract.demos import known  # a demo's row: read only for a demo's job

    demo = known(str(workload or ""))
    return demo.rate_unit if demo else "samples/s"


def shared_unit(speeds: Iterable[tuple[str, float | None]]) -> str | None:
    """The one unit of these (unit, speed) pairs, for a column's header; None when the speeds
    count unlike things (samples/s beside a demo's board-steps/s): a table then says each one's
    unit beside it. Those with no speed yet count only when none has one (none: samples/s)."""
    pairs = list(speeds)
    units = {unit for unit, speed in pairs if speed is not None}
    units = units or {unit for unit, _ in pairs} or {"samples/s"}
    return units.pop() if len(units) == 1 else None


def shared_rate_unit(jobs: Iterable[JobInfo]) -> str | None:
    """The one unit of these jobs' speeds (``shared_unit``): ``frames/s`` for motion jobs alone."""
    return shared_unit((j.rate_unit, j.samples_per_s) for j in jobs)


def speed_title(unit: str | None) -> str:
    """A speed column's title: its speeds' one unit (``Frames/s``), else ``Rate`` (each cell then
    says its unit, ``speed_cell``)."""
    return unit[:1].upper() + unit[1:] if unit else "Rate"


def speed_cell(speed: float | None, unit: str, shared: str | None) -> str:
    """A speed as a jobs table prints it: ``rate_text``, with its unit when the column's speeds
    count unlike things (``shared`` None)."""
    text = rate_text(speed)
    return f"{text} {unit}" if text and shared is None else text


class JobSpecError(ZbenchError):
    """A job the runner would refuse at once (one line, exit 2); nothing was queued."""


class JobNotFound(ZbenchError, LookupError):
    """No job with that id (one line, exit 2)."""


def check_config(config: RunConfig | DemoConfig | ProbeConfig) -> str | None:
    """What the runner would reject at once, found before a job is queued (the runner finds it
    only after a 5-20 s framework import, and leaves a failed job behind): one line, or None.
    Each kind's config class checks its own options (a demo's parser already did); a benchmark's
    ``--data`` is checked against its workload's dataset layout by the runners' dataset module
    (numpy only, no framework), which the contract, standard library only, cannot import."""
    problem = config.check()
    if problem or not isinstance(config, RunConfig) or config.data is None:
        return problem
    from zbench.contract.workloads import WORKLOADS
    from zbench.runners.datasets import layout_problem

    workload = WORKLOADS.get(config.workload)
    found = layout_problem(workload.task, config.data) if workload else None
    return f"{config.workload} --data {config.data}: {found}" if found else None


def _store(db: str | os.PathLike[str] | None) -> Store:
    return Store(paths.db_path(db))


def _reader(db: str | os.PathLike[str] | None) -> Store:
    """For calls that only read: a few seconds' wait at most for a busy database."""
    return Store.reader(paths.db_path(db))


def _info(row: JobRow) -> JobInfo:
    gpu_ids = row.gpu_ids if row.gpu_ids is not None else row.requested_gpus
    return JobInfo(
        id=row.id,
        workload=row.workload,
        framework=row.framework,
        mode=row.mode,
        precision=row.precision,
        gpu_ids=tuple(gpu_ids) if gpu_ids is not None else None,
        state=row.state,
        phase=row.phase,
        step=row.step,
        total=row.total,
        samples_per_s=row.samples_per_s,
        reason=row.reason,
        created=row.created,
        started=row.started,
        ended=row.ended,
        log_path=row.log_path,
        events_path=row.events_path,
        run_id=row.run_id,
        suite=row.suite,
        kind=row.kind,
        tag=row.tag,
        config=row.config,
    )


def submit(
    specs: list[JobSpec],
    *,
    db: str | os.PathLike[str] | None = None,
    suite: str | None = None,
    tag: str | None = None,
) -> list[int]:
    """Record ``specs`` as queued jobs (with the user's ``tag``, if any) and start a supervisor if
    none is alive. Returns job ids.

    Each spec (see :func:`check_config`) and what the supervisor needs (a writable data directory
    for its log and the job folders) are checked first, so a failure leaves no queued job behind:
    a :class:`JobSpecError` or a ``paths.DataDirError``."""
    for spec in specs:
        problem = check_config(spec.config)
        if problem:
            raise JobSpecError(problem)
    db_path = paths.db_path(db)
    paths.check_writable(paths.home())
    check_env_seconds()  # the supervisor's settings, before a job waits on a supervisor
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
            "kind": kinds.of_config(s.config).name,
            "requested_gpus": list(s.gpu_ids) if s.gpu_ids is not None else None,
            "share_gpus": s.share_gpus,
            "timeout_s": s.timeout_s,
            "state": JobState.QUEUED,
            "created": now,
        }
        for s in specs
    ]
    ids = store.add_jobs(rows)
    liveness.detect_lost(store)
    liveness.ensure_supervisor(db_path)
    return ids


def reconcile(db: str | os.PathLike[str] | None = None) -> list[int]:
    """Mark a dead supervisor's jobs lost (stopping their runners), and start a supervisor when
    jobs wait with none alive (the last one was stopped, crashed, or the machine rebooted).
    Returns the ids marked lost. Does nothing on a database this process cannot write; gives up
    after a few seconds on one another program keeps locked (``StoreError``, exit code 1)."""
    store = Store(paths.db_path(db), busy_s=1.0, retries=2)
    if store.readonly:
        return []
    lost = liveness.detect_lost(store)
    if store.job_rows((JobState.QUEUED,)):
        liveness.ensure_supervisor(store.path)
    return lost


def list_jobs(
    db: str | os.PathLike[str] | None = None, *, include_finished: bool = True
) -> list[JobInfo]:
    """The jobs as stored (no side effects: see :func:`reconcile`)."""
    store = _reader(db)
    states = () if include_finished else ACTIVE
    return [_info(r) for r in store.job_rows(states)]


def get_job(job_id: int, db: str | os.PathLike[str] | None = None) -> JobInfo:
    """One job by id from the store (``db`` or the default); JobNotFound when there is none."""
    return _info(_row(_reader(db), job_id))


def _row(store: Store, job_id: int) -> JobRow:
    row = store.job_row(job_id) if job_id > 0 else None
    if row is None:
        raise JobNotFound(f"no job {job_id}")
    return row


def cancel(job_id: int, db: str | os.PathLike[str] | None = None, grace: float = 10.0) -> JobInfo:
    """Cancel a queued job at once; ask the supervisor to stop a running one (SIGTERM to its
    process group, SIGKILL after ``grace`` seconds). Without a live supervisor, do it here."""
    store = _store(db)
    liveness.detect_lost(store)
    row = _row(store, job_id)
    if row.state == JobState.QUEUED and not store.update_job(
        job_id,
        only_if_state=(JobState.QUEUED,),
        state=JobState.CANCELLED,
        reason="cancelled before it started",
        ended=time.time(),
    ):
        row = _row(store, job_id)  # the supervisor started it meanwhile: stop it as running
    if row.state == JobState.RUNNING:
        store.update_job(job_id, only_if_state=(JobState.RUNNING,), cancel_grace=grace)
        if not liveness.supervisor_alive(store) and row.pid:
            liveness.stop_tree(int(row.pid), grace)
            store.update_job(
                job_id,
                only_if_state=(JobState.RUNNING,),
                state=JobState.CANCELLED,
                reason="cancelled (no supervisor was running)",
                ended=time.time(),
            )
    return get_job(job_id, db)


def log_tail(job_id: int, db: str | os.PathLike[str] | None = None, lines: int = 50) -> list[str]:
    """The last ``lines`` lines of the job's runner log (the stored tail when the file is gone)."""
    row = _row(_reader(db), job_id)
    if row.log_path and Path(row.log_path).exists():
        return liveness.tail_lines(Path(row.log_path), lines)
    return (row.log_tail or "").splitlines()[-lines:]


def runner_pids(db: str | os.PathLike[str] | None = None) -> dict[int, int]:
    """Runner pid -> job id of the running jobs (each runner leads its own process group), so a
    GPU process can be named as one of ours."""
    if not paths.db_path(db).exists():  # no database, no job: and none is made to find that out
        return {}
    rows = _reader(db).job_rows(states=(JobState.RUNNING,))
    return {int(r.pid): r.id for r in rows if r.pid}
