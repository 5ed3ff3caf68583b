"""``zbench jobs``: today's jobs and those still queued or running (every day's with ``--all``),
as a table fitted to the terminal or as JSON, filtered by the results' fields and by state.

Exit status: 0 (an empty list too), 2 a filter that names what no job can have (a typo).
"""

from __future__ import annotations

import datetime as dt
import json
import time
from dataclasses import replace

from zbench.cli.follow import Db, _console
from zbench.cli.jobs import _job_dict
from zbench.cli.options import err
from zbench.cli.tableview import print_table
from zbench.contract.options import one_of
from zbench.jobs import api
from zbench.jobs.apart import named_apart
from zbench.jobs.api import JobInfo, shared_rate_unit, speed_cell, speed_title
from zbench.jobs.states import JobState
from zbench.store import StoreError
from zbench.textfit import Column

# Least important columns go first at narrow widths; the free-text reason is cut before.
JOB_COLUMNS = (
    Column("ID", right=True),
    Column("State"),
    Column("Job", priority=0),
    Column("Tag", priority=2),  # shown when a job has one (run, demo and suite --tag)
    Column("GPUs", priority=2),
    Column("Phase", priority=3),
    Column("Step", priority=4, right=True),
    Column("Samples/s", "smp/s", priority=1, right=True),  # its title: the speeds' one unit
    Column("Started", priority=5),
    Column("Reason", priority=1, flex=True, min_width=16),
)
SPEED = "Samples/s"  # the speed column of JOB_COLUMNS: titled by its speeds' one unit


def _columns(jobs: list[JobInfo], unit: str | None, reasons: bool) -> list[tuple[str, Column]]:
    """The table's columns for these jobs, keyed by JOB_COLUMNS' headers: a Tag column when one
    has a tag, a Reason column when one has a reason, and the speed column titled by its one
    unit (``Frames/s``), else Rate."""
    title = speed_title(unit)
    keep = {"Tag": any(j.tag for j in jobs), "Reason": reasons}
    columns = []
    for column in JOB_COLUMNS:
        if not keep.get(column.header, True):
            continue
        if column.header == SPEED and title != SPEED:  # its short title says samples
            columns.append((SPEED, replace(column, header=title, short=None)))
        else:
            columns.append((column.header, column))
    return columns


def _when(t: float | None) -> str:
    """Time of day for today, the date too for older jobs: keeps the table inside 80 columns."""
    if not t:
        return ""
    when = dt.datetime.fromtimestamp(t)
    return when.strftime("%H:%M:%S" if when.date() == dt.date.today() else "%Y-%m-%d %H:%M")


def _filtered(jobs: list[JobInfo], filters: dict[str, str]) -> list[JobInfo]:
    """The jobs each given filter keeps (``workload``, ..., ``tag``: the job's own field)."""
    # A field the job has not got (a queued max job's precision: its runner decides) matches none.
    return [
        j
        for j in jobs
        if all(getattr(j, k) is not None and str(getattr(j, k)) == v for k, v in filters.items())
    ]


def _filter_problem(jobs: list[JobInfo], filters: dict[str, str]) -> str | None:
    """Where a filter names what no job can have (a typo): the one line that says so; a name
    the tables know, or a stored job has, is no error (an empty list)."""
    states = [s.value for s in JobState]
    if "state" in filters and filters["state"] not in states:
        return f"--state: {one_of(states, filters['state'])}"
    if "suite" in filters and all(j.suite != filters["suite"] for j in jobs):
        return f"no jobs of suite {filters['suite']!r} in the database"  # as `zbench results`
    names = [k for k in ("workload", "framework", "mode", "precision") if k in filters]
    if not names:
        return None
    from zbench.results.api import FILTER_NAMES  # only to tell a typo from an empty list

    for name in names:
        known = FILTER_NAMES[name] | {str(v) for j in jobs if (v := getattr(j, name)) is not None}
        if filters[name] not in known:
            return f"--{name}: {one_of(sorted(known), filters[name])}"
    return None


def no_jobs(filters: dict[str, str] | None, all_jobs: bool, where: str = "") -> str:
    """The line for a jobs listing with no row: which filters matched nothing, on which hosts
    (``where``, for ``jobs --hosts``), and that ``--all`` shows earlier days."""
    given = "; ".join(f"{k} {v}" for k, v in (filters or {}).items())
    line = f"No jobs match ({given})" if given else "No jobs"
    if where:
        line += f" on {where}"
    if not all_jobs:
        line += " today (--all shows every job)"
    return line + "."


def list_jobs(
    *,
    all_jobs: bool,
    db: Db,
    json_out: bool,
    wide: bool = False,
    filters: dict[str, str] | None = None,
) -> int:
    """List today's jobs (all with --all), table or JSON, after marking a dead supervisor's lost;
    ``filters``: only the jobs whose field (workload, ..., tag, state) has the value given."""
    try:
        api.reconcile(db)
    except StoreError as exc:
        if exc.exit_code != 1:  # the file itself is unusable: nothing to list either
            raise
        # Locked by another program, a full disk: still show what is stored.
        err(f"warning: could not check for a dead supervisor: {exc}")
    stored = api.list_jobs(db)
    jobs = _filtered(stored, filters or {})
    if not jobs and filters:
        problem = _filter_problem(stored, filters)
        if problem:
            err(problem)
            return 2
    if not all_jobs:
        midnight = dt.datetime.combine(dt.date.today(), dt.time()).timestamp()
        jobs = [j for j in jobs if not j.finished or (j.ended or j.created) >= midnight]
    if json_out:
        print(json.dumps([_job_dict(j) for j in jobs], indent=2, default=list))
        return 0
    console = _console()
    if not jobs:
        console.print(no_jobs(filters, all_jobs))
        return 0
    now = time.time()
    notes = {j.id: _note(j, now) for j in jobs}
    # Each job's qualifiers in the results' order; look-alikes say what sets them apart.
    names = named_apart(jobs)
    unit = shared_rate_unit(jobs)
    columns = _columns(jobs, unit, reasons=any(notes.values()))
    rows = []
    for j in jobs:
        gpus = ",".join(str(g) for g in j.gpu_ids) if j.gpu_ids else ""
        gpus = "cpu" if j.gpu_ids == () and j.state != JobState.QUEUED else gpus
        step = f"{j.step}/{j.total}" if j.step is not None else ""
        cells = {
            "ID": str(j.id),
            "State": j.state,
            "Job": names[j.id],
            "Tag": j.tag or "",
            "GPUs": gpus,
            "Phase": j.phase or "",
            "Step": step,
            SPEED: speed_cell(j.samples_per_s, j.rate_unit, unit),
            "Started": _when(j.started),
            # Plain text (print_table never reads markup): reasons quote runner errors verbatim.
            "Reason": " ".join(notes[j.id].split()),
        }
        rows.append([cells[key] for key, _ in columns])
    print_table(console, [c for _, c in columns], rows, wide=wide)
    return 0


def _note(job: JobInfo, now: float) -> str:
    """The reason column: the stored reason, or a warning for a running job that went quiet."""
    quiet = job.quiet_s(now)
    if quiet is not None and quiet >= api.QUIET_WARN_S:
        return f"no event from the runner for {quiet / 60:.0f} min (hung on I/O?)"
    return job.reason or ""
