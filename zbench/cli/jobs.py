"""``zbench run``, ``suite`` and ``cancel``: thin wrappers that print (``jobs``: jobs_list.py).

Each returns an exit status: 0 ok, 1 the work failed, 2 bad input (with a one-line reason).
"""

from __future__ import annotations

import dataclasses
import json
import sys
from typing import Any

from rich.console import Console
from rich.text import Text

from zbench.cli.follow import Db, _console, _report_failure, follow, label
from zbench.cli.options import err
from zbench.cli.outcome import fail
from zbench.cli.usage import option_line
from zbench.contract.config import RUN_OPTIONS, RunConfig, parse_args
from zbench.contract.kinds import DEMO
from zbench.contract.options import UsageError, typed_flags
from zbench.gpuids import GpuRequestError, check_offered, no_gpu, parse_gpu_ids
from zbench.jobs import api
from zbench.jobs.apart import differing
from zbench.jobs.api import JobInfo, JobNotFound, JobSpec
from zbench.jobs.gpus import offered_gpus
from zbench.jobs.states import JobState
from zbench.textfit import counted


def _check_gpu_ids(ids: tuple[int, ...], config: RunConfig, gpus_given: bool) -> RunConfig:
    """``--gpu-ids`` against the machine and ``--gpus``: the config with ``gpus`` = the number of
    ids, or a :class:`GpuRequestError`."""
    if config.device != "cuda":
        raise GpuRequestError("--gpu-ids needs --device cuda")
    offered, why = offered_gpus()
    check_offered(ids, offered, why=why)
    if gpus_given and config.gpus != len(ids):
        raise GpuRequestError(
            f"--gpu-ids names {counted(len(ids), 'GPU')} but --gpus asks for {config.gpus}"
        )
    return dataclasses.replace(config, gpus=len(ids))


def runner_args(typed: list[str], extra: list[str]) -> list[str]:
    """The runner's argv after the workload: the table's options as typed, then Click's extra
    arguments (a stray word the runner refuses; what followed ``--`` goes to the launcher)."""
    return restore_separator([*typed, *extra], sys.argv)


def restore_separator(runner_args: list[str], argv: list[str]) -> list[str]:
    """Put back the ``--`` that Click consumed: what followed it on the command line goes to the
    launcher untouched (e.g. torchrun rendezvous options), not to the runner's option parser."""
    if "--" not in argv or "--" in runner_args:
        return runner_args
    tail = argv[argv.index("--") + 1 :]
    if tail and runner_args[-len(tail) :] == tail:
        return [*runner_args[: -len(tail)], "--", *tail]
    return runner_args


def _job_dict(info: JobInfo) -> dict[str, Any]:
    return dataclasses.asdict(info)


def _print_results(run_ids: list[int], db: Db, console: Console) -> None:
    from zbench.cli.results import print_results
    from zbench.results.api import query_results

    rows = query_results(db, run_ids=run_ids) if run_ids else []
    if rows:
        print_results(console, rows)


def _print_verdict(job_id: int, db: Db, console: Console) -> None:
    from zbench.results.api import job_verdict

    verdict = job_verdict(job_id, db)
    if verdict is not None:
        console.print(Text(f"Bottleneck: {verdict.line()}"))
        for note in verdict.notes if verdict.findings else ():
            console.print(Text(f"  ({note})", style="dim"))


def run_job(
    workload: str,
    runner_args: list[str],
    *,
    gpu_ids: str | None,
    timeout: float | None,
    detach: bool,
    db: Db,
    json_out: bool,
    tag: str | None = None,
    nodes: str | None = None,
    gpus_given: bool = False,
) -> int:
    """Check the options (one line and exit 2 when bad), queue the job, follow it."""
    try:
        spec = _job_spec(workload, runner_args, gpu_ids, timeout, nodes, gpus_given)
    except GpuRequestError as exc:
        return fail(str(exc))
    except UsageError as exc:
        print(option_line(exc, "run", typed_flags(RUN_OPTIONS)), file=sys.stderr)
        return 2
    [job_id] = api.submit([spec], db=db, tag=tag)
    console = _console()
    infos = None if detach else follow([job_id], db, _console(stderr=True) if json_out else console)
    if infos is None:  # --detach, or Ctrl-C while following: the job runs on; --json says which
        if json_out:
            print(json.dumps({"job_id": job_id}))
        elif detach:
            console.print(f"Job {job_id} queued. Follow it with `zbench jobs`.")
        return 0
    info = infos[0]
    if json_out:
        print(json.dumps(_job_json(info, db), indent=2, default=list))
    elif info.run_id:
        _print_results([info.run_id], db, console)
        _print_verdict(info.id, db, console)
    if info.state != JobState.DONE:
        return _report_failure(info, db)
    return 0


def _job_spec(
    workload: str,
    runner_args: list[str],
    gpu_ids: str | None,
    timeout: float | None,
    nodes: str | None,
    gpus_given: bool,
) -> JobSpec:
    """The job to queue, every option checked here: a UsageError, or a GpuRequestError for the
    GPUs, says what is wrong."""
    ids = parse_gpu_ids(gpu_ids)
    config, _events = parse_args([workload, *runner_args])  # zbench run has no --events
    problem = api.check_config(config)
    if problem:
        raise UsageError(problem)
    if nodes is not None:  # several machines: the GPUs are the nodes' (jobs.nodes)
        from zbench.jobs.nodes import nodes_spec

        return nodes_spec(nodes, config, ids, timeout)
    if ids is not None:
        config = _check_gpu_ids(ids, config, gpus_given)
    elif config.device == "cuda" and not (offered := offered_gpus())[0]:
        raise GpuRequestError(
            no_gpu(
                "add --device cpu to run on the CPU (slow at the review's sizes: --batch-size and "
                "--image-size shrink it; `zbench suite quick` tries each part in minutes)",
                offered[1],
            )
        )
    return JobSpec(config, ids, timeout)


def _job_json(info: JobInfo, db: Db) -> dict[str, Any]:
    """``--json``: the job, its result row and its verdict."""
    from zbench.results.api import job_verdict, query_results

    rows = query_results(db, run_ids=[info.run_id]) if info.run_id else []
    verdict = job_verdict(info.id, db)
    return {
        "job": _job_dict(info),
        "result": rows[0].as_dict() if rows else None,
        "verdict": verdict.as_dict() if verdict else None,
    }


def run_suite(
    name: str, *, detach: bool, dry_run: bool, db: Db, json_out: bool, tag: str | None = None
) -> int:
    """Queue a suite's jobs (or only list them), follow them unless detached; name the skipped."""
    from zbench.jobs.suites import SuiteError, load_suite, shadowed, spec_label

    try:
        suite = load_suite(name)
    except SuiteError as exc:
        err(str(exc))
        return 2
    hidden = shadowed(name)
    if hidden is not None:
        err(f"note: runs the built-in {name!r}, not {hidden} (run that file by its path)")
    console = _console()
    out: dict[str, Any] = {
        "suite": suite.name,
        "jobs": [s.config.as_dict() for s in suite.specs],
        "skipped": [{"job": s.config.as_dict(), "reason": r} for s, r in suite.skipped],
    }
    for line in [] if json_out else suite.skipped_lines():
        console.print(f"skipped: {line}")
    if dry_run:
        if json_out:
            print(json.dumps(out, indent=2))
        else:
            configs = [s.config.as_dict() for s in suite.specs]
            named = [(spec_label(s), c) for s, c in zip(suite.specs, configs, strict=True)]
            for (text, _), setup in zip(named, differing(named), strict=True):
                console.print(f"would run: {text}" + (f" ({setup})" if setup else ""))
            console.print(f"{counted(len(suite.specs), 'job')}, {len(suite.skipped)} skipped")
        return 0
    if not suite.specs:
        err(f"{suite.name}: nothing can run on this machine")
        return 1
    ids = api.submit(list(suite.specs), db=db, suite=suite.name, tag=tag)
    infos = None if detach else follow(ids, db, _console(stderr=True) if json_out else console)
    if infos is None:  # --detach, or Ctrl-C while following: the jobs run on
        if json_out:
            out["job_ids"] = ids
            print(json.dumps(out, indent=2))
        elif detach:
            console.print(
                f"Suite {suite.name}: {counted(len(ids), 'job')} queued ({_id_range(ids)}). "
                "They keep running if this terminal closes; follow with `zbench jobs`."
            )
        return 0
    failed = [i for i in infos if i.state != JobState.DONE]
    if json_out:
        print(
            json.dumps(
                {
                    "suite": suite.name,
                    "jobs": [_job_dict(i) for i in infos],
                    "skipped": [{"job": s.config.as_dict(), "reason": r} for s, r in suite.skipped],
                },
                indent=2,
                default=list,
            )
        )
    else:
        _print_results([i.run_id for i in infos if i.run_id], db, console)
        _print_demo_results([i.id for i in infos if i.kind == DEMO], db, console)
        console.print(
            f"Suite {suite.name}: {len(infos) - len(failed)} done, {len(failed)} failed, "
            f"{len(suite.skipped)} skipped."
        )
    for info in failed:
        err(f"job {info.id} ({label(info)}) {info.state}: {info.reason}")
    return 1 if failed else 0


def _print_demo_results(job_ids: list[int], db: Db, console: Console) -> None:
    """A suite's demo runs, in their demos' own tables (the results table has no demo rows)."""
    if not job_ids:
        return
    from zbench.cli.demos import print_tables
    from zbench.results.demos import demo_results

    rows = [r for r in demo_results(db) if r.job_id in job_ids]
    if rows:
        print_tables(console, rows)


def _id_range(ids: list[int]) -> str:
    return f"id {ids[0]}" if len(ids) == 1 else f"ids {ids[0]}-{ids[-1]}"


def cancel_jobs(job_ids: list[int], *, grace: float, db: Db) -> int:
    """Cancel each job in turn: exit 0 when every one is (or already was) not running any more;
    2, before cancelling any, when an id names no job (one line naming them all)."""
    missing: list[int] = []
    for job_id in dict.fromkeys(job_ids):  # each once, in the order given
        try:
            api.get_job(job_id, db)
        except JobNotFound:
            missing.append(job_id)
    if missing:
        err(f"no job {', '.join(map(str, missing))}")
        return 2
    for job_id in dict.fromkeys(job_ids):
        cancel_job(job_id, grace=grace, db=db)
    return 0


def cancel_job(job_id: int, *, grace: float, db: Db) -> int:
    """Exit 0 when the job is (or already was) not running any more, 2 for an unknown id."""
    try:
        before = api.get_job(job_id, db)
    except JobNotFound as exc:
        err(str(exc))
        return 2
    if before.finished:
        print(f"Job {job_id} already ended ({before.state}); nothing to cancel.")
        return 0
    info = api.cancel(job_id, db, grace=grace)
    if info.finished:
        print(f"Job {job_id} {info.state}.")
    else:
        print(f"Job {job_id}: stopping (SIGTERM now, SIGKILL after {grace:g} s if still running).")
    return 0
