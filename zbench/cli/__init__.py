"""The ``zbench`` command: the Typer app, the dashboard (no command), and ``main`` (errors to exits).

The commands live in ``commands_jobs`` and ``commands_results``; their bodies, with every Rich view,
in one module per area (``jobs``, ``demos``, ``results``, ``report``, ``fleet``, ``monitor``,
``doctor``, ``probe``): the core packages render nothing. Imports of the packages happen inside the
commands so that ``zbench --help`` stays fast and no command
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

from zbench.cli.options import HOSTS_HELP, DbOpt, _exit, app, path_option
from zbench.cli.outcome import COMMAND_ATTR, fail, remember_invocation
from zbench.cli.usage import dashboard_options_apart
from zbench.settings import MAX_INTERVAL, MIN_INTERVAL


@app.callback(invoke_without_command=True)
def _root(
    ctx: typer.Context,
    *,
    replay: Annotated[
        Path | None,
        path_option(help="Run the dashboard from a recorded trace (JSONL).", show_default=False),
    ] = None,
    interval: Annotated[
        float | None,
        typer.Option(
            help="Dashboard refresh in seconds (default: $ZBENCH_INTERVAL, the config file, "
            "the last one used, else 1).",
            min=MIN_INTERVAL,
            max=MAX_INTERVAL,
            show_default=False,
        ),
    ] = None,
    db: DbOpt = None,
    hosts: Annotated[
        str | None,
        typer.Option(
            help=f"Open the TUI on several machines over ssh: {HOSTS_HELP}. See docs/multinode.md.",
            show_default=False,
        ),
    ] = None,
    version: Annotated[bool, typer.Option("--version", help="Print the version and exit.")] = False,
) -> None:
    """Without a command: open the TUI."""
    remember_invocation(ctx)  # errors name their command even after it has ended
    dashboard_options_apart(ctx, ("replay", "interval", "db", "hosts"))
    if version:
        from zbench import __version__

        typer.echo(f"zbench {__version__}")
        raise typer.Exit()
    if ctx.invoked_subcommand is None and hosts is not None:
        from zbench.tui import fleet_app

        _exit(fleet_app.run(hosts, interval))
        return  # the fleet view ended (q): not on to the local dashboard
    if ctx.invoked_subcommand is None:
        from zbench.tui.app import run_app

        _exit(run_app(replay=replay, interval=interval, db=db))


# The commands register themselves on ``app`` when imported (they import nothing heavy at module level).
from zbench.cli import commands_jobs, commands_results  # noqa: E402

__all__ = ["app", "commands_jobs", "commands_results", "main"]


def main() -> None:
    """Run the Typer app; zbench and OS errors and closed pipes become one line and an exit code."""
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
    except SystemExit as exc:
        # Click turns a closed pipe (`zbench jobs --json | head -1`) into exit status 1 and wraps
        # stdout in its PacifyFlushWrapper (Typer's copy of Click, or Click's): the reader has
        # what it wanted, so that is no failure. Rich does the same (`zbench monitor | head -3`):
        # its Console.on_broken_pipe raises SystemExit(1) while handling the BrokenPipeError.
        if exc.code == 1 and (
            type(sys.stdout).__name__ == "PacifyFlushWrapper"
            or isinstance(exc.__context__, BrokenPipeError)
        ):
            raise SystemExit(0) from None
        raise
    except ZbenchError as exc:
        fail(str(exc), exc.exit_code, where=getattr(exc, COMMAND_ATTR, ""))
        raise SystemExit(exc.exit_code) from None
    except BrokenPipeError:
        # The reader stopped reading (`zbench jobs --json | head -1`): it has what it wanted.
        # Python's advice: point stdout at /dev/null so the flush at exit does not fail again.
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise SystemExit(0) from None
    except OSError as exc:  # a full disk, a read-only folder, a file where a folder should be
        message, code = os_error_exit(exc)
        fail(message, code, where=getattr(exc, COMMAND_ATTR, ""))
        with contextlib.suppress(OSError):  # stdout may be what failed: do not fail again at exit
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise SystemExit(code) from None


if __name__ == "__main__":
    main()
