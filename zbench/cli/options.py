"""The Typer app and the options several commands share (``--db``, ``--json``, the run filters)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from zbench.cli.usage import ZbenchGroup

app = typer.Typer(
    cls=ZbenchGroup,
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
