"""The ``zbench`` command: thin Typer commands, each delegating to one package function.

Imports of the packages happen inside the commands so that ``zbench --help`` stays fast and no command
pays for another's dependencies. This module never imports torch or tensorflow (a test enforces it).
Exit codes: 0 ok, 1 the work failed, 2 bad usage or input (with a one-line reason).
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(
    name="zbench",
    help="A terminal workbench for GPU workstations: live telemetry, benchmarks, reports.",
    context_settings={"help_option_names": ["-h", "--help"]},
    rich_markup_mode="rich",
    no_args_is_help=False,
    add_completion=False,
    pretty_exceptions_enable=False,
)

DbOpt = Annotated[
    Path | None,
    typer.Option(
        "--db",
        help="Results database (default: $ZBENCH_DB or the data directory).",
        envvar="ZBENCH_DB",
        show_default=False,
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable JSON output.")]
TagOpt = Annotated[
    str | None,
    typer.Option(
        help="Only runs of jobs given this tag (`zbench run/suite --tag`).", show_default=False
    ),
]
SuiteRunOpt = Annotated[
    int | None,
    typer.Option(
        "--suite-run",
        help="Only the runs of one `zbench suite` call (any of its job ids).",
        show_default=False,
    ),
]
JobOpt = Annotated[
    list[int] | None,
    typer.Option("--job", help="Only the run of this job (repeatable).", show_default=False),
]
WorkloadOpt = Annotated[str | None, typer.Option(help="Only this workload.", show_default=False)]
FrameworkOpt = Annotated[str | None, typer.Option(help="torch or tf.", show_default=False)]
GpuOpt = Annotated[
    str | None,
    typer.Option(help="Only runs on GPUs whose name contains this.", show_default=False),
]
SinceOpt = Annotated[
    str | None,
    typer.Option(help="Only runs on or after this date (YYYY-MM-DD).", show_default=False),
]
WideOpt = Annotated[
    bool, typer.Option("--wide", help="Every column, however wide (default: fit the terminal).")
]


def _exit(code: int | None) -> None:
    if code:
        raise typer.Exit(code)


@app.callback(invoke_without_command=True)
def _root(
    ctx: typer.Context,
    *,
    replay: Annotated[
        Path | None,
        typer.Option(help="Run the dashboard from a recorded trace (JSONL).", show_default=False),
    ] = None,
    interval: Annotated[
        float | None,
        typer.Option(
            help="Dashboard refresh in seconds (default: $ZBENCH_INTERVAL, the config file, "
            "the last one used, else 1).",
            min=0.05,
            show_default=False,
        ),
    ] = None,
    db: DbOpt = None,
    hosts: Annotated[
        str | None,
        typer.Option(
            help="Open the TUI on several machines over ssh: HOST,HOST... or `all` (the config "
            "file's [hosts]). See docs/multinode.md.",
            show_default=False,
        ),
    ] = None,
    version: Annotated[bool, typer.Option("--version", help="Print the version and exit.")] = False,
) -> None:
    """Without a command: open the TUI."""
    if version:
        from zbench import __version__

        typer.echo(f"zbench {__version__}")
        raise typer.Exit()
    if ctx.invoked_subcommand is None and hosts is not None:
        from zbench.tui import fleet_app

        _exit(fleet_app.run(hosts, interval))
    if ctx.invoked_subcommand is None:
        from zbench.tui.app import run_app

        _exit(run_app(replay=replay, interval=interval, db=db))


# --- telemetry -------------------------------------------------------------------------------------


@app.command()
def monitor(
    *,
    interval: Annotated[float, typer.Option(help="Seconds between samples.", min=0.05)] = 0.5,
    count: Annotated[
        int | None, typer.Option(help="Stop after this many samples.", min=1, show_default=False)
    ] = None,
    gpus: Annotated[
        str | None, typer.Option(help="GPU indices to show, e.g. 0,1.", show_default=False)
    ] = None,
    record: Annotated[
        Path | None,
        typer.Option(help="Also write every sample to this trace file.", show_default=False),
    ] = None,
    replay: Annotated[
        Path | None,
        typer.Option(help="Play a recorded trace instead of the hardware.", show_default=False),
    ] = None,
    json_out: Annotated[
        bool, typer.Option("--json", help="One JSON object per sample on stdout.")
    ] = False,
    once: Annotated[
        bool,
        typer.Option(help="Print one sample and exit (samples twice, so rates are real)."),
    ] = False,
    wide: WideOpt = False,
    db: DbOpt = None,
) -> None:
    """Live GPU, NVLink, host and GPU-process telemetry in the terminal."""
    from zbench.telemetry.monitor import run_monitor

    def runners() -> dict[int, int]:
        from zbench.jobs.api import runner_pids

        return runner_pids(db)

    _exit(
        run_monitor(
            interval=interval,
            count=count,
            gpus=gpus,
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
    from zbench.telemetry.doctor import run_doctor

    _exit(run_doctor(json_out=json_out, wide=wide))


@app.command()
def probe(
    *,
    gpus: Annotated[
        str | None, typer.Option(help="GPU indices to probe (default: all).", show_default=False)
    ] = None,
    quick: Annotated[bool, typer.Option(help="Smaller sizes, fewer repeats.")] = False,
    json_out: JsonOpt = False,
) -> None:
    """Micro-benchmarks: matmul TFLOPS, memory and PCIe bandwidth, GPU-to-GPU bandwidth vs peak."""
    from zbench.jobs.probe import run_probe

    _exit(run_probe(gpus=gpus, quick=quick, json_out=json_out))


# --- jobs ------------------------------------------------------------------------------------------


@app.command(
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    epilog="Workload options (passed to the runner): see `python -m zbench.runners --help`.",
)
def run(
    ctx: typer.Context,
    workload: Annotated[str, typer.Argument(help="resnet50, vgg16, fasterrcnn, unet2d or unet3d.")],
    *,
    gpu_ids: Annotated[
        str | None,
        typer.Option(
            "--gpu-ids",
            help="Which GPUs the job may use, e.g. 0,1 (default: the first free ones).",
            show_default=False,
        ),
    ] = None,
    timeout: Annotated[
        float | None,
        typer.Option(help="Cancel the job after this many seconds.", show_default=False),
    ] = None,
    detach: Annotated[bool, typer.Option(help="Start the job and return at once.")] = False,
    tag: Annotated[
        str | None, typer.Option(help="A name to find this run by later (--tag on results).")
    ] = None,
    nodes: Annotated[
        str | None,
        typer.Option(
            help="Run across machines: HOST[:GPUS],... (ssh; GPUS like 0+1) or `slurm` in an "
            "allocation; --gpus is per node. See docs/multinode.md.",
            show_default=False,
        ),
    ] = None,
    db: DbOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Run one benchmark job; other options (--framework, --mode, --precision, --batch-size, ...) go to the runner."""
    from zbench.jobs.commands import run_job

    _exit(
        run_job(
            workload,
            list(ctx.args),
            gpu_ids=gpu_ids,
            timeout=timeout,
            detach=detach,
            db=db,
            json_out=json_out,
            tag=tag,
            nodes=nodes,
        )
    )


def _demo_epilog() -> str:
    from zbench.demos.registry import demos  # standard library only
    from zbench.demos.runner import options_help

    parts = ["Demo options (after the name; checked by the demo's parser):"]
    for entry in demos().values():
        parts.append(f"[b]{entry.name}[/b]: {entry.title}")
        parts += [f"  {line}" for line in options_help(entry).splitlines()]
    return "\n\n".join(parts)


@app.command(
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    epilog=_demo_epilog(),
)
def demo(
    ctx: typer.Context,
    name: Annotated[
        str, typer.Argument(help="A demo (snake, motion), or `results` for the stored results.")
    ],
    *,
    play: Annotated[
        Path | None,
        typer.Option(help="snake: replay a trained checkpoint here.", show_default=False),
    ] = None,
    human: Annotated[bool, typer.Option(help="snake: play it yourself (arrow keys).")] = False,
    timeout: Annotated[
        float | None,
        typer.Option(help="Cancel the job after this many seconds.", show_default=False),
    ] = None,
    detach: Annotated[bool, typer.Option(help="Start the job and return at once.")] = False,
    fmt: Annotated[
        str | None,
        typer.Option("--format", help="With `results`: md, csv or json.", show_default=False),
    ] = None,
    db: DbOpt = None,
) -> None:
    """Fun GPU demos as jobs (Snake by RL, talking-head motion transfer), live in the TUI."""
    from zbench.jobs import demo_commands

    if name == "results":
        _exit(demo_commands.show_results(fmt, db=db))
        return
    if play is not None or human:
        if name != "snake":
            typer.echo(f"zbench: --play and --human are for snake, not {name!r}", err=True)
            raise typer.Exit(2)
        if play is not None and not play.is_file():
            typer.echo(f"zbench: no checkpoint at {play}", err=True)
            raise typer.Exit(2)
        import subprocess
        import sys

        board = "12"
        if "--board" in ctx.args[:-1]:
            board = ctx.args[ctx.args.index("--board") + 1]
        # Its own process: the player needs torch, which this process must never import.
        cmd = [sys.executable, "-m", "zbench.demos.snake.play", "--board", board]
        _exit(subprocess.call([*cmd, str(play)] if play else cmd))
        return
    _exit(demo_commands.run_demo([name, *ctx.args], timeout=timeout, detach=detach, db=db))


@app.command()
def suite(
    name: Annotated[str, typer.Argument(help="review, quick, precision, or a suite .toml file.")],
    *,
    detach: Annotated[bool, typer.Option(help="Start the suite and return at once.")] = False,
    dry_run: Annotated[
        bool, typer.Option(help="List the jobs and what would be skipped, run nothing.")
    ] = False,
    tag: Annotated[
        str | None, typer.Option(help="A name to find these runs by later (--tag on results).")
    ] = None,
    db: DbOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Run a list of jobs unattended; it keeps running if the terminal goes away."""
    from zbench.jobs.commands import run_suite

    _exit(run_suite(name, detach=detach, dry_run=dry_run, db=db, json_out=json_out, tag=tag))


@app.command()
def jobs(
    *,
    all_jobs: Annotated[
        bool, typer.Option("--all", help="Include finished jobs from every day.")
    ] = False,
    hosts: Annotated[
        str | None,
        typer.Option(help="Gather from these machines over ssh: HOST,HOST,...", show_default=False),
    ] = None,
    db: DbOpt = None,
    json_out: JsonOpt = False,
    wide: WideOpt = False,
) -> None:
    """Jobs, live or finished, with their state."""
    if hosts is not None:
        from zbench.fleet.commands import fleet_jobs

        _exit(fleet_jobs(hosts, all_jobs=all_jobs, json_out=json_out))
        return
    from zbench.jobs.commands import list_jobs

    _exit(list_jobs(all_jobs=all_jobs, db=db, json_out=json_out, wide=wide))


@app.command()
def cancel(
    job_id: Annotated[int, typer.Argument(help="The job's id (see `zbench jobs`).")],
    *,
    grace: Annotated[
        float, typer.Option(help="Seconds between SIGTERM and SIGKILL.", min=0)
    ] = 10.0,
    db: DbOpt = None,
) -> None:
    """Cancel a queued or running job."""
    from zbench.jobs.commands import cancel_job

    _exit(cancel_job(job_id, grace=grace, db=db))


# --- results ---------------------------------------------------------------------------------------


@app.command()
def results(
    *,
    workload: WorkloadOpt = None,
    framework: FrameworkOpt = None,
    gpu: GpuOpt = None,
    since: SinceOpt = None,
    suite_run: SuiteRunOpt = None,
    job: JobOpt = None,
    tag: TagOpt = None,
    db: DbOpt = None,
    json_out: JsonOpt = False,
    wide: WideOpt = False,
) -> None:
    """The review's table of results."""
    from zbench.results.api import Filters
    from zbench.results.commands import show_results

    filters = Filters(workload, framework, gpu, since, job or None, suite_run, tag)
    _exit(show_results(filters=filters, db=db, json_out=json_out, wide=wide))


@app.command()
def export(
    *,
    fmt: Annotated[str, typer.Option("--format", "-f", help="md, csv or json.")] = "md",
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="File to write (default: stdout).", show_default=False),
    ] = None,
    workload: WorkloadOpt = None,
    framework: FrameworkOpt = None,
    since: SinceOpt = None,
    suite_run: SuiteRunOpt = None,
    job: JobOpt = None,
    tag: TagOpt = None,
    db: DbOpt = None,
    samples: Annotated[
        bool,
        typer.Option(
            "--samples", help="The raw samples instead (one row per sample and GPU; csv or jsonl)."
        ),
    ] = False,
    hosts: Annotated[
        str | None,
        typer.Option(help="Gather from these machines over ssh: HOST,HOST,...", show_default=False),
    ] = None,
) -> None:
    """Export results as Markdown, CSV or JSON, with the machine and any warnings, or (--samples)
    their raw samples."""
    if hosts is not None:
        from zbench.fleet.commands import fleet_export

        _exit(fleet_export(hosts, fmt=fmt, output=output))
        return
    from zbench.results.api import Filters
    from zbench.results.commands import export_results

    filters = Filters(workload, framework, None, since, job or None, suite_run, tag)
    _exit(export_results(fmt=fmt, output=output, filters=filters, db=db, samples=samples))


@app.command()
def report(
    *,
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Folder for report.md, report.html, figures/.")
    ] = Path("zbench-report"),
    workload: WorkloadOpt = None,
    framework: FrameworkOpt = None,
    gpu: GpuOpt = None,
    since: SinceOpt = None,
    suite_run: SuiteRunOpt = None,
    job: JobOpt = None,
    tag: TagOpt = None,
    suite: Annotated[
        str | None,
        typer.Option(
            help="Only the jobs of every call of this suite (e.g. review).", show_default=False
        ),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress lines.")] = False,
    db: DbOpt = None,
) -> None:
    """The whole review as one document: report.md and a self-contained report.html."""
    from zbench.results.api import Filters
    from zbench.results.report_commands import report_command

    filters = Filters(workload, framework, gpu, since, job or None, suite_run, tag, suite)
    _exit(report_command(output, filters, db, quiet=quiet))


@app.command()
def compare(
    a: Annotated[str, typer.Argument(help="A run id, or an exported JSON file (FILE:RUN).")],
    b: Annotated[str, typer.Argument(help="A run id, or an exported JSON file (FILE:RUN).")],
    *,
    unlike: Annotated[
        bool, typer.Option(help="Compare runs whose setups differ, naming each difference.")
    ] = False,
    since: SinceOpt = None,
    suite_run: SuiteRunOpt = None,
    job: JobOpt = None,
    tag: TagOpt = None,
    db: DbOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Compare two like runs (or exported files from different machines) as ratios."""
    from zbench.results.api import Filters
    from zbench.results.commands import compare_runs

    filters = Filters(None, None, None, since, job or None, suite_run, tag)
    _exit(compare_runs(a, b, db=db, json_out=json_out, unlike=unlike, filters=filters))


@app.command()
def plot(
    *,
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Folder for the PNG charts.")
    ] = Path("zbench-charts"),
    since: SinceOpt = None,
    suite_run: SuiteRunOpt = None,
    job: JobOpt = None,
    tag: TagOpt = None,
    db: DbOpt = None,
) -> None:
    """PNG charts of the review's figures, with published figures beside yours where they compare."""
    from zbench.results.api import Filters
    from zbench.results.commands import plot_results

    filters = Filters(None, None, None, since, job or None, suite_run, tag)
    _exit(plot_results(output=output, db=db, filters=filters))


def main() -> None:
    from zbench.errors import ZbenchError, os_error_exit

    try:
        try:
            app()
        finally:
            try:  # here, not at exit: a full disk or a closed pipe is reported below
                sys.stdout.flush()
            except OSError as exc:
                exc.filename = exc.filename or "standard output"
                raise
    except ZbenchError as exc:
        typer.echo(f"zbench: {exc}", err=True)
        raise SystemExit(exc.exit_code) from None
    except OSError as exc:  # a full disk, a read-only folder, a file where a folder should be
        message, code = os_error_exit(exc)
        print(f"zbench: {message}", file=sys.stderr)
        with contextlib.suppress(OSError):  # stdout may be what failed: do not fail again at exit
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise SystemExit(code) from None


if __name__ == "__main__":
    main()
