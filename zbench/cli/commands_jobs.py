"""The Typer commands of telemetry and jobs: ``monitor``, ``doctor``, ``cache``, ``probe``, ``run``,
``demo``, ``suite``, ``jobs``, ``cancel``; each body is a function of ``zbench.cli.<area>``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from zbench.cli.filters import with_job_filters
from zbench.cli.options import (
    FORMATS,
    HOSTS_HELP,
    DbOpt,
    JsonOpt,
    ReadDbOpt,
    TagOpt,
    TimeoutOpt,
    WideOpt,
    _exit,
    app,
    err,
    existing_db,
    path_option,
    results_only,
)
from zbench.cli.suite_help import SuiteHelpCommand
from zbench.cli.table_options import DemoCommand, RunCommand, given_argv, with_options
from zbench.contract.config import RUN_OPTIONS
from zbench.contract.workloads import WORKLOADS
from zbench.settings import MAX_INTERVAL, MIN_INTERVAL

# --- telemetry -------------------------------------------------------------------------------------


@app.command()
def monitor(
    *,
    interval: Annotated[
        float,
        typer.Option(help="Seconds between samples.", min=MIN_INTERVAL, max=MAX_INTERVAL),
    ] = 0.5,
    count: Annotated[
        int | None,
        typer.Option(
            help="Stop after this many samples (one more, not shown, primes the rates).",
            min=1,
            show_default=False,
        ),
    ] = None,
    gpu_ids: Annotated[
        str | None,
        typer.Option("--gpu-ids", help="GPU indices to show, e.g. 0,1.", show_default=False),
    ] = None,
    record: Annotated[
        Path | None,
        path_option(help="Also write every sample to this trace file.", show_default=False),
    ] = None,
    replay: Annotated[
        Path | None,
        path_option(help="Play a recorded trace instead of the hardware.", show_default=False),
    ] = None,
    json_out: Annotated[
        bool, typer.Option("--json", help="One JSON object per sample on stdout.")
    ] = False,
    once: Annotated[
        bool,
        typer.Option(
            "--once", help="Print one sample and exit (samples twice, so rates are real)."
        ),
    ] = False,
    wide: WideOpt = False,
    db: DbOpt = None,
) -> None:
    """Live GPU, NVLink, host and GPU-process telemetry in the terminal."""
    from zbench.cli.monitor import run_monitor

    def runners() -> dict[int, int]:
        from zbench.jobs.api import runner_pids

        return runner_pids(db)

    _exit(
        run_monitor(
            interval=interval,
            count=count,
            gpus=gpu_ids,
            record=record,
            replay=replay,
            json_out=json_out,
            once=once,
            wide=wide,
            runners=None if replay is not None else runners,
        )
    )


@app.command()
def doctor(*, json_out: JsonOpt = False, wide: WideOpt = False) -> None:
    """Driver, CUDA, frameworks, GPU specs, topology, and what could skew a benchmark."""
    from zbench.cli.doctor import run_doctor

    _exit(run_doctor(json_out=json_out, wide=wide))


@app.command()
def cache(
    action: Annotated[
        str, typer.Argument(help="`show` (the default) or `clear` (delete it all).")
    ] = "show",
    *,
    json_out: JsonOpt = False,
) -> None:
    """The compile cache under the data directory: its size, or `clear` to delete it."""
    from zbench.cli.cache import run_cache

    _exit(run_cache(action, json_out=json_out))


@app.command()
def probe(
    *,
    gpu_ids: Annotated[
        str | None,
        typer.Option(
            "--gpu-ids", help="GPU indices to probe, e.g. 0,1 (default: all).", show_default=False
        ),
    ] = None,
    quick: Annotated[bool, typer.Option(help="Smaller sizes, fewer repeats.")] = False,
    json_out: JsonOpt = False,
) -> None:
    """Micro-benchmarks: matmul TFLOPS, memory and PCIe bandwidth, GPU-to-GPU bandwidth vs peak."""
    from zbench.cli.probe import run_probe

    _exit(run_probe(gpus=gpu_ids, quick=quick, json_out=json_out))


# --- jobs ------------------------------------------------------------------------------------------


@app.command(
    cls=RunCommand,
    context_settings={"allow_extra_args": True},
    epilog="Arguments after a lone -- go to the launcher untouched (torchrun rendezvous, ...).",
)
@with_options(RUN_OPTIONS)
def run(
    ctx: typer.Context,
    workload: Annotated[str, typer.Argument(help=f"One of: {', '.join(WORKLOADS)}.")],
    *,
    gpu_ids: Annotated[
        str | None,
        typer.Option(
            "--gpu-ids",
            help="Which GPUs the job may use, e.g. 0,1 (default: the first free ones).",
            show_default=False,
        ),
    ] = None,
    timeout: TimeoutOpt = None,
    detach: Annotated[bool, typer.Option(help="Start the job and return at once.")] = False,
    tag: TagOpt = None,
    nodes: Annotated[
        str | None,
        typer.Option(
            help="Run across machines: HOST[:GPUS],... (ssh; GPUS like 0+1; HOST:PORT:GPUS for an ssh "
            "port) or `slurm` in an allocation; --gpus is per node. See docs/multinode.md.",
            show_default=False,
        ),
    ] = None,
    db: DbOpt = None,
    json_out: JsonOpt = False,
    **given: Any,
) -> None:
    """Run one benchmark job: the workload options below are checked before it is queued."""
    from zbench.cli.jobs import run_job, runner_args

    _exit(
        run_job(
            workload,
            runner_args(given_argv(RUN_OPTIONS, given), list(ctx.args)),
            gpu_ids=gpu_ids,
            timeout=timeout,
            detach=detach,
            db=db,
            json_out=json_out,
            tag=tag,
            nodes=nodes,
            gpus_given=given.get("gpus") is not None,
        )
    )


@app.command(
    cls=DemoCommand,
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
)
def demo(
    ctx: typer.Context,
    name: Annotated[
        str,
        typer.Argument(
            help="A demo (snake, motion, tracking), or `results` for the stored results."
        ),
    ],
    *,
    play: Annotated[
        Path | None,
        path_option(help="snake: replay a trained checkpoint here.", show_default=False),
    ] = None,
    human: Annotated[bool, typer.Option(help="snake: play it yourself (arrow keys).")] = False,
    timeout: TimeoutOpt = None,
    detach: Annotated[bool, typer.Option(help="Start the job and return at once.")] = False,
    tag: TagOpt = None,
    fmt: Annotated[
        str | None,
        typer.Option("--format", "-f", help=f"With `results`: {FORMATS}.", show_default=False),
    ] = None,
    json_out: Annotated[bool, results_only(JsonOpt)] = False,
    wide: Annotated[bool, results_only(WideOpt)] = False,
    db: DbOpt = None,
) -> None:
    """Fun GPU demos as jobs (Snake by RL, motion transfer, multi-object tracking), live in the TUI.
    `zbench demo results` takes the filters of `zbench results` (`zbench demo results -h`)."""
    from zbench.cli import demos as demo_commands

    if name == "results":
        from zbench.cli.filters import read_filters
        from zbench.cli.outcome import COMMAND_KEY, fail

        ctx.meta[COMMAND_KEY] = "demo results"  # its errors read as that command's
        run_only = {
            "--play": play is not None,
            "--human": human,
            "--timeout": timeout is not None,
            "--detach": detach,
        }
        given = [flag for flag, on in run_only.items() if on]
        if given:  # were ignored: `demo results --detach` printed the table as if it meant nothing
            raise typer.Exit(fail(f"{given[0]} is for a demo run, not `zbench demo results`"))
        try:  # it reads the database, as `zbench results` does: a missing one is refused
            existing_db(db)
        except typer.BadParameter as exc:
            raise typer.BadParameter(exc.message, ctx=ctx, param_hint="'--db'") from None
        # --tag is the demo command's own option (a run's tag): here, the filter it names.
        filters = read_filters([*ctx.args, *(["--tag", tag] if tag is not None else [])], ctx)
        shown = demo_commands.show_results(
            fmt, json_out=json_out, wide=wide, db=db, filters=filters
        )
        _exit(shown)
        return
    from zbench.cli.outcome import COMMAND_KEY
    from zbench.contract.demos import demos

    if name in demos():  # its errors read as its options' do: `zbench: demo snake: ...`
        ctx.meta[COMMAND_KEY] = f"demo {name}"
    results_only = {"--format": fmt is not None, "--json": json_out, "--wide": wide}
    if given := [flag for flag, on in results_only.items() if on]:
        err(f"{given[0]} is for `zbench demo results`, not a demo run")
        raise typer.Exit(2)
    if play is not None or human:
        if name != "snake":
            err(f"--play and --human are for snake, not {name!r}")
            raise typer.Exit(2)
        if detach or timeout is not None or tag is not None:
            err(
                "--play and --human run in this terminal, not as a job: "
                "no --detach, --timeout or --tag"
            )
            raise typer.Exit(2)
        _exit(demo_commands.play_snake(ctx.args, play, human))
        return
    _exit(demo_commands.run_demo([name, *ctx.args], timeout=timeout, detach=detach, db=db, tag=tag))


@app.command(cls=SuiteHelpCommand)
def suite(
    name: Annotated[str, typer.Argument(help="A suite by name, or a suite .toml file.")],
    *,
    detach: Annotated[bool, typer.Option(help="Start the suite and return at once.")] = False,
    dry_run: Annotated[
        bool, typer.Option(help="List the jobs and what would be skipped, run nothing.")
    ] = False,
    tag: TagOpt = None,
    db: DbOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Run a list of jobs unattended; it keeps running if the terminal goes away."""
    from zbench.cli.jobs import run_suite

    _exit(run_suite(name, detach=detach, dry_run=dry_run, db=db, json_out=json_out, tag=tag))


@app.command()
@with_job_filters
def jobs(
    *,
    filters: dict[str, str],
    all_jobs: Annotated[
        bool, typer.Option("--all", help="Include finished jobs from every day.")
    ] = False,
    hosts: Annotated[
        str | None,
        typer.Option(
            help=f"Gather every machine's jobs over ssh: {HOSTS_HELP}.", show_default=False
        ),
    ] = None,
    db: ReadDbOpt = None,
    json_out: JsonOpt = False,
    wide: WideOpt = False,
) -> None:
    """Today's jobs and those still queued or running, with their state (--all: every day's)."""
    if hosts is not None:
        from zbench.cli.fleet import fleet_jobs

        _exit(fleet_jobs(hosts, all_jobs=all_jobs, json_out=json_out, wide=wide, filters=filters))
        return
    from zbench.cli.jobs_list import list_jobs

    _exit(list_jobs(all_jobs=all_jobs, db=db, json_out=json_out, wide=wide, filters=filters))


@app.command()
def cancel(
    job_ids: Annotated[
        list[int], typer.Argument(help="The id of each job to cancel (see `zbench jobs`).")
    ],
    *,
    grace: Annotated[
        # At most an hour: a runner that ignores SIGTERM must not keep its GPUs for ever (inf).
        float, typer.Option(help="Seconds between SIGTERM and SIGKILL.", min=0, max=3600)
    ] = 10.0,
    db: ReadDbOpt = None,
) -> None:
    """Cancel queued or running jobs."""
    from zbench.cli.jobs import cancel_jobs

    _exit(cancel_jobs(job_ids, grace=grace, db=db))
