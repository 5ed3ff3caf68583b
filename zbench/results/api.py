"""Results as reports see them: one ``ResultRow`` per measured run, with the review's columns."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from zbench import paths
from zbench.contract import demos as demo_table
from zbench.contract.config import FRAMEWORKS, MODES, PRECISIONS
from zbench.contract.kinds import (
    BENCHMARK,
    DEMO,
    KINDS,
    PROBE,
    SHOWN_BY,
    in_section,
    result_kinds,
)
from zbench.contract.options import one_of
from zbench.contract.workloads import WORKLOADS
from zbench.store import RunFilter, RunRow, Store

MEASURE = "measure"
# What --workload, --framework and --precision can name before any run has it: the contract's
# tables (workloads, demos, the kinds' own names); stored runs add theirs (Filters.checked).
FILTER_NAMES: dict[str, frozenset[str]] = {
    "workload": frozenset(
        [*WORKLOADS, *demo_table.demos(), *(k.workload for k in KINDS.values() if k.workload)]
    ),
    "framework": frozenset([*FRAMEWORKS, *(k.framework for k in KINDS.values() if k.framework)]),
    # A probe's runs carry its kind as their mode (contract/probe_options), a demo's a mode of its own.
    "mode": frozenset(
        [*MODES, PROBE, *(m for d in demo_table.demos().values() for m in d.modes())]
    ),
    "precision": frozenset(PRECISIONS),
}


@dataclass(frozen=True)
class ResultRow:
    """One run. Telemetry columns are the measured window's means (``None`` when not available):
    GPU/memory-controller utilization in %, GPU memory of the busiest GPU in bytes, CPU utilization
    of the runner's process tree in % of one core, its resident memory in bytes."""

    workload: str
    framework: str
    mode: str
    gpus: int
    gpu_name: str | None
    precision: str | None
    batch_size: int | None
    samples_per_s: float | None
    gpu_util: float | None = None
    mem_util: float | None = None
    gpu_mem_bytes: float | None = None
    cpu_util: float | None = None
    cpu_mem_bytes: float | None = None
    run_id: int | None = None
    job_id: int | None = None
    created: float | None = None
    tag: str | None = None
    suite: str | None = None
    config: dict[str, Any] = field(default_factory=dict, compare=False)
    env: dict[str, Any] = field(default_factory=dict, compare=False)
    result: dict[str, Any] = field(default_factory=dict, compare=False)
    phases: dict[str, dict[str, Any]] = field(default_factory=dict, compare=False)
    kind: str = field(default="benchmark", compare=False)  # its row of contract.kinds

    def as_dict(self) -> dict[str, Any]:
        return {f: getattr(self, f) for f in self.__dataclass_fields__}


def read_store(db: str | os.PathLike[str] | None) -> Store:
    """The store as results read it: they never write, so a busy database is waited for a few
    seconds at most (``Store.reader``), not the minute and more a writer waits."""
    return Store.reader(paths.db_path(db))


def parse_since(value: str | float | None) -> float | None:
    """``--since`` as a timestamp: a number stays, an ISO date becomes its local midnight."""
    if value is None or isinstance(value, float | int):
        return value
    try:
        day = dt.date.fromisoformat(value)
    except ValueError:
        raise ValueError(f"--since wants a date like 2026-01-31, got {value!r}") from None
    try:  # 0001-01-01 fails: the local-time check steps a day back, into year 0
        return dt.datetime.combine(day, dt.time()).timestamp()
    except (ValueError, OverflowError, OSError):
        raise ValueError(
            f"--since {value}: out of the range of dates the clock can count"
        ) from None


def query_results(
    db: str | os.PathLike[str] | None = None,
    *,
    workload: str | None = None,
    framework: str | None = None,
    mode: str | None = None,
    precision: str | None = None,
    gpus: int | None = None,
    device: str | None = None,
    since: str | float | None = None,
    run_ids: list[int] | None = None,
    job_ids: list[int] | None = None,
    suite_run: int | None = None,
    tag: str | None = None,
    suite: str | None = None,
    kinds: Sequence[str] | None = None,
) -> list[ResultRow]:
    """Runs matching every filter given (``device``: ``cpu``, ``cuda``, or a case-insensitive
    part of the GPU's name; ``gpus``: the GPU count; ``since``: a YYYY-MM-DD date or a timestamp;
    ``suite_run``: any job id of one `zbench suite` call, meaning all its jobs; ``tag``: the tag
    given to `zbench run/suite --tag`; ``suite``: the jobs of every call of the suite of that
    name), oldest first."""
    store = read_store(db)
    named_gpu = device if device and device.lower() not in DEVICE_KINDS else None
    match = RunFilter(
        workload=workload or None,
        framework=framework or None,
        mode=mode or None,
        # probe and demo runs have tables of their own: read only when asked for (contract.kinds)
        kinds=kinds or result_kinds(workload or None, framework or None),
        gpu_name_has=named_gpu,
        since=parse_since(since),
        run_ids=run_ids or None,
        job_ids=_job_filter(store, job_ids, suite_run, tag, suite),
    )
    runs = store.run_rows(match)
    job_list = [r.job_id for r in runs if r.job_id is not None]
    phases = store.phase_aggregates(job_list)
    labels = store.job_labels(job_list)
    rows = [
        row_from_run(r, phases.get(r.job_id or 0, {}), labels.get(r.job_id or 0, {})) for r in runs
    ]
    # The row-level filters the store has no column test for (few rows: read, then kept or not).
    rest = Filters(precision=precision, gpus=gpus, device=device if not named_gpu else None)
    return [r for r in rows if rest.keeps(r)]


def _job_filter(
    store: Store,
    job_ids: list[int] | None,
    suite_run: int | None,
    tag: str | None,
    suite: str | None = None,
) -> list[int] | None:
    """The job ids every job filter given allows (None: no job filter)."""
    sets: list[set[int]] = []
    if job_ids:
        sets.append(set(job_ids))
    if suite_run is not None:
        jobs = store.suite_run_jobs(suite_run)
        if not jobs:
            raise ValueError(f"no job {suite_run} (--suite-run takes any job id of the suite run)")
        sets.append(set(jobs))
    if tag:
        sets.append(set(store.tagged_jobs(tag)))
    if suite:
        jobs = store.suite_jobs(suite)
        if not jobs:
            raise ValueError(f"no jobs of suite {suite!r} in the database")
        sets.append(set(jobs))
    if not sets:
        return None
    return sorted(set.intersection(*sets))


DEVICE_KINDS = ("cpu", "cuda")


def stored_elsewhere(db: str | os.PathLike[str] | None, section: str = "rows") -> str:
    """What an empty, unfiltered table of ``section`` adds when the store holds runs that other
    tables show ("2 demo runs are in `zbench demo results`."), so it never reads as an empty
    store; "" when there are none."""
    store, said = read_store(db), []
    for other, command in SHOWN_BY.items():
        if other == section:
            continue
        kinds = tuple(in_section(other))
        n = store.count_runs(RunFilter(kinds=kinds))
        if n:
            title = KINDS[kinds[0]].title
            said.append(f"{n} {title} run{'s are' if n > 1 else ' is'} in `{command}`")
    return "; ".join(said) + "." if said else ""


def shown_elsewhere(run_id: Any, kind_name: Any, section: str | None = "rows") -> str | None:
    """The line for a run that another table than ``section`` shows ("run 11 is a probe run:
    `zbench report` shows it"); None where ``section`` shows it, or is None (every section)."""
    kind = KINDS.get(str(kind_name or BENCHMARK))
    if kind is None or section is None or kind.section == section:
        return None
    return f"run {run_id} is a {kind.title} run: `{SHOWN_BY[kind.section]}` shows it"


@dataclass(frozen=True)
class Filters:
    """Which runs a command reads: the one filter of ``results``, ``export``, ``report``,
    ``compare``, ``plot``, ``demo results`` and the fleet's exports (``cli/filters.py`` makes
    their options from it); ``run_ids``: ``--run``, and the TUI's chosen rows."""

    workload: str | None = None
    framework: str | None = None
    mode: str | None = None
    precision: str | None = None
    gpus: int | None = None  # how many GPUs a run used
    device: str | None = None  # cpu, cuda, or a part of the GPU's name
    since: str | None = None
    job_ids: list[int] | None = None
    suite_run: int | None = None
    tag: str | None = None
    suite: str | None = None
    run_ids: list[int] | None = None

    def query(self, db: str | os.PathLike[str] | None) -> list[ResultRow]:
        """The stored runs of the results table these filters keep, oldest first; none, because a
        filter names a value that no table knows and no stored run has (a typo), is a ValueError
        that says so. Only the table's own kinds: ``--workload probe`` gave probe runs as rows
        without a figure, and an export of them without the probe's figures."""
        rows = query_results(db, **self.__dict__, kinds=tuple(in_section("rows")))
        return self.checked(rows, db)

    def query_demos(self, db: str | os.PathLike[str] | None) -> list[ResultRow]:
        """The stored demo runs these filters keep, oldest first (``workload``: a demo's name)."""
        rows = query_results(db, **{**self.__dict__, "framework": None}, kinds=(DEMO,))
        return self.checked(rows, db, section="demos")

    def checked(
        self, rows: list[ResultRow], db: str | os.PathLike[str] | None, section: str | None = "rows"
    ) -> list[ResultRow]:
        """``rows``, or when there are none, a ValueError where a filter names what no stored run
        has (a typo), or a run that another table shows (``section``: this one's; None: a reader
        of every section, the report)."""
        if not rows:
            self.check(db, section)
        return rows

    def check(self, db: str | os.PathLike[str] | None, section: str | None = "rows") -> None:
        """A ValueError, in the words every results command uses, where a filter names what no
        stored run has (a typo), a job or run that does not exist, or a run that another table
        than ``section``'s shows. ``compare``, whose runs are named, checks before it reads them;
        the others when their filters selected nothing (``checked``)."""
        named = [n for n in ("workload", "framework", "mode", "precision") if getattr(self, n)]
        if not (named or self.job_ids or self.run_ids):
            return  # nothing to look up (two exported files compared need no database)
        store = read_store(db)
        for name in named:
            value = getattr(self, name)
            known = FILTER_NAMES[name] | store.run_values(name)
            if value not in known:
                raise ValueError(f"--{name}: {one_of(sorted(known), value)}")
        # A job that never existed is a typo; one that exists without a run is an empty table.
        missing = [j for j in self.job_ids or () if store.get_job(j) is None]
        if missing:
            raise ValueError(
                f"no job {', '.join(map(str, missing))} (--job takes a job id; the Run column's "
                "numbers are --run)"
            )
        runs = {r: store.get_run(r) for r in self.run_ids or ()}
        gone = [r for r, run in runs.items() if run is None]
        if gone:
            raise ValueError(
                f"no run {', '.join(map(str, gone))} (--run takes a number from the Run column)"
            )
        for run_id, run in runs.items():  # a run of another table: say which shows it
            shown = shown_elsewhere(run_id, (run or {}).get("kind"), section)
            if shown:
                raise ValueError(shown)

    def elsewhere(self, section: str = "rows") -> str:
        """Where the runs a filter names are, when another table than ``section``'s shows them
        (``--workload probe``, ``--framework demo``, a demo's name; a benchmark's for the demos):
        the sentence an empty table or export adds, or ""."""
        for k in KINDS.values():
            if k.section != section and (
                (k.workload and self.workload == k.workload)
                or (k.framework and self.framework == k.framework)
            ):
                return f"{k.title.capitalize()} runs are in `{SHOWN_BY[k.section]}`."
        name = self.workload
        if section != "demos" and name in demo_table.demos():
            return f"{name} is a demo: its runs are in `zbench demo results --workload {name}`."
        if section == "demos" and (name in WORKLOADS or self.framework in FRAMEWORKS):
            return f"Benchmark runs are in `{SHOWN_BY['rows']}`."
        return ""

    def keeps(self, row: Any) -> bool:
        """Whether a row (e.g. read from an exported file) passes the row-level filters; ``suite``
        and ``suite_run`` need the store's jobs and are not tested here."""
        from zbench.results.identity import gpu_model

        device = (self.device or "").lower()
        on = gpu_model(row)
        start = parse_since(self.since) if self.since else None
        tests = (
            (self.workload, lambda: row.workload == self.workload),
            (self.framework, lambda: row.framework == self.framework),
            (self.mode, lambda: row.mode == self.mode),
            (self.precision, lambda: row.precision == self.precision),
            (self.gpus is not None or None, lambda: row.gpus == self.gpus),
            (device == "cpu" or None, lambda: on == "CPU"),
            (device == "cuda" or None, lambda: on != "CPU"),
            (device not in ("", *DEVICE_KINDS) or None, lambda: device in on.lower()),
            (start, lambda: (row.created or 0) >= (start or 0)),
            (self.job_ids, lambda: row.job_id in (self.job_ids or ())),
            (self.run_ids, lambda: row.run_id in (self.run_ids or ())),
            (self.tag, lambda: getattr(row, "tag", None) == self.tag),
        )
        return all(test() for given, test in tests if given)

    def describe(self) -> str:
        """The filters given, in words ("all runs" for none)."""
        words = {"suite_run": "suite run of job", "job_ids": "jobs", "run_ids": "runs"}
        parts = []
        for name, value in self.__dict__.items():
            if value is not None and value != []:
                shown = ", ".join(map(str, value)) if isinstance(value, list) else value
                parts.append(f"{words.get(name, name)} {shown}")
        return "; ".join(parts) or "all runs"

    def nothing_to(
        self,
        what: str,
        *,
        runs: str = "results",
        first: str = "run a suite first (`zbench suite quick`)",
        section: str | None = "rows",
    ) -> str:
        """The one line for an empty selection: an empty store says how to fill it (``first``:
        how to make ``runs``), filters that match nothing say which (export, report, plot and
        demo results say it alike), and where the runs they name are when another table than
        ``section``'s shows them (None: the report, which shows every section)."""
        given = self.describe()
        if given == "all runs":
            return f"no {runs} to {what}: {first}"
        where = self.elsewhere(section) if section is not None else ""
        return f"no runs match ({given}): nothing to {what}" + (f". {where}" if where else "")


def review_order(rows: list[ResultRow]) -> list[ResultRow]:
    """The review's reading order: model, framework, GPU count, train before infer, precision,
    then oldest first."""

    def rank(value: Any, order: Sequence[str]) -> int:  # unknown names after the known ones
        return order.index(value) if value in order else len(order)

    def key(r: ResultRow) -> tuple[Any, ...]:
        return (
            rank(r.workload, tuple(WORKLOADS)),
            rank(r.framework, FRAMEWORKS),
            r.gpus,
            rank(r.mode, MODES),
            rank(r.precision, PRECISIONS),
            r.created or 0.0,
        )

    return sorted(rows, key=key)


def row_from_run(
    run: RunRow, phases: dict[str, dict[str, Any]], job: dict[str, Any] | None = None
) -> ResultRow:
    """A ResultRow from a stored run, its per-phase aggregates (the measure window) and its job."""
    m = phases.get(MEASURE, {})
    job = job or {}
    return ResultRow(
        workload=run.workload,
        framework=run.framework,
        mode=run.mode,
        gpus=run.gpus,
        gpu_name=run.gpu_name,
        precision=run.precision,
        batch_size=run.batch_size,
        samples_per_s=run.samples_per_s,
        gpu_util=m.get("gpu_util_mean"),
        mem_util=m.get("mem_util_mean"),
        gpu_mem_bytes=m.get("gpu_mem_mean_bytes"),
        cpu_util=m.get("cpu_util_mean"),
        cpu_mem_bytes=m.get("rss_mean_bytes"),
        run_id=run.id,
        job_id=run.job_id,
        created=run.created,
        tag=job.get("tag"),
        suite=job.get("suite"),
        config=run.config,
        env=run.env,
        result=run.result,
        phases=phases,
        kind=run.kind,
    )


def job_verdict(job_id: int, db: str | os.PathLike[str] | None = None) -> Any:
    """The bottleneck verdict (``results.bottleneck.Verdict``) of a job: the one stored with its
    result, else derived from its samples so far (a running job, or one measured before verdicts
    were stored). None when it has no samples."""
    from zbench.results.bottleneck import Verdict, bottleneck

    store = read_store(db)
    stored = store.phase_aggregates([job_id]).get(job_id, {}).get(MEASURE, {}).get("verdict")
    if isinstance(stored, dict):
        return Verdict.from_dict(stored)
    return bottleneck(store.samples(job_id))
