"""``zbench demo``: submit a demo as a job and follow it, or print the stored demo results.

``--play`` and ``--human`` do not make a job: they run in this terminal (zbench.demos.snake.play).
Each function returns an exit status: 0 ok, 1 the work failed, 2 bad input (one-line reason).
"""

from __future__ import annotations

import sys
from pathlib import Path

from zbench.cli.filters import nothing_found
from zbench.cli.follow import Db, _console, _report_failure, follow
from zbench.cli.options import err
from zbench.cli.outcome import fail, nothing_selected
from zbench.cli.usage import option_line
from zbench.contract import demos as demo_table
from zbench.contract.options import UsageError
from zbench.gpuids import no_gpu
from zbench.jobs import api
from zbench.jobs.api import JobSpec
from zbench.jobs.gpus import offered_gpus
from zbench.jobs.states import JobState
from zbench.results.api import Filters, stored_elsewhere


def run_demo(
    argv: list[str], *, timeout: float | None, detach: bool, db: Db, tag: str | None = None
) -> int:
    """``argv`` is the demo's own (``snake --board 12 ...``), checked by the demo's parser;
    ``tag``: the user's name for its runs (``--tag``, as ``zbench run`` takes it)."""
    from zbench.contract.demo_options import parse_args  # standard library only

    try:
        config, _ = parse_args(argv)
    except UsageError as exc:
        named = argv[0] if argv and argv[0] in demo_table.demos() else None
        flags = demo_table.get(named).flags() if named else []
        print(option_line(exc, f"demo {named}" if named else "demo", flags), file=sys.stderr)
        return 2
    reason = config.check()  # the entry's own check, framework-free
    if reason:
        err(reason)
        return 2
    if config.device == "cuda" and not (offered := offered_gpus())[0]:
        return fail(no_gpu("add --device cpu to run on the CPU", offered[1]))
    [job_id] = api.submit([JobSpec(config, None, timeout)], db=db, tag=tag)
    console = _console()
    if detach:
        console.print(f"Job {job_id} queued. Watch it live in the TUI (`zbench`, then the job).")
        return 0
    infos = follow([job_id], db, console)
    if infos is None:
        return 0
    info = infos[0]
    if info.state != JobState.DONE:
        return _report_failure(info, db)
    from zbench.results.demos import demo_results

    rows = [r for r in demo_results(db) if r.job_id == job_id]
    if rows:
        print_tables(console, rows)
    return 0


def play_snake(argv: list[str], checkpoint: Path | None, human: bool) -> int:
    """``--play CHECKPOINT`` or ``--human``: snake in this terminal, not a job.
    ``argv``: the demo's options after its name, of which only ``--board`` means anything here."""
    from zbench.contract.demo_options import parse_args  # standard library only

    try:
        config, _ = parse_args(["snake", *argv])
    except UsageError as exc:
        print(option_line(exc, "demo snake", demo_table.get("snake").flags()), file=sys.stderr)
        return 2
    if checkpoint is not None and human:
        return fail("--play replays a trained net and --human lets you play: one or the other")
    # A training option would be silently ignored by the player: refuse it.
    other = sorted({a.split("=")[0] for a in argv if a.startswith("-")} - {"--board"})
    if other:
        return fail(f"{other[0]} is for training snake; --play and --human take only --board")
    if checkpoint is None and not sys.stdin.isatty():
        return fail("--human reads the arrow keys from a terminal, and stdin is not one")
    if checkpoint is not None:
        from zbench.contract.inputs import checkpoint_problem

        problem = checkpoint_problem(checkpoint, "--play")
        if problem:
            return fail(problem)
    import subprocess

    # Its own process: the player needs torch, which this process must never import.
    cmd = [sys.executable, "-m", "zbench.demos.snake.play", "--board", str(config.board)]
    return subprocess.call([*cmd, str(checkpoint)] if checkpoint else cmd)


def print_tables(console, rows, *, wide: bool = False) -> None:
    """Each demo's rows as a table fitted to the terminal (``--format md`` gives Markdown; every
    column, however wide, with ``wide``)."""
    from zbench.cli.tableview import print_table
    from zbench.results.demos import tables

    for i, (title, columns, cells, notes) in enumerate(tables(rows)):
        if i:
            console.print()
        print_table(console, columns, cells, title=title, wide=wide)
        for line in notes:
            console.print(line, markup=False, highlight=False)


def show_results(
    fmt: str | None,
    *,
    db: Db,
    filters: Filters | None = None,
    json_out: bool = False,
    wide: bool = False,
) -> int:
    """The demo results as tables fitted to the terminal (every column with ``wide``), JSON
    (``json_out``, as ``zbench results --json``), or Markdown, CSV or JSON (``fmt``), of the
    demo runs ``filters`` select (``workload``: the demo's name).

    An empty selection follows ``cli/outcome.py``: a listing (the table, ``--json``) is its answer,
    a line or JSON of no runs and exit 0, as ``zbench results`` says it; with ``fmt`` it is an
    export, and as ``zbench export`` does, 1 with nothing written: a header alone must not read as
    an export of runs."""
    from zbench.results.demos import from_result_rows, render
    from zbench.results.export import FORMATS, FormatError, pick_format

    filters = filters or Filters()
    try:  # bad input is said first, whatever is stored; -f CSV is csv, as `zbench export` reads it
        fmt = None if fmt is None else pick_format(fmt, None, FORMATS, "md")
    except FormatError as exc:
        return fail(str(exc))
    if json_out and fmt not in (None, "json"):
        return fail(f"--json and --format {fmt} ask for two formats: give one")
    try:
        chosen = filters.query_demos(db)
    except ValueError as exc:
        return fail(str(exc))
    rows = from_result_rows(chosen)
    if json_out:
        print(render(rows, "json"), end="")
        return 0
    if not rows:
        if fmt is not None:
            first = "run a demo first (`zbench demo snake`)"
            said = filters.nothing_to("export", runs="demo results", first=first, section="demos")
            return nothing_selected(said, listing=False)
        where = filters.elsewhere("demos")  # a benchmark's or a probe's runs: this table has none
        first = "No demo results yet. Run `zbench demo snake`."
        if filters.describe() == "all runs" and (stored := stored_elsewhere(db, "demos")):
            first = f"{first} {stored}"
        said = nothing_found(filters, first)
        return nothing_selected(said + (f" {where}" if where else ""), listing=True)
    if fmt is None:
        print_tables(_console(), rows, wide=wide)
        return 0
    print(render(rows, fmt), end="")
    return 0
