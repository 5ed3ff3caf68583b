"""The TUI's one door into the jobs and results packages.

The app takes a :class:`Services` object in its constructor: :class:`LocalServices` calls
``zbench.jobs.api`` and ``zbench.results`` (imported when first used, so the first frame does not pay for
them); tests pass a fake with canned jobs and results that records what was submitted and cancelled.
Every method may block (SQLite, files), so the app calls them from thread workers only.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from zbench.jobs.states import FINISHED as JOB_FINISHED

if TYPE_CHECKING:  # the first frame needs neither the runner's nor the demos' option tables
    from zbench.contract.config import RunConfig
    from zbench.contract.demo_options import DemoConfig
    from zbench.jobs.api import JobInfo  # the one job type (imported by LocalServices on use)

FINISHED: tuple[str, ...] = tuple(JOB_FINISHED)


@dataclass(frozen=True)
class LaunchRequest:
    """What the launch dialog asks for: explicit runs, or a named suite (``configs`` empty)."""

    configs: tuple[RunConfig | DemoConfig, ...] = ()
    gpu_ids: tuple[int, ...] | None = None
    timeout_s: float | None = None
    suite: str | None = None


@dataclass(frozen=True)
class Queued:
    """What a launch queued, and what of a suite was skipped here and why (one line each, as
    `zbench suite` prints them)."""

    ids: tuple[int, ...]
    skipped: tuple[str, ...] = ()


class NothingToRun(Exception):
    """A suite none of whose jobs can run on this machine: nothing is queued (as `zbench suite`
    refuses it, exit 1)."""


class Services(Protocol):
    """What the TUI asks of jobs and results: list, submit, cancel, logs, suites, results."""

    def list_jobs(self) -> Sequence[JobInfo]: ...
    def submit(self, request: LaunchRequest) -> Queued: ...
    def cancel(self, job_id: int) -> None: ...
    def log_tail(self, job_id: int, lines: int = 50) -> list[str]: ...
    def throughput(self, job: JobInfo) -> list[tuple[float, float]]: ...
    def verdict(self, job_id: int) -> str | None: ...
    def suite_names(self) -> list[str]: ...
    def suite_summary(self, name: str) -> str: ...
    def query_results(self) -> Sequence[Any]: ...
    def render(self, rows: Sequence[Any], fmt: str) -> str: ...
    def is_database(self, path: Path) -> bool: ...
    def report(self, rows: Sequence[Any], folder: Path) -> Path: ...
    def runner_pids(self) -> dict[int, int]: ...
    def signal_process(self, pid: int, name: str) -> None: ...


class LocalServices:
    """The real thing: jobs run detached through ``jobs.api`` and outlive the TUI."""

    def __init__(self, db: Path | None = None) -> None:
        self.db = db

    def list_jobs(self) -> Sequence[JobInfo]:
        """The TUI's poll: reconcile first (a dead supervisor's jobs become lost, waiting jobs
        get a supervisor; ``api.list_jobs`` itself has no side effects), then list."""
        from zbench.jobs import api
        from zbench.store import StoreError

        with contextlib.suppress(StoreError):  # a busy database: the next poll tries again
            api.reconcile(self.db)
        return api.list_jobs(self.db, include_finished=True)

    def submit(self, request: LaunchRequest) -> Queued:
        from zbench.jobs import api

        if request.suite:
            from zbench.jobs.suites import load_suite

            suite = load_suite(request.suite)
            skipped = tuple(suite.skipped_lines())
            if not suite.specs:
                raise NothingToRun(f"{suite.name}: nothing can run on this machine ({skipped[0]})")
            ids = api.submit(list(suite.specs), db=self.db, suite=suite.name)
            return Queued(tuple(ids), skipped)
        specs = [api.JobSpec(c, request.gpu_ids, request.timeout_s) for c in request.configs]
        return Queued(tuple(api.submit(specs, db=self.db)))

    def cancel(self, job_id: int) -> None:
        from zbench.jobs import api

        api.cancel(job_id, self.db)

    def log_tail(self, job_id: int, lines: int = 50) -> list[str]:
        from zbench.jobs import api

        return api.log_tail(job_id, self.db, lines=lines)

    def throughput(self, job: JobInfo) -> list[tuple[float, float]]:
        """(time, samples/s) of every progress event the job's runner wrote so far."""
        from zbench.contract.events import Progress, read

        if not job.events_path:
            return []
        return [
            (e.t, float(e.samples_per_s))
            for e in read(job.events_path)
            if isinstance(e, Progress) and isinstance(e.samples_per_s, int | float)
        ]

    def verdict(self, job_id: int) -> str | None:
        """The job's bottleneck verdict in one line (``results.bottleneck``); None: no samples."""
        from zbench.results.api import job_verdict

        v = job_verdict(job_id, self.db)
        return None if v is None else v.line()

    def suite_names(self) -> list[str]:
        """The built-in suites, then the user's own (``jobs.suites.user_suites_dir``)."""
        from zbench.jobs.suites import suites

        return list(suites())

    def suite_summary(self, name: str) -> str:
        """What a suite runs and how long it took here (``jobs.suite_info``)."""
        from zbench.jobs.suite_info import summary

        return summary(name, self.db)

    def query_results(self) -> Sequence[Any]:
        from zbench.results.api import query_results

        return query_results(self.db)

    def render(self, rows: Sequence[Any], fmt: str) -> str:
        from zbench.results.export import render

        return render(list(rows), fmt)

    def is_database(self, path: Path) -> bool:
        """Whether writing an export over ``path`` would destroy a database (this one's file or
        any SQLite file), as ``zbench export -o`` refuses."""
        from zbench import paths
        from zbench.store import holds_database

        return holds_database(path, paths.db_path(self.db))

    def report(self, rows: Sequence[Any], folder: Path) -> Path:
        """Write folder/report.md and report.html for exactly these runs; the Markdown's path."""
        from zbench.results.api import Filters
        from zbench.results.report import write_report

        ids = [r.run_id for r in rows if getattr(r, "run_id", None) is not None]
        if not ids:
            raise ValueError("none of the shown rows is a stored run")
        return write_report(folder, Filters(run_ids=ids), self.db).markdown

    def runner_pids(self) -> dict[int, int]:
        """Runner pid -> job id of the running jobs, to name a GPU process as one of ours."""
        from zbench.jobs.api import runner_pids

        return runner_pids(self.db)

    def signal_process(self, pid: int, name: str) -> None:
        """TERM or KILL; raises ``SignalRefused`` (one line) for what the user may not signal."""
        from zbench.telemetry.signals import send

        send(pid, name)
