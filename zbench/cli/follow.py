"""Following jobs in the terminal: one progress bar per job, then what failed and why."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence

from rich.console import Console

from zbench.cli.options import err
from zbench.glyphs import glyphs
from zbench.jobs import api
from zbench.jobs.api import JobInfo
from zbench.jobs.eta import PhaseClock, clock
from zbench.jobs.states import JobState
from zbench.store import StoreError

Db = str | os.PathLike[str] | None
POLL_S = 0.5
# How often following jobs also reconciles (jobs.api.reconcile): a supervisor that died is noticed
# and the jobs still waiting get a new one, without anyone running `zbench jobs`.
RECONCILE_S = 5.0
LOG_LINES = 15


def _console(*, stderr: bool = False) -> Console:
    # No markup: suite names, reasons and GPU names are data ("nightly [/x]" must print as is).
    return Console(highlight=False, markup=False, stderr=stderr)


def label(job: JobInfo) -> str:
    """A job in a few words for its progress line: ``#id workload framework mode [precision]``."""
    prec = f" {job.precision}" if job.precision else ""
    return f"#{job.id} {job.workload} {job.framework} {job.mode}{prec}"


# What a job is doing, in words, for the progress line (the runner's phases, then the job states).
DOING = {
    "setup": "setting up",
    "compile": "compiling",
    "warmup": "warming up",
    "measure": "measuring",
    "done": "finishing",
}


def doing(info: JobInfo) -> str:
    """The phase a running job is in (``starting`` before its runner names one), else its state."""
    if info.state == JobState.RUNNING:
        return DOING.get(info.phase or "", info.phase or "starting")
    return info.state


def follow(job_ids: Sequence[int], db: Db, console: Console) -> list[JobInfo] | None:
    """A progress bar per job until all have finished; None when the user pressed Ctrl-C (the jobs
    keep running: they belong to the supervisor, not to this process). A database that is busy or
    full for a while only delays the next look."""
    # Here, not at the top: `zbench jobs` imports this module and never draws a bar (start-up).
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn

    columns = (
        SpinnerColumn("line" if glyphs().ascii else "dots", finished_text=" "),
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        TextColumn("{task.fields[steps]}"),
        TextColumn("{task.fields[rate]}", markup=False),
        # The job's own clock, not Rich's (which stops when a phase's bar is full while the
        # next phase has not reported yet), and the current phase's time left at its rate.
        TextColumn("{task.fields[clock]}", markup=False),
    )
    clocks = PhaseClock()
    try:
        with Progress(*columns, console=console) as progress:
            tasks = {
                i: progress.add_task(f"#{i}", total=None, rate="", steps="", clock="")
                for i in job_ids
            }
            last_reconcile = time.monotonic()
            while True:
                if time.monotonic() - last_reconcile >= RECONCILE_S:
                    last_reconcile = time.monotonic()
                    _reconcile(db)
                try:
                    infos = [api.get_job(i, db) for i in job_ids]
                except StoreError as exc:
                    if exc.exit_code != 1:
                        raise
                    time.sleep(POLL_S)  # busy or full for now: the job runs on; look again
                    continue
                for info in infos:
                    rate = (
                        f"{info.rate()} {info.rate_unit}" if info.samples_per_s is not None else ""
                    )
                    total, step = info.total, info.step or 0
                    if info.finished and not total:  # ended before it reported progress
                        total, step = 1, int(info.state == JobState.DONE)
                    elif info.state == JobState.DONE:
                        step = total or step  # done: its last phase ran to the end
                    left = clocks.left(info)
                    when = clock(clocks.elapsed(info))
                    if left is not None:
                        when += f" ~{clock(left)} left"
                    progress.update(
                        tasks[info.id],
                        description=f"{label(info)} [{doing(info)}]",
                        completed=step,
                        total=total,
                        rate=rate,
                        # No "0/?" while it sets up or warms up: the phase says what it does.
                        steps=f"{step:,}/{total:,}" if total else "",
                        clock=when,
                    )
                if all(i.finished for i in infos):
                    return infos
                time.sleep(POLL_S)
    except KeyboardInterrupt:
        ids = " ".join(str(i) for i in job_ids)
        which = (
            f"the job keeps running (id {ids})"
            if len(job_ids) == 1
            else f"the jobs keep running (ids {ids})"
        )
        console.print(
            f"Detached: {which}. Follow with `zbench jobs`; stop with `zbench cancel ID`."
        )
        return None


def _reconcile(db: Db) -> None:
    """:func:`jobs.api.reconcile`; a database busy for now is looked at again next time."""
    try:
        api.reconcile(db)
    except StoreError as exc:
        if exc.exit_code != 1:
            raise


def _report_failure(info: JobInfo, db: Db) -> int:
    """Say why a job did not end ``done``; the exit status: 2 when its runner refused the input
    (one line: the reason is the runner's own), else 1 (with the log's last lines)."""
    err(f"job {info.id} {info.state}: {info.reason or 'no reason recorded'}")
    if info.refused:
        return 2
    tail = api.log_tail(info.id, db, LOG_LINES)
    if tail:
        print(f"--- last lines of {info.log_path} ---", file=sys.stderr)
        print("\n".join(tail), file=sys.stderr)
    return 1
