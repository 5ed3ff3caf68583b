"""The Typer app and the options several commands share (``--db``, ``--json``, ``-f/--format``);
the run filters are ``cli/filters.py``."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Any

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


def path_value(value: str | Path) -> Path:
    """A file or folder named on the command line. A blank one (``-o "$OUT"`` with OUT unset) is
    refused: ``Path("")`` is the current folder, where ``report -o ""`` and ``plot -o ""`` wrote
    their files and ``--db ""`` named a folder."""
    if isinstance(value, Path):  # a default, not typed
        return value
    if not value.strip():
        raise typer.BadParameter(f"needs a file or folder name, got {value!r}")
    return Path(value)


def path_option(*decls: str, **extra: Any) -> Any:
    """A ``Path`` option of any command (its help shows ``<path>``), read by :func:`path_value`."""
    return typer.Option(*decls, parser=path_value, metavar="<path>", **extra)


def existing_db(value: Path | None) -> Path | None:
    """A database named to be read (--db or $ZBENCH_DB) must exist: reading a mistyped path made
    an empty database there, folders included, and said "No results yet" as if all were lost."""
    if value is not None and not value.expanduser().exists():
        raise typer.BadParameter(
            f"no database at {value} (a run given this --db or $ZBENCH_DB makes it)"
        )
    return value


def _db_option(**extra: Any) -> Any:
    return path_option(
        "--db",
        help="Results database (default: $ZBENCH_DB or the data directory).",
        envvar="ZBENCH_DB",
        show_default=False,
        **extra,
    )


DbOpt = Annotated[Path | None, _db_option()]
# --db on the commands that only read the database (results, jobs...): it must exist.
ReadDbOpt = Annotated[Path | None, _db_option(callback=existing_db)]
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable JSON output.")]


FORMATS = "md, csv or json"


def format_option(default: str) -> Any:
    """The one format flag: -f/--format wherever a command writes a choice of formats
    (``default``: what it writes without one)."""
    return typer.Option(
        "--format", "-f", help=f"{FORMATS} (default: {default}).", show_default=False
    )


WideOpt = Annotated[
    bool, typer.Option("--wide", help="Every column, however wide (default: fit the terminal).")
]


def results_only(opt: Any) -> Any:
    """The flag of ``opt`` (an ``Annotated`` option here) as `zbench demo` takes it, its help
    saying it is for `zbench demo results` (a demo run refuses it)."""
    import copy
    import typing

    info = copy.copy(typing.get_args(opt)[1])
    info.help = f"With `results`: {info.help[0].lower()}{info.help[1:]}"
    return info


# --hosts of the dashboard, `jobs` and `export`: one meaning (fleet.hosts.resolve_hosts).
HOSTS_HELP = r"HOST[:PORT],HOST... or `all` (the config file's \[hosts])"


def check_tag(value: str | None) -> str | None:
    """A tag is a name to find runs by: a blank one would match nothing a user could type (run and
    suite refuse to give one; the results filters, to look for one)."""
    if value is not None and not value.strip():
        raise typer.BadParameter(f"a tag needs a name, got {value!r}")
    if value is not None and not value.isprintable():  # a newline or a tab would break the tables
        raise typer.BadParameter(f"a tag is one line of printable text, got {value!r}")
    return value


TagOpt = Annotated[
    str | None,
    typer.Option(
        help="A name to find its runs by later (--tag on results).",
        callback=check_tag,
        show_default=False,
    ),
]


def check_timeout(value: float | None) -> float | None:
    """A job's ``--timeout``: a finite number of seconds above 0 (0, a negative number, inf or NaN
    would cancel it at once or never)."""
    if value is not None and not (math.isfinite(value) and value > 0):
        raise typer.BadParameter(f"must be a finite number of seconds above 0, got {value:g}")
    return value


TimeoutOpt = Annotated[
    float | None,
    typer.Option(
        help="Cancel the job after this many seconds.", callback=check_timeout, show_default=False
    ),
]


def err(message: str) -> None:
    """An error as every zbench command writes it: one line on stderr, ``zbench: COMMAND: ...``."""
    from zbench.cli.outcome import fail

    fail(message)


def folder_problem(path: Path, holds: str, files: tuple[str, ...]) -> str | None:
    """Why ``path`` cannot be the output folder of a command that writes ``holds`` into it: a file
    that exists, or a name with the suffix of one of the ``files`` it writes (``-o report.md`` meant
    a file name, and would have made a folder of that name); None when it can."""
    if path.exists() and not path.is_dir():
        return f"{path} is a file, not a folder"
    if not path.exists() and path.suffix.lower() in files:
        return f"--output takes a folder ({holds} go in it), not a file name: {path}"
    return None


def _exit(code: int | None) -> None:
    if code:
        raise typer.Exit(code)
