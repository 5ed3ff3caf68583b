"""What a suite runs and how long it took here before, in a line each (the launch dialog shows them).

The time is never guessed: it is the sum, over the suite's jobs, of the median duration of finished
jobs of the same suite, workload, framework and mode in this machine's store; a suite with a job that
never finished here says so instead.
"""

from __future__ import annotations

import os
import statistics

from zbench import paths
from zbench.jobs.states import JobState
from zbench.jobs.suites import Suite, SuiteError, load_suite
from zbench.store import Store

Db = str | os.PathLike[str] | None


def what_it_runs(suite: Suite) -> str:
    """``6 jobs: resnet50 (torch, tf; train, infer), unet2d (torch, tf; train)``, and what is
    skipped here."""
    by_workload: dict[str, tuple[list[str], list[str]]] = {}
    for spec in suite.specs:
        c = spec.config
        fws, modes = by_workload.setdefault(c.workload, ([], []))
        fws.extend([c.framework] if c.framework not in fws else [])
        modes.extend([c.mode] if c.mode not in modes else [])
    parts = [f"{w} ({', '.join(f)}; {', '.join(m)})" for w, (f, m) in by_workload.items()]
    n = len(suite.specs)
    text = f"{n} job{'s' if n != 1 else ''}: " + ", ".join(parts) if n else "no job runs here"
    if suite.skipped:
        text += f"; {len(suite.skipped)} skipped here ({suite.skipped[0][1]})"
    return text


def past_seconds(suite: Suite, db: Db = None) -> float | None:
    """How long the suite took here before (see the module docstring); None when unknown."""
    path = paths.db_path(db)
    if not suite.specs or not path.exists():
        return None
    durations: dict[tuple[str, str, str], list[float]] = {}
    for job in Store(path).jobs(states=[JobState.DONE]):
        if job.get("suite") == suite.name and job.get("started") and job.get("ended"):
            key = (job["workload"], job["framework"], job["mode"])
            durations.setdefault(key, []).append(float(job["ended"]) - float(job["started"]))
    total = 0.0
    for spec in suite.specs:
        c = spec.config
        past = durations.get((c.workload, c.framework, c.mode))
        if not past:
            return None
        total += statistics.median(past)
    return total


def _minutes(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"


def summary(name: str, db: Db = None) -> str:
    """One line for the launch dialog: what the suite runs, and how long it took here."""
    try:
        suite = load_suite(name)
    except SuiteError as exc:
        return str(exc)
    took = past_seconds(suite, db)
    when = f"about {_minutes(took)} here last time" if took else "not timed here yet"
    return f"{suite.description} {what_it_runs(suite)}. {when}.".strip()
