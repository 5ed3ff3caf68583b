"""The review's table: column titles and how each cell is written, shared by the terminal table, the
TUI's results screen and the Markdown export so they always print the same text. NA-aware: a value
that was not measured prints as ``n/a``, never 0."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any

from zbench.contract.workloads import WORKLOADS
from zbench.results.anchors import Published
from zbench.results.api import ResultRow
from zbench.results.identity import differing as identity_differing
from zbench.results.identity import fields, gpu_model, label, setup_id, value_text
from zbench.results.provenance import flags, spread_pct
from zbench.textfit import Column

FRAMEWORK_NAMES = {"torch": "PyTorch", "tf": "TensorFlow"}
GIB = 1024**3
NA_TEXT = "n/a"


def model_name(workload: str) -> str:
    """The workload's title from the workload table, or its name when it is not there."""
    info = WORKLOADS.get(workload)
    return info.title if info else workload


def num(value: Any, fmt: str) -> str:
    """A number in ``fmt``; ``n/a`` for a missing (None) or non-numeric value."""
    if value is None or isinstance(value, bool) or not isinstance(value, int | float):
        return NA_TEXT
    return format(value, fmt)


def _num(fmt: str) -> Callable[[Any], str]:
    return lambda v: num(v, fmt)


def _gib(v: Any) -> str:
    return NA_TEXT if not isinstance(v, int | float) else f"{v / GIB:.1f}"


# (title, value from the row, text for display)
def gpus_cell(row: ResultRow) -> str:
    """The GPU count, or ``nodes x GPUs per node`` for a run that spanned machines (``--nodes``)."""
    result = getattr(row, "result", None)  # a row from an exported file may have none
    nodes = result.get("nodes") if isinstance(result, dict) else None
    if isinstance(nodes, list) and len(nodes) > 1:
        per = nodes[0].get("gpus") if isinstance(nodes[0], dict) else None
        per = per if isinstance(per, int) and per > 0 else max(1, row.gpus // len(nodes))
        return f"{len(nodes)}x{per}"
    return str(row.gpus)


COLUMNS: tuple[tuple[str, Callable[[ResultRow], Any], Callable[[Any], str]], ...] = (
    ("Model", lambda r: model_name(r.workload), str),
    ("Framework", lambda r: FRAMEWORK_NAMES.get(r.framework, r.framework), str),
    ("Mode", lambda r: r.mode, str),
    ("GPUs", lambda r: gpus_cell(r), str),
    ("GPU", gpu_model, str),
    ("Precision", lambda r: r.precision, lambda v: (v or "default").upper()),
    ("Batch/GPU", lambda r: r.batch_size, lambda v: NA_TEXT if v is None else str(v)),
    ("Samples/s", lambda r: r.samples_per_s, _num(",.1f")),
    ("GPU util %", lambda r: r.gpu_util, _num(".0f")),
    ("Mem-ctrl util %", lambda r: r.mem_util, _num(".0f")),
    ("GPU mem GiB", lambda r: r.gpu_mem_bytes, _gib),
    ("CPU util %", lambda r: r.cpu_util, _num(".0f")),
    ("CPU mem GiB", lambda r: r.cpu_mem_bytes, _gib),
    ("Spread %", spread_pct, _num(".1f")),
    ("Setup", setup_id, str),
    ("Flags", flags, lambda v: v or "-"),
)
# Where a column's cells do not sort as their values do: GPUs by their count ("16" after "2"; a run
# over machines, "2x4", as its 8 GPUs).
SORT_BY: dict[str, Callable[[ResultRow], Any]] = {"GPUs": lambda r: (r.gpus, gpus_cell(r))}


def sort_key(column: Col) -> Callable[[ResultRow], Any]:
    """How rows sort by ``column``: SORT_BY's key, else its values, text with the numbers in it
    compared as numbers (``image 64`` before ``image 128``). Missing values are the caller's."""
    if column[0] in SORT_BY:
        return SORT_BY[column[0]]
    get = column[1]

    def key(row: ResultRow) -> Any:
        value = get(row)
        if not isinstance(value, str):
            return value
        parts = re.split(r"(\d+)", value.lower())
        return tuple(int(p) if i % 2 else p for i, p in enumerate(parts))

    return key


# Columns whose cells are numbers (right-aligned in every table).
NUMERIC = {"GPUs", "Batch/GPU", "Samples/s", "GPU util %", "Mem-ctrl util %", "GPU mem GiB"}
NUMERIC |= {"CPU util %", "CPU mem GiB", "Spread %"}
CSV_KEYS = [
    "workload",
    "framework",
    "mode",
    "gpus",
    "gpu_name",
    "precision",
    "batch_size",
    "samples_per_s",
    "gpu_util",
    "mem_util",
    "gpu_mem_bytes",
    "cpu_util",
    "cpu_mem_bytes",
    "run_id",
    "job_id",
    "created",
]


Col = tuple[str, Callable[[ResultRow], Any], Callable[[Any], str]]
# The run's number, first in every table a person reads (the CLI's, the TUI's, Markdown) and the
# first column a narrow one leaves out (drop_rank): what `zbench compare` and the warnings name.
RUN: Col = ("Run", lambda r: r.run_id, lambda v: "" if v is None else str(v))
# The identity fields each column of COLUMNS that says what a run was shows (the GPU model shows a
# CPU run as "CPU", so the GPU column shows the device too).
COLUMN_FIELDS: dict[str, tuple[str, ...]] = {
    "Model": ("workload",),
    "Framework": ("framework",),
    "Mode": ("mode",),
    "GPUs": ("gpus",),
    "GPU": ("gpu_model", "device"),
    "Precision": ("precision",),
    "Batch/GPU": ("batch_size",),
}
# Identity fields a column of COLUMNS already shows.
SHOWN = frozenset(f for shown in COLUMN_FIELDS.values() for f in shown)


def differing(rows: Sequence[ResultRow]) -> list[str]:
    """The setup fields that are not columns and on which ``rows`` differ (identity's names,
    e.g. ``image_size``, ``env.torch``), in a stable order: what tells unlike rows apart."""
    return identity_differing([fields(r) for r in rows], SHOWN)


def setup_column(key: str) -> Col:
    """A column for one setup field: its value on each row (``on``/``off`` for a switch)."""
    title = label(key)
    return (title[:1].upper() + title[1:], lambda r: fields(r).get(key), value_text)


def setup_order(keys: Iterable[str], place: Sequence[str] | None = None) -> list[str]:
    """Identity fields in the order the results table shows them: the fields of its own columns in
    COLUMNS' order, then those ``table_columns`` adds, in ``differing``'s order (by name). A job's
    setup is named in this order too (``zbench.jobs.apart``). ``place``: another table's order of
    its own columns (a demo's options), the rest after them by name."""
    if place is None:
        place = [f for title, _, _ in COLUMNS for f in COLUMN_FIELDS.get(title, ())]
    return sorted(keys, key=lambda k: (place.index(k), "") if k in place else (len(place), k))


# The titles of COLUMNS that say what a run was (the rest are what it measured, or a digest).
SETUP_TITLES = frozenset(COLUMN_FIELDS)


# How the table gives way on a narrow terminal (``zbench results`` and the TUI's results screen,
# through ``zbench.textfit``): what a row is and its speed stay; the review's other figures go
# first, highest number first (titles not named here: 1).
PRIORITY = {
    "Model": 0,
    "Framework": 0,
    "Mode": 0,
    "GPUs": 0,
    "Samples/s": 0,
    "Precision": 1,
    "Batch/GPU": 2,
    "GPU util %": 2,
    "Flags": 2,
    "GPU mem GiB": 3,
    "Published": 3,
    "Mem-ctrl util %": 4,
    "CPU util %": 4,
    "Spread %": 4,
    "CPU mem GiB": 5,
    "GPU": 6,
    "Setup": 6,
    "Run": 7,
}
SHORT = {
    "Framework": "FW",
    "Precision": "Prec",
    "Batch/GPU": "B/GPU",
    "Samples/s": "smp/s",  # not img/s: the 3D U-Net counts volumes
    "GPU util %": "GPU%",
    "Mem-ctrl util %": "ctl%",
    "GPU mem GiB": "GPU GiB",
    "CPU util %": "CPU%",
    "CPU mem GiB": "CPU GiB",
    "Spread %": "Sprd%",
}


def drop_rank(title: str) -> int:
    """How early a column goes on a narrow terminal: higher first, 0 never."""
    return PRIORITY.get(title, 1)


def fitted_columns(titles: Sequence[str], keep: Collection[str] = ()) -> list[Column]:
    """The table's columns as ``zbench.textfit`` fits them: short headers, drop order (``keep``:
    titles never dropped, e.g. the setup columns that alone tell two rows apart)."""
    return [
        Column(
            t,
            SHORT.get(t),
            0 if t in keep else drop_rank(t),
            right=t in NUMERIC or t == "Run",
            flex=t == "Published",
            min_width=12,
        )
        for t in titles
    ]


def tells_apart(
    columns: Sequence[Col], body: Sequence[Sequence[str]], drop_first: Callable[[str], int]
) -> set[str]:
    """The titles of the setup columns (``SETUP_TITLES`` and ``table_columns``' own) a narrow
    table must keep: dropping any of them, in the order ``drop_first`` ranks them (higher first),
    would print two rows of different setups alike. ``body``: the rows' cells in ``columns``."""
    own = {t for t, _, _ in COLUMNS}
    setup = [k for k, (t, _, _) in enumerate(columns) if t in SETUP_TITLES or t not in own]
    distinct = len({tuple(row[k] for k in setup) for row in body})
    shown, needed = list(setup), set()
    for k in sorted(setup, key=lambda k: (drop_first(columns[k][0]), k), reverse=True):
        rest = [i for i in shown if i != k]
        if len({tuple(row[i] for i in rest) for row in body}) < distinct:
            needed.add(columns[k][0])
        else:
            shown = rest
    return needed


def table_columns(rows: Sequence[ResultRow]) -> tuple[Col, ...]:
    """COLUMNS, plus a column after "Samples/s" for every setup field on which ``rows`` differ:
    unlike rows never print as identical (image size 32 vs 48, data source, compile, ...). After
    the figure, not before it: at 100 columns the dashboard's table showed three such columns and
    had to be scrolled sideways to see the speed."""
    extra = tuple(setup_column(k) for k in differing(rows))
    at = next(i for i, c in enumerate(COLUMNS) if c[0] == "Samples/s") + 1
    return COLUMNS[:at] + extra + COLUMNS[at:]


def cells(row: ResultRow, columns: Sequence[Col] = COLUMNS) -> list[str]:
    """The row's text in each column (``columns``: the one table, or ``table_columns(rows)``)."""
    return [text(get(row)) for _, get, text in columns]


def published_cell(pub: Published) -> str:
    """The Published cell: the figure with its precision and GPU, or ``not comparable``."""
    if pub.anchor is not None:
        # Short enough for a table cell; published_notes() names the source and its settings.
        a = pub.anchor
        return f"{a.samples_per_s:,.0f} ({a.precision.upper()}, {a.gpu})"
    return "not comparable" if pub.reason else ""


def published_notes(pubs: Sequence[Published], rows: Sequence[ResultRow] = ()) -> list[str]:
    """One line per published source used in a table (where the figures come from, and how), and
    one per row whose published figure does not compare, saying why."""
    notes = sorted(
        {
            f"{p.anchor.gpu}: {p.anchor.source} ({p.anchor.settings})"
            for p in pubs
            if p.anchor is not None
        }
    )
    for row, p in zip(rows, pubs, strict=False):
        if p.reason and p.candidate is not None:
            c = p.candidate
            notes.append(
                f"run {row.run_id}: {c.gpu} {c.samples_per_s:,.0f} ({c.source}) not comparable: "
                f"{p.reason}"
            )
    return notes
