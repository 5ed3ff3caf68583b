"""The Typer commands of results: ``results``, ``export``, ``report``, ``compare``, ``plot``; each
takes the one filter set (``cli/filters.py``) as a ``Filters``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from zbench.cli.filters import with_filters
from zbench.cli.options import (
    HOSTS_HELP,
    JsonOpt,
    ReadDbOpt,
    WideOpt,
    _exit,
    app,
    format_option,
    path_option,
)
from zbench.cli.outcome import fail

if TYPE_CHECKING:  # with_filters leaves it unevaluated: no command's start-up imports the results
    from zbench.results.api import Filters

# --- results ---------------------------------------------------------------------------------------


@app.command()
@with_filters
def results(
    *, filters: Filters, db: ReadDbOpt = None, json_out: JsonOpt = False, wide: WideOpt = False
) -> None:
    """The review's table of results."""
    from zbench.cli.results import show_results

    _exit(show_results(filters=filters, db=db, json_out=json_out, wide=wide))


@app.command()
@with_filters
def export(
    *,
    fmt: Annotated[str | None, format_option("what -o's name ends in, else md")] = None,
    output: Annotated[
        Path | None,
        path_option(
            "--output", "-o", help="File to write (default, or -: stdout).", show_default=False
        ),
    ] = None,
    filters: Filters,
    db: ReadDbOpt = None,
    samples: Annotated[
        bool,
        typer.Option(
            "--samples", help="The raw samples instead (one row per sample and GPU; csv or jsonl)."
        ),
    ] = False,
    hosts: Annotated[
        str | None,
        typer.Option(
            help=f"Gather every machine's results over ssh: {HOSTS_HELP}; json or csv, no "
            "--samples.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Export results as Markdown, CSV or JSON, with the machine and any warnings.

    With --samples: the raw samples instead, one row per sample and GPU."""
    if hosts is not None:
        from zbench.cli.fleet import fleet_export

        if samples:
            _exit(fail("--samples reads this machine's database: not with --hosts"))

        _exit(fleet_export(hosts, fmt=fmt, output=output, filters=filters))
        return
    from zbench.cli.results import export_results

    _exit(export_results(fmt=fmt, output=output, filters=filters, db=db, samples=samples))


@app.command()
@with_filters
def report(
    *,
    output: Annotated[
        Path, path_option("--output", "-o", help="Folder for report.md, report.html, figures/.")
    ] = Path("zbench-report"),
    filters: Filters,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress lines.")] = False,
    db: ReadDbOpt = None,
) -> None:
    """The whole review as one document: report.md and a self-contained report.html."""
    from zbench.cli.report import report_command

    _exit(report_command(output, filters, db, quiet=quiet))


@app.command()
@with_filters
def compare(
    a: Annotated[str, typer.Argument(help="A run id, or an exported JSON file (FILE:RUN).")],
    b: Annotated[str, typer.Argument(help="A run id, or an exported JSON file (FILE:RUN).")],
    *,
    unlike: Annotated[
        bool, typer.Option(help="Compare runs whose setups differ, naming each difference.")
    ] = False,
    filters: Filters,
    db: ReadDbOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Compare two like runs (or exported files from different machines) as ratios.

    The filters pick the one run of an exported file and must hold for both runs."""
    from zbench.cli.results import compare_runs

    _exit(compare_runs(a, b, db=db, json_out=json_out, unlike=unlike, filters=filters))


@app.command()
@with_filters
def plot(
    *,
    output: Annotated[
        Path, path_option("--output", "-o", help="Folder for the PNG charts.")
    ] = Path("zbench-charts"),
    filters: Filters,
    db: ReadDbOpt = None,
) -> None:
    """PNG charts of the review's figures, with published figures beside yours where they compare."""
    from zbench.cli.results import plot_results

    _exit(plot_results(output=output, db=db, filters=filters))
