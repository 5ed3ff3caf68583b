"""``zbench results``, ``export``, ``compare`` and ``plot``: thin wrappers that print.

Each returns an exit status, as ``cli/outcome.py`` rules: 0 ok, 1 the work failed (no run to
export, plot or compare), 2 bad input.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from zbench import paths
from zbench.cli.filters import nothing_found
from zbench.cli.options import folder_problem
from zbench.cli.outcome import BAD_INPUT, NOTHING_SELECTED, fail, nothing_selected
from zbench.cli.tableview import print_table
from zbench.contract.kinds import KINDS
from zbench.errors import ZbenchError, bad_path, os_error_exit
from zbench.results.anchors import published_for
from zbench.results.api import (
    Filters,
    ResultRow,
    query_results,
    review_order,
    shown_elsewhere,
    stored_elsewhere,
)
from zbench.results.export import (
    FORMATS,
    FormatError,
    pick_format,
    render,
    rows_from_json,
    runs_words,
)
from zbench.results.format import (
    COLUMNS,
    RUN,
    cells,
    drop_rank,
    fitted_columns,
    published_cell,
    published_notes,
    table_columns,
    tells_apart,
)
from zbench.results.identity import differences, differences_text
from zbench.results.provenance import warnings
from zbench.store import holds_database
from zbench.textfit import counted

Db = str | os.PathLike[str] | None


def _parts(rows: Sequence[ResultRow]) -> tuple[list[str], list[list[str]], list[str]]:
    """The one table every view prints: its titles ("Run", ``COLUMNS``, "Published" where a
    published figure exists for a row's setup), its cells, and the lines under it."""
    pubs = [published_for(r) for r in rows]
    notes = published_notes(pubs, rows)
    flagged = [f"run {r.run_id}: {text}" for r in rows for _, text in warnings(r)]
    caption = [("Published: " + "; ".join(notes))] if notes else []
    caption += ["Warnings: " + "; ".join(flagged)] if flagged else []
    show = any(p.anchor or p.reason for p in pubs)
    columns = table_columns(rows)  # with a column for each setup field the rows differ in
    titles = [RUN[0], *(t for t, _, _ in columns), *(["Published"] if show else [])]
    body = [
        [str(c) for c in [*cells(row, (RUN, *columns)), *([published_cell(pub)] if show else [])]]
        for row, pub in zip(rows, pubs, strict=True)
    ]
    return titles, body, caption


def print_results(console: Console, rows: Sequence[ResultRow], *, wide: bool = False) -> None:
    """The review's table fitted to the terminal (``zbench.textfit``): whole columns are left out
    at narrow widths instead of every cell being cut; a pipe or ``--wide`` gets every column."""
    titles, body, caption = _parts(rows)
    # A setup column that alone tells two rows apart is never dropped: unlike rows never read alike.
    setup = table_columns(rows)
    setup_cells = [row[1 : 1 + len(setup)] for row in body]  # after "Run"
    keep = tells_apart(setup, setup_cells, drop_rank)
    if caption:  # the lines under the table say "run 12: ...": the Run column stays to find it
        keep.add("Run")
    columns = fitted_columns(titles, keep)
    layout = print_table(console, columns, body, wide=wide, title="zbench results")
    if "CPU util %" in titles and "CPU util %" not in layout.dropped:  # it can read 300
        caption = [
            "CPU util %: the runner's processes, in % of one core (200 = two busy)",
            *caption,
        ]
    for line in caption:
        if not (line.startswith("Published: ") and "Published" in layout.dropped):
            console.print(Text(line))


def _query(filters: Filters, db: Db) -> list[ResultRow] | int:
    """The rows the filters select, or the exit status of a bad filter (said on stderr)."""
    try:
        return review_order(filters.query(db))
    except ValueError as exc:
        return fail(str(exc))


def _selected(filters: Filters, db: Db, verb: str) -> list[ResultRow] | int:
    """The rows to ``verb`` (export, plot), or the exit status when there are none: 2 for a bad
    filter, else ``outcome.nothing_selected``'s for work that needs runs."""
    rows = _query(filters, db)
    if isinstance(rows, int) or rows:
        return rows
    stored = stored_elsewhere(db) if filters.describe() == "all runs" else ""
    # The store is not empty: name where its runs are, not how to make the first one.
    said = f"no benchmark results to {verb}; {stored}" if stored else filters.nothing_to(verb)
    return nothing_selected(said, listing=False)


def show_results(*, filters: Filters, db: Db, json_out: bool, wide: bool = False) -> int:
    """Print the filtered results as the review's table or JSON; 2 when a filter is bad. No run
    selected is a listing's answer (``outcome``): the table's one line, or JSON of no results."""
    rows = _query(filters, db)
    if isinstance(rows, int):
        return rows
    if json_out:
        print(render(rows, "json"), end="")
        return 0
    if not rows:
        hint = "No results yet. Run `zbench suite quick` or `zbench run resnet50`."
        if filters.describe() == "all runs" and (stored := stored_elsewhere(db)):
            hint = f"No benchmark results yet. {stored}"
        where = filters.elsewhere()  # a probe's or a demo's runs: this table has none
        return nothing_selected(
            nothing_found(filters, hint) + (f" {where}" if where else ""), listing=True
        )
    print_results(Console(highlight=False, markup=False), rows, wide=wide)
    return 0


def export_results(
    *, fmt: str | None, output: Path | None, filters: Filters, db: Db, samples: bool = False
) -> int:
    """The results as md, csv or json (``fmt``, else the output's suffix, else md); with
    ``samples``, their raw samples as csv or jsonl. 1, with nothing written, when no run is
    selected: an empty table must not read as an export of runs."""
    if samples:
        return _export_samples(fmt, output, filters, db)
    try:
        fmt = pick_format(fmt, output, FORMATS, "md")
    except FormatError as exc:
        return fail(str(exc))
    if _over_database(output, db):
        return 2
    rows = _selected(filters, db, "export")
    if isinstance(rows, int):
        return rows
    try:
        text = render(rows, fmt)
    except FormatError as exc:
        return fail(str(exc))
    return write_output(text, output, counted(len(rows), "result"), db)


def _export_samples(fmt: str | None, output: Path | None, filters: Filters, db: Db) -> int:
    from zbench.results.samples_export import SAMPLE_FORMATS, render_samples
    from zbench.results.selection import select

    try:  # json asks for the samples as JSON lines
        fmt = pick_format(fmt, output, SAMPLE_FORMATS, "csv", {"json": "jsonl"}, "--samples: ")
    except FormatError as exc:
        return fail(str(exc))
    if _over_database(output, db):
        return 2
    try:
        sel = select(db, filters)
    except ValueError as exc:
        return fail(str(exc))
    if not sel.all:
        return nothing_selected(filters.nothing_to("export"), listing=False)
    text = render_samples(sel.all, fmt, db)
    rows = max(text.count("\n") - (fmt == "csv"), 0)
    if not rows:
        said = f"no samples in the {counted(len(sel.all), 'selected run')}: nothing to export"
        return nothing_selected(said, listing=False)
    return write_output(text, output, counted(rows, "sample row"), db)


def _over_database(output: Path | None, db: Db) -> bool:
    """Whether ``output`` is a database (said on stderr): ``-o zbench.db`` replaced every stored
    run with a table of them. Checked before the query, so the answer comes first."""
    if output is None or str(output) == "-" or not holds_database(output, paths.db_path(db)):
        return False
    fail(f"{output} is a database: writing the export over it would lose it (-o names a new file)")
    return True


def write_output(text: str, output: Path | None, what: str, db: Db) -> int:
    """``text`` to stdout (no ``output``, or ``-`` as tools take it), or to ``output`` with a line
    on stderr saying what was written; never over a database."""
    if output is None or str(output) == "-":
        sys.stdout.write(text)
        return 0
    if _over_database(output, db):
        return 2
    try:
        paths.write_text_replacing(output, text)
    except OSError as exc:  # the old file, if any, is as it was
        return fail(f"cannot write {output}: {exc.strerror or exc}", 2 if bad_path(exc) else 1)
    print(f"Wrote {what} to {output}", file=sys.stderr)
    return 0


# --- compare ---------------------------------------------------------------------------------

# (metric, its title in the JSON, the results table's column that shows it). The table prints
# each value as that column does (memory in GiB, utilization in whole percent); JSON keeps bytes.
COMPARED = (
    ("samples_per_s", "Samples/s", "Samples/s"),
    ("gpu_util", "GPU util %", "GPU util %"),
    ("mem_util", "Mem-ctrl util %", "Mem-ctrl util %"),
    ("gpu_mem_bytes", "GPU memory (bytes)", "GPU mem GiB"),
    ("cpu_util", "CPU util %", "CPU util %"),
    ("cpu_mem_bytes", "CPU memory (bytes)", "CPU mem GiB"),
)


class CompareError(ZbenchError, ValueError):
    """Two runs that cannot be compared, or a FILE:RUN that cannot be read (exit 2); a run that
    the filters do not select (exit 1, as every results command's empty selection is)."""

    def __init__(self, message: str, exit_code: int = BAD_INPUT) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def _run_id(ref: str) -> int | None:
    """``ref`` as a run id: ASCII digits only (``"²".isdigit()`` is true, and int() refuses it)."""
    return int(ref) if ref.isascii() and ref.isdigit() else None


def _load_side(ref: str, db: Db, filters: Filters) -> ResultRow:
    """A run id from the store, or an exported JSON file: ``file.json:N`` for the result with run
    id N, or the one result left after ``filters`` (tag, job ids, since)."""
    if not ref.strip():  # Path("") is this folder: "Is a directory: '.'" said it
        raise CompareError(f"each run is a run id or an exported file (FILE:RUN), got {ref!r}")
    run_id = _run_id(ref)
    if run_id is not None:
        rows = query_results(db, run_ids=[run_id], kinds=tuple(KINDS))
        if not rows:
            raise CompareError(f"no run {ref}")
        shown = shown_elsewhere(ref, rows[0].kind)  # a probe's run: "no run 11" said it
        if shown:
            raise CompareError(shown)
        if not filters.keeps(rows[0]):
            raise CompareError(
                f"run {ref} is not one the filters select ({filters.describe()})", NOTHING_SELECTED
            )
        return rows[0]
    # FILE:RUN splits at the last colon: a file name may hold one (results-12:30.json:4).
    path_text, _, pick = ref.rpartition(":") if not Path(ref).exists() else (ref, "", "")
    if not path_text:
        path_text, pick = ref, ""
    try:
        rows = rows_from_json(Path(path_text).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:  # RecursionError: JSON nested too deep
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise CompareError(f"{ref}: not a run id or a zbench JSON export ({why})") from None
    if not rows:
        raise CompareError(f"{ref}: no results in it")
    held = ", ".join(str(r.run_id) for r in rows[:8]) + (", ..." if len(rows) > 8 else "")
    if pick:
        rows = [r for r in rows if str(r.run_id) == pick]
        if not rows:
            raise CompareError(f"{ref}: no run {pick} in it (runs {held})")
    rows = [r for r in rows if filters.keeps(r)]
    if not rows:
        raise CompareError(
            f"{ref}: no result in it that the filters select ({filters.describe()})",
            NOTHING_SELECTED,
        )
    if len(rows) > 1:
        ids = ", ".join(str(r.run_id) for r in rows[:8])
        raise CompareError(
            f"{ref}: {len(rows)} results (runs {ids}); pick one as {path_text}:RUN or with --tag, "
            "--job or --since"
        )
    return rows[0]


def compare_values(a: ResultRow, b: ResultRow) -> list[dict[str, Any]]:
    """Per metric: both values and b/a (None where either side is missing or a is 0)."""
    out = []
    for key, title, _ in COMPARED:
        va, vb = getattr(a, key), getattr(b, key)
        ratio = vb / va if va not in (None, 0) and vb is not None else None
        out.append({"metric": key, "title": title, "a": va, "b": vb, "ratio_b_over_a": ratio})
    return out


def _side_label(r: ResultRow) -> str:
    return f"{r.workload} {r.framework} {r.mode} {r.precision or ''} x{r.gpus} on {r.gpu_name}"


def compare_runs(a: str, b: str, *, db: Db, json_out: bool, unlike: bool, filters: Filters) -> int:
    """Two runs side by side as ratios, only when they are alike (same resolved configuration and
    environment); ``unlike`` compares them anyway and names every difference first."""
    for given, flag in ((filters.suite_run, "--suite-run"), (filters.suite, "--suite")):
        if given is not None:
            return fail(f"{flag} selects many runs, compare takes two (`zbench results {flag}`)")
    try:
        filters.check(db)  # a typo is said as `zbench results` says it, before a run is read
        ra, rb = _load_side(a, db, filters), _load_side(b, db, filters)
    except CompareError as exc:
        return fail(str(exc), exc.exit_code)
    except ValueError as exc:
        return fail(str(exc))
    if ra == rb:  # one run named twice (1 and 01, FILE:4 twice, or its export and itself)
        return fail(f"runs {a} and {b} are the same run: compare takes two different runs")
    diffs = differences(ra, rb)
    if diffs and not unlike:
        what = differences_text(ra, rb, limit=6)
        return fail(f"runs {a} and {b} are not alike ({what}); --unlike compares them anyway")
    values = compare_values(ra, rb)
    if json_out:
        listed = [{"field": n, "a": va, "b": vb} for n, va, vb in diffs]
        doc = {"a": ra.as_dict(), "b": rb.as_dict(), "differences": listed, "metrics": values}
        print(json.dumps(doc, indent=2))
        return 0
    title = f"A: {_side_label(ra)}\nB: {_side_label(rb)}"
    if diffs:
        title += "\nNot alike: " + differences_text(ra, rb)
    table = Table(title=title, min_width=max(len(line) for line in title.splitlines()))
    for col in ("Metric", "A", "B", "B / A"):
        table.add_column(col, justify="left" if col == "Metric" else "right")
    shown_as = {title: text for title, _, text in COLUMNS}
    for (_, _, column), v in zip(COMPARED, values, strict=True):
        text = shown_as[column]
        ratio = "n/a" if v["ratio_b_over_a"] is None else f"{v['ratio_b_over_a']:.2f}x"
        table.add_row(column, text(v["a"]), text(v["b"]), ratio)
    Console(highlight=False, markup=False).print(table)  # GPU names are data, not markup
    return 0


def plot_results(*, output: Path, db: Db, filters: Filters) -> int:
    """Write PNG charts of the filtered results into ``output`` and list them; 1 when none fits."""
    problem = folder_problem(output, "the PNG charts", (".png",))
    if problem:
        return fail(problem)
    rows = _selected(filters, db, "plot")
    if isinstance(rows, int):
        return rows
    from zbench.results.charts import DRAWN, undrawn, write_charts

    try:
        charts = write_charts(rows, output)
    except OSError as exc:  # a folder where a chart goes, a place no one may write
        message, code = os_error_exit(exc)
        return fail(f"cannot write the charts: {message}", code)
    if not charts:
        return fail(f"none of the {counted(len(rows), 'selected run')} fits a chart: {DRAWN}", 1)
    for chart in charts:
        print(f"{chart.path}: {chart.description}")
    left = undrawn(rows, charts)
    if left:  # measured runs must not vanish without a word; `zbench results` shows them
        ids = sorted({r.run_id for r in left}, key=lambda i: i or 0)
        print(f"no chart draws {runs_words(ids)}: {DRAWN}")
    return 0
