"""``zbench report``: the whole review from the selected runs, as ``report.md`` + ``report.html``.

Sections, each only when there is data: the machine, one table per experiment, the charts (those of
``zbench plot``: one set per device, one bar per setup, so unlike runs never share a bar), the raw
samples over time per run, and the demos. Reads only the store; figures go to ``DIR/figures``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from zbench.errors import ZbenchError
from zbench.paths import write_text_replacing
from zbench.results.api import Filters, ResultRow, read_store
from zbench.results.charts import not_drawn, write_charts
from zbench.results.export import md_text
from zbench.results.format import FRAMEWORK_NAMES, model_name
from zbench.results.report_demos import demo_section
from zbench.results.report_html import render_html
from zbench.results.report_md import experiment_section, machine_section, scaling_lines
from zbench.results.selection import Db, Selection, select
from zbench.results.timeseries import draw_run
from zbench.textfit import counted

TITLE = "zbench report"
Progress = Callable[[str], None]


class ReportError(ZbenchError, ValueError):
    """Nothing to report (exit status 1)."""

    exit_code = 1


@dataclass(frozen=True)
class Report:
    """What ``zbench report`` wrote: the Markdown, the HTML, the figures, and how many runs."""

    markdown: Path
    html: Path
    figures: tuple[Path, ...]
    runs: int


def _day(t: float | None) -> str:
    return "?" if t is None else dt.datetime.fromtimestamp(t, dt.timezone.utc).strftime("%Y-%m-%d")


def _rel(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()


def _intro(sel: Selection, flt: Filters) -> list[str]:
    runs = sel.all
    created = [r.created for r in runs if r.created is not None]
    kinds = [counted(len(sel.rows), "benchmark run")]
    if sel.probes:
        kinds.append(counted(len(sel.probes), "probe run"))
    if sel.demos:
        kinds.append(counted(len(sel.demos), "demo run"))
    span = f"{_day(min(created))} to {_day(max(created))}" if created else "unknown dates"
    return [
        f"# {TITLE}",
        "",
        f"{', '.join(kinds)}, recorded {span} (UTC). Selection: {md_text(flt.describe())}. "
        "Every figure below comes from the results database; nothing was measured while "
        "writing this report.",
        "",
    ]


def _charts(rows: list[ResultRow], figures: Path, root: Path, out: list[Path]) -> list[str]:
    charts = write_charts(rows, figures / "charts")
    if not charts:
        return []
    lines = ["## The charts", ""]
    for chart in charts:
        out.append(chart.path)
        text = md_text(chart.description)
        lines += [f"![{text}]({_rel(chart.path, root)})", "", f"*{text[0].upper()}{text[1:]}.*", ""]
    scaling = scaling_lines(rows)
    if scaling:
        lines += ["Scaling, same setup apart from the GPU count:", "", *scaling, ""]
    return lines


def _timeseries(
    rows: list[ResultRow], db: Db, figures: Path, root: Path, out: list[Path], progress: Progress
) -> list[str]:
    store = read_store(db)
    lines: list[str] = []
    for r in rows:
        if r.job_id is None:
            continue
        samples = store.samples(r.job_id)
        if not samples:
            continue
        progress(f"time series of run {r.run_id}")
        title = (
            f"Run {r.run_id}: {model_name(r.workload)} "
            f"{FRAMEWORK_NAMES.get(r.framework, r.framework)} {r.mode}, {counted(r.gpus, 'GPU')}, "
            f"{(r.precision or 'default').upper()}, batch {r.batch_size}"
        )
        path = figures / "timeseries" / f"run-{r.run_id}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        if draw_run(samples, title, path):
            out.append(path)
            text = md_text(title)
            lines += [f"### {text}", "", f"![{text}]({_rel(path, root)})", ""]
    if not lines:
        return []
    return [
        "## Over time",
        "",
        "Each run's raw samples (every 0.5 s): setup, warm-up and measured window shaded. "
        "The tables' means come from the green (measure) stretch only.",
        "",
        *lines,
    ]


def build_markdown(
    sel: Selection, flt: Filters, db: Db, out_dir: Path, progress: Progress
) -> tuple[str, list[Path]]:
    """The report's Markdown (machine, tables, charts, time series, demos) and its figures."""
    figures = out_dir / "figures"
    figures.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    progress("machine and tables")
    lines = _intro(sel, flt)
    lines += machine_section(sel.rows, sel.probes)
    lines += experiment_section(sel.rows, not_drawn(sel.rows))
    progress("charts")
    lines += _charts(sel.rows, figures, out_dir, written)
    lines += _timeseries(sel.rows, db, figures, out_dir, written, progress)
    progress("demos")
    lines += demo_section(sel.demos, figures / "demos", out_dir)
    while lines and lines[-1] == "":
        lines.pop()
    return "\n".join(lines) + "\n", written


def write_report(
    out_dir: Path, filters: Filters | None = None, db: Db = None, progress: Progress | None = None
) -> Report:
    """Write ``out_dir/report.md`` and ``out_dir/report.html`` for the runs ``filters`` selects."""
    flt = filters or Filters()
    say = progress or (lambda _msg: None)
    sel = select(db, flt)
    if not sel.all:
        raise ReportError(flt.nothing_to("report", section=None))
    out_dir.mkdir(parents=True, exist_ok=True)
    text, figures = build_markdown(sel, flt, db, out_dir, say)
    md_path = out_dir / "report.md"
    write_text_replacing(md_path, text)
    say("HTML")
    html_path = out_dir / "report.html"
    write_text_replacing(html_path, render_html(text, out_dir, TITLE))
    return Report(md_path, html_path, tuple(figures), len(sel.all))
