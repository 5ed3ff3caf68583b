"""Demo results (runs of framework ``demo``): their own table, as Markdown, CSV or JSON.

The columns of each demo come from the demo table (``zbench.contract.demos``: Snake's scores,
motion's frames per second and L1 against its baselines), after the columns every demo has and a
column for each of the demo's options on which its rows differ (compile, device, input, ...), so
unlike runs never print alike, as in the benchmark tables.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from zbench.contract.demos import figure, known
from zbench.contract.kinds import DEMO
from zbench.csvcell import write_rows
from zbench.results.api import read_store
from zbench.results.export import FormatError
from zbench.results.format import NA_TEXT
from zbench.results.identity import CONFIG_NOT_IDENTITY, differing, label, value_text
from zbench.store import RunFilter
from zbench.textfit import Column, one_line

COMMON: tuple[tuple[str, str], ...] = (
    ("Run", "run_id"),
    ("Demo", "demo"),
    ("Mode", "mode"),
    ("GPU", "gpu_name"),
    ("Min", "minutes"),
)
TEXT_COLUMNS = {"Demo", "Mode", "GPU"}
OPTION = "option:"  # the key of an option's column: ``option:compile``


@dataclass(frozen=True)
class DemoResult:
    """One demo run as the demo table shows it: common columns, the demo's figures, its curve."""

    run_id: int
    job_id: int | None
    created: float
    demo: str
    mode: str
    gpu_name: str | None
    minutes: float | None
    figures: dict[str, Any]  # column title -> value, the demo's own columns (the table's order)
    curve: list[dict[str, Any]] = field(default_factory=list)
    options: dict[str, Any] = field(default_factory=dict)  # the demo's options as the run stored
    notes: dict[str, str] = field(default_factory=dict)  # columns -> why the run lacks them

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def cell(self, title: str, key: str) -> Any:
        if key == "run_id":
            return str(self.run_id)  # an id, not a quantity: no thousands separator
        if key.startswith(OPTION):
            name = key[len(OPTION) :]
            entry = known(self.demo)
            if entry is None or all(o.name != name for o in entry.options):
                return None  # another demo's option
            if name not in self.options:
                return NA_TEXT  # not recorded
            value = self.options[name]
            return "default" if value is None else value_text(value)
        return getattr(self, key) if (title, key) in COMMON else self.figures.get(title)


def demo_columns(demo: str) -> tuple[tuple[str, str], ...]:
    """The demo table's columns for ``demo`` (none for a demo that is not in the table)."""
    entry = known(demo)
    return entry.table if entry is not None else ()


def option_columns(rows: Sequence[DemoResult]) -> list[tuple[str, str]]:
    """A column for each option of the rows' demo on which they differ, in the demo table's
    order; not those a column already shows (the mode's, the board, the budget) nor the seed
    (a repeat, not another setup: ``results.identity``)."""
    entry = known(rows[0].demo) if rows else None
    if entry is None:
        return []
    shown = {k for _, k in COMMON} | {path for _, path in entry.table} | entry.in_mode()
    apart = set(differing([r.options for r in rows], shown | CONFIG_NOT_IDENTITY))
    return [
        (label(o.name)[:1].upper() + label(o.name)[1:], OPTION + o.name)
        for o in entry.options
        if o.name in apart
    ]


def _row(run: dict[str, Any]) -> DemoResult:
    res, cfg = run["result"] or {}, run["config"] or {}
    demo = str(run["workload"])
    entry = known(demo)
    wall = figure(res, entry.minutes_from) if entry is not None and entry.minutes_from else None
    names = [o.name for o in entry.options] if entry is not None else []
    figures = {title: figure(res, path) for title, path in demo_columns(demo)}
    for title, path in demo_columns(demo):  # a figure the result lacks may be an option
        if figures[title] is None and path in cfg:
            figures[title] = cfg[path]
    return DemoResult(
        run_id=run["id"],
        job_id=run["job_id"],
        created=run["created"],
        demo=demo,
        mode=run["mode"],
        gpu_name=run["gpu_name"],
        minutes=round(wall / 60, 2) if isinstance(wall, int | float) else cfg.get("minutes"),
        figures=figures,
        curve=list(res.get("curve") or []),
        options={name: cfg[name] for name in names if name in cfg},
        notes={
            columns: str(text)
            for columns, path in (entry.notes if entry is not None else ())
            if (text := figure(res, path))
        },
    )


def from_result_rows(rows: Sequence[Any]) -> list[DemoResult]:
    """Demo table rows of ``results.api.ResultRow`` objects (the report's selection)."""
    return [
        _row(
            {
                "id": r.run_id,
                "job_id": r.job_id,
                "created": r.created,
                "workload": r.workload,
                "mode": r.mode,
                "gpu_name": r.gpu_name,
                "result": r.result,
                "config": r.config,
            }
        )
        for r in rows
    ]


def demo_results(
    db: str | os.PathLike[str] | None = None, demo: str | None = None
) -> list[DemoResult]:
    """Stored demo runs, oldest first (``demo`` filters by name, e.g. ``snake``)."""
    match = RunFilter(kinds=[DEMO], workload=demo or None)
    return [_row(r.as_dict()) for r in read_store(db).run_rows(match)]


def cell(value: Any) -> str:
    """One table cell: numbers to a few digits, a mapping as ``key value`` pairs (never a Python
    object's repr: a figure stored as a dict by an older demo still reads as a table cell); a
    figure not measured reads ``n/a``, as in the benchmark tables."""
    if value is None:
        return NA_TEXT
    if isinstance(value, dict):
        return ", ".join(f"{k} {cell(v)}" for k, v in value.items()) or NA_TEXT
    if isinstance(value, list | tuple):
        return ", ".join(cell(v) for v in value) or NA_TEXT
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return (
            f"{value:,.0f}"
            if abs(value) >= 1000
            else f"{value:.3g}"
            if abs(value) < 1
            else f"{value:.2f}"
        )
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def _of(rows: Sequence[DemoResult], demo: str) -> list[DemoResult]:
    return [r for r in rows if r.demo == demo]


def _columns(rows: Sequence[DemoResult]) -> list[tuple[str, str]]:
    """Every demo's columns (CSV): the common ones, each demo's options that differ, its figures."""
    demos = list(dict.fromkeys(r.demo for r in rows))
    cols = list(COMMON)
    for demo in demos:
        cols += [c for c in option_columns(_of(rows, demo)) if c not in cols]
    for demo in demos:
        cols += [c for c in demo_columns(demo) if c not in cols]
    return cols


def _text(key: str, title: str) -> bool:
    """Whether a column holds words (left-aligned), not figures."""
    return title in TEXT_COLUMNS or key.startswith(OPTION)


def note_lines(rows: Sequence[DemoResult]) -> list[str]:
    """One line per reason some runs' figures are missing (``Demo.notes``), naming the runs:
    "HOTA, MOTA, IDF1 of runs 1, 2: not scored: TrackEval is missing: ..."."""
    runs: dict[tuple[str, str], list[str]] = {}
    for r in rows:
        for columns, text in r.notes.items():
            runs.setdefault((columns, text), []).append(str(r.run_id))
    return [
        f"{columns} of run{'s' if len(ids) > 1 else ''} {', '.join(ids)}: {text}"
        for (columns, text), ids in runs.items()
    ]


def _md(rows: Sequence[DemoResult]) -> list[str]:
    cols = _columns(rows)
    lines = ["| " + " | ".join(t for t, _ in cols) + " |"]
    lines.append("|" + "|".join("---" if _text(k, t) else "---:" for t, k in cols) + "|")
    lines += ["| " + " | ".join(cell(r.cell(t, k)) for t, k in cols) + " |" for r in rows]
    notes = note_lines(rows)
    return [*lines, "", *notes] if notes else lines


def tables(
    rows: Sequence[DemoResult],
) -> list[tuple[str, list[Column], list[list[str]], list[str]]]:
    """One fitted table per demo (title, columns, cells, the lines under it: ``note_lines``) for
    a terminal: the GPU name is cut first, then the run id and the budget go, then the demo's
    own figures from the last (the registry's order); the options that tell its rows apart
    stay, as the demo and mode do."""
    out = []
    for demo in dict.fromkeys(r.demo for r in rows):
        mine = _of(rows, demo)
        options = option_columns(mine)
        cols = [*COMMON, *options, *demo_columns(demo)]

        def priority(i: int, title: str, key: str) -> int:
            if key in ("demo", "mode") or key.startswith(OPTION):
                return 0
            return {"minutes": 99, "run_id": 98}.get(key, i)

        columns = [
            Column(
                t,
                right=not _text(k, t),
                flex=t == "GPU",
                min_width=6,
                priority=priority(i, t, k),
            )
            for i, (t, k) in enumerate(cols)
        ]
        cells = [[one_line(cell(r.cell(t, k))) for t, k in cols] for r in mine]
        entry = known(demo)
        out.append((entry.title if entry else demo, columns, cells, note_lines(mine)))
    return out


def render(rows: Sequence[DemoResult], fmt: str) -> str:
    """``md`` (one table per demo), ``csv`` (every demo's columns), or ``json`` (with curves)."""
    if fmt == "json":  # ends with a newline, as the other formats and `zbench export` do
        return json.dumps({"demo_results": [r.as_dict() for r in rows]}, indent=2) + "\n"
    if fmt == "csv":
        cols = _columns(rows)
        return write_rows(
            [t for t, _ in cols],
            (["" if r.cell(t, k) is None else r.cell(t, k) for t, k in cols] for r in rows),
        )
    if fmt == "md":
        demos = list(dict.fromkeys(r.demo for r in rows)) or [""]
        out: list[str] = []
        for demo in demos:
            out += [*_md(_of(rows, demo)), ""]
        return "\n".join(out[:-1]) + "\n"
    raise FormatError.unknown(fmt)
