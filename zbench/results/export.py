"""Results as Markdown (renders on GitHub), CSV, or JSON with full configs.

Every format carries its provenance: the machine and software of each setup, each row's precision
detail, data, measured window, repeats and spread, and a warning on any row measured under
contention, on a saturated host, with throttled clocks, or with a spread over 2%. A JSON export
reads back (``rows_from_json``: `zbench compare` of files from other machines), each field checked.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import MISSING
from pathlib import Path
from typing import Any

from zbench.contract.options import one_of
from zbench.csvcell import write_rows
from zbench.errors import ZbenchError
from zbench.results.anchors import Published, published_for
from zbench.results.api import ResultRow
from zbench.results.format import (
    CSV_KEYS,
    NUMERIC,
    RUN,
    cells,
    differing,
    num,
    published_cell,
    published_notes,
    table_columns,
)
from zbench.results.identity import fields, setup_id
from zbench.results.provenance import (
    data_source,
    machine,
    machine_line,
    repeats,
    spread_pct,
    warnings,
    window,
)

# The export formats and their names in the TUI's export dialog.
FORMAT_NAMES = {"md": "Markdown", "csv": "CSV", "json": "JSON"}
FORMATS = tuple(FORMAT_NAMES)
# What a file's name says it holds, when -f does not (samples add JSON lines).
SUFFIX_FORMATS = {".md": "md", ".markdown": "md", ".csv": "csv", ".json": "json", ".jsonl": "jsonl"}
# Names of formats zbench's exports do not write: without -f, `-o results.xlsx` wrote Markdown under
# a spreadsheet's name. A name with another suffix (or none: `-o results`, `-o notes.txt`) is still
# written in the default format. The value says which command writes that kind of file, if one does.
OTHER_SUFFIXES = {
    **dict.fromkeys((".html", ".htm"), "zbench report writes HTML"),
    **dict.fromkeys((".png", ".svg"), "zbench plot draws PNG charts"),
    **dict.fromkeys(
        (".xlsx", ".xls", ".ods", ".pdf", ".tsv", ".parquet", ".xml", ".yaml", ".yml"), ""
    ),
}


class FormatError(ZbenchError, ValueError):
    """Unknown export format (one line, exit status 2)."""

    @classmethod
    def unknown(cls, fmt: str, choices: Sequence[str] = FORMATS, what: str = "") -> FormatError:
        """The one wording of a ``--format`` that is not one of ``choices``."""
        return cls(f"{what}--format: {one_of(choices, fmt)}")


def pick_format(
    fmt: str | None,
    output: Path | None,
    choices: Sequence[str],
    default: str,
    same: dict[str, str] | None = None,
    what: str = "",
) -> str:
    """The format to write: ``-f`` when given, else what the output file's suffix names
    (``-o results.csv`` writes CSV), else ``default``. A ``-f`` that contradicts the suffix
    (``-f md -o results.csv``) and a format not in ``choices`` raise FormatError. ``same`` maps
    a format to the one it means here (samples: json is JSON lines)."""
    same = same or {}
    named = None
    if output is not None and str(output) != "-":
        named = SUFFIX_FORMATS.get(output.suffix.lower())
    named = same.get(named, named) if named else None
    if fmt is None:
        if named and named not in choices:  # -o s.md for samples: say where md came from
            raise FormatError(
                f"{what}{output.name if output else ''}: the name asks for {named}; "
                f"give -f {' or -f '.join(choices)}, or name the file for one of them"
            )
        if output is not None and output.suffix.lower() in OTHER_SUFFIXES:
            raise FormatError(_not_written(output, choices, what))
        fmt = named or default
    else:
        fmt = same.get(fmt.lower(), fmt.lower())  # -f CSV as -o r.CSV
        if named and fmt in choices and named != fmt:
            raise FormatError(
                f"-f {fmt} but {output.name if output else ''} is named {named}: "
                f"drop -f or name the file .{fmt}"
            )
    if fmt not in choices:
        raise FormatError.unknown(fmt, choices, what)
    return fmt


def _not_written(output: Path, choices: Sequence[str], what: str) -> str:
    """Why ``-o NAME.xlsx`` (a format no export writes) is refused, and what to do instead."""
    names = ", ".join(choices[:-1]) + f" or {choices[-1]}"
    elsewhere = OTHER_SUFFIXES[output.suffix.lower()]
    return (
        f"{what}{output.name}: this export writes {names}, not {output.suffix}"
        f"{f' ({elsewhere})' if elsewhere else ''}; name the file .{choices[0]} or give -f"
    )


# Stored text (a GPU name, a tag, a runner's message) is data, never Markdown: ``![x](y)`` in a GPU
# name must not become an image (the HTML report refuses images it does not hold), nor ``[x](y)`` a
# link or ``<b>`` markup. CommonMark lets a backslash escape any ASCII punctuation; these are the
# characters that start inline syntax (pipes for tables, ``#`` for a heading). ``_`` is left as it
# is: inside a word (``hw_thermal``) it is no emphasis, and names are full of it.
_MD_SPECIAL = re.compile(r"([\\`*\[\]<!~&#|])")


def md_text(text: str) -> str:
    """Stored text for Markdown prose: inline syntax escaped, line breaks as spaces (one line)."""
    return " ".join(_MD_SPECIAL.sub(r"\\\1", str(text)).split())


def md_escape(text: str) -> str:
    """A Markdown table cell: inline syntax and pipes escaped, line breaks as <br>, so one cell
    stays one cell of plain text."""
    text = _MD_SPECIAL.sub(r"\\\1", text)
    return text.replace("\r\n", "<br>").replace("\n", "<br>").replace("\r", "<br>")


def md_table(titles: list[str], rows: list[list[str]], numeric: set[str]) -> list[str]:
    """A Markdown table's lines: cells escaped, numeric columns right-aligned."""
    lines = [
        "| " + " | ".join(titles) + " |",
        "|" + "|".join("---:" if t in numeric else "---" for t in titles) + "|",
    ]
    lines += ["| " + " | ".join(md_escape(v) for v in r) + " |" for r in rows]
    return lines


def machines(rows: Sequence[ResultRow]) -> list[tuple[str, list[int | None]]]:
    """Each distinct machine/software line, with the runs measured on it."""
    seen: dict[str, list[int | None]] = {}
    for row in rows:
        seen.setdefault(machine_line(machine(row)), []).append(row.run_id)
    # In run order, whatever order the rows are shown in (the report groups them by workload).
    return [(line, sorted(ids, key=lambda i: i or 0)) for line, ids in seen.items()]


def runs_words(ids: Sequence[int | None]) -> str:
    """``run 4`` or ``runs 1, 2, 6``."""
    return f"run{'s' if len(ids) > 1 else ''} {', '.join(str(i) for i in ids)}"


# The Markdown export's parts, each a list of lines; ``zbench report`` prints the same parts.


def md_results(rows: Sequence[ResultRow]) -> list[str]:
    """The review's table (the one column table), and where its published figures come from."""
    pubs = [published_for(r) for r in rows]
    show_published = any(p.anchor or p.reason for p in pubs)
    columns = table_columns(rows)
    titles = [RUN[0]] + [t for t, _, _ in columns] + (["Published"] if show_published else [])
    body = [
        cells(row, (RUN, *columns)) + ([published_cell(p)] if show_published else [])
        for row, p in zip(rows, pubs, strict=True)
    ]
    lines = md_table(titles, body, NUMERIC | {"Run"})
    notes = published_notes(pubs, rows)
    if notes:
        lines += ["", "Published figures: " + "; ".join(notes) + "."]
    return lines


def md_warnings(rows: Sequence[ResultRow]) -> list[str]:
    """One bullet per reason to distrust a row (``provenance.warnings``); nothing when none."""
    flagged = [(row, w) for row in rows for w in warnings(row)]
    if not flagged:
        return []
    return ["**Warnings**", ""] + [
        f"- ⚠ run {row.run_id}: {md_text(text)}" for row, (_, text) in flagged
    ]


def md_measured(rows: Sequence[ResultRow]) -> list[str]:
    """How each row was measured: its setup, precision detail, data, window and spread."""
    detail = [
        [
            str(row.run_id or ""),
            setup_id(row),
            str((row.result or {}).get("precision_detail") or row.precision or "n/a"),
            data_source(row),
            window(row),
            num(spread_pct(row), ".1f"),
        ]
        for row in rows
    ]
    return md_table(
        ["Run", "Setup", "Precision detail", "Data", "Window", "Spread %"],
        detail,
        {"Run", "Spread %"},
    )


def md_machines(rows: Sequence[ResultRow]) -> list[str]:
    """One bullet per machine and software stack, naming its runs."""
    return [
        f"- {runs_words(ids)}: {md_text(line) if line else 'not recorded'}"
        for line, ids in machines(rows)
    ]


def render_md(rows: Sequence[ResultRow]) -> str:
    """The results as Markdown: the table, warnings, how each row was measured, the machines."""
    lines = md_results(rows)
    warned = md_warnings(rows)
    lines += ["", *warned] if warned else []
    lines += ["", "**How each row was measured**", "", *md_measured(rows)]
    lines += ["", "**Machine**", "", *md_machines(rows)]
    return "\n".join(lines) + "\n"


PROVENANCE_KEYS = ["setup", "precision_detail", "data", "window", "repeats", "spread_pct"]
PROVENANCE_KEYS += ["warnings", "cpu", "gpus_model", "driver", "cuda", "cudnn", "versions"]


def provenance(row: ResultRow) -> dict[str, Any]:
    """One row's provenance as flat values (CSV columns; the JSON export's ``provenance``)."""
    info = machine(row)
    versions = {k: v for k, v in info.items() if k not in ("cpu", "cpu_count", "gpus", "driver")}
    versions = {k: v for k, v in versions.items() if k not in ("cuda", "cudnn") and v is not None}
    return {
        "setup": setup_id(row),
        "precision_detail": (row.result or {}).get("precision_detail"),
        "data": data_source(row),
        "window": window(row),
        "repeats": repeats(row),
        "spread_pct": spread_pct(row),
        "warnings": [text for _, text in warnings(row)],
        "cpu": info["cpu"],
        "gpus_model": info["gpus"],
        "driver": info["driver"],
        "cuda": info["cuda"],
        "cudnn": info["cudnn"],
        "versions": versions,
    }


def _csv_value(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, list):
        return "; ".join(str(v) for v in value)
    if isinstance(value, dict):
        return " ".join(f"{k}={v}" for k, v in value.items())
    return value


def render_csv(rows: Sequence[ResultRow]) -> str:
    """One line per row: the review's figures, then every setup field on which the rows differ
    (``image_size``, ``env.torch``, ...), its provenance and its published figure."""
    setup = differing(rows)
    header = [
        *CSV_KEYS,
        *setup,
        *PROVENANCE_KEYS,
        "published_samples_per_s",
        "published_source",
        "published_note",
    ]
    out = []
    for row in rows:
        pub = published_for(row)
        values = ["" if getattr(row, k) is None else getattr(row, k) for k in CSV_KEYS]
        prov = provenance(row)
        own = fields(row)
        out.append(
            [
                *values,
                *(_csv_value(own.get(k)) for k in setup),
                *(_csv_value(prov[k]) for k in PROVENANCE_KEYS),
                pub.anchor.samples_per_s if pub.anchor else "",
                pub.anchor.source if pub.anchor else "",
                pub.reason or "",
            ]
        )
    return write_rows(header, out)


def _published_json(pub: Published) -> dict[str, Any] | None:
    if pub.anchor is not None:
        return pub.anchor.__dict__
    if pub.reason and pub.candidate is not None:
        return {"not_comparable": pub.reason, "candidate": pub.candidate.__dict__}
    return None


def render_json(rows: Sequence[ResultRow]) -> str:
    """The results as JSON: each row with its published figure and provenance, and the machines."""
    items = []
    for row in rows:
        item = row.as_dict()
        item["published"] = _published_json(published_for(row))
        item["provenance"] = provenance(row)
        items.append(item)
    block = [{"runs": ids, "machine": line} for line, ids in machines(rows)]
    doc = {"zbench_results": RESULTS_FORMAT, "provenance": {"machines": block}, "results": items}
    return json.dumps(doc, indent=2, default=list) + "\n"


def render(rows: Sequence[ResultRow], fmt: str) -> str:
    """The results in ``fmt`` (md, csv or json); FormatError for any other format."""
    if fmt == "md":
        return render_md(rows)
    if fmt == "csv":
        return render_csv(rows)
    if fmt == "json":
        return render_json(rows)
    raise FormatError.unknown(fmt)


RESULTS_FORMAT = 1  # ``zbench_results`` in a JSON export: the version this zbench writes and reads
# What a field of an exported row may hold, by its annotation's first type (None where it allows).
_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "str": (str,),
    "int": (int,),
    "float": (int, float),
    "dict": (dict,),
}
_TYPE_WORDS = {"str": "text", "int": "an integer", "float": "a number", "dict": "an object"}


def rows_from_json(text: str) -> list[ResultRow]:
    """Rows from ``zbench export --format json`` output (possibly from another machine), each
    field checked against ``ResultRow``'s types: a ValueError names the first that is not."""
    data = json.loads(text)
    version = data.get("zbench_results") if isinstance(data, dict) else None
    if isinstance(version, int) and version > RESULTS_FORMAT:
        raise ValueError(
            f"written by a newer zbench: results format {version}, this one reads up to "
            f"{RESULTS_FORMAT}; upgrade zbench"
        )
    items = data.get("results", []) if isinstance(data, dict) else data
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise ValueError("expected a list of result objects")
    return [_row_from_item(item, n) for n, item in enumerate(items, 1)]


def _row_from_item(item: dict[str, Any], n: int) -> ResultRow:
    values: dict[str, Any] = {}
    missing = []
    for name, f in ResultRow.__dataclass_fields__.items():
        kind, *rest = str(f.type).split(" | ")
        kind = kind.split("[")[0]
        value = item.get(name)
        if value is None and "None" in rest:
            values[name] = None
        elif value is None and (f.default is not MISSING or f.default_factory is not MISSING):
            continue  # left out or null: the field's default (an empty config, say)
        elif value is None and name not in item:
            missing.append(name)
        elif (
            isinstance(value, bool)
            or not isinstance(value, _JSON_TYPES[kind])
            or (isinstance(value, float) and not math.isfinite(value))
        ):
            raise ValueError(f"result {n}: {name} should be {_TYPE_WORDS[kind]}, got {value!r}")
        elif isinstance(value, int | float) and value < 0:  # a count, a rate, a load: never < 0
            raise ValueError(f"result {n}: {name} should be 0 or more, got {value!r}")
        else:
            values[name] = value
    if missing:
        raise ValueError(f"result {n}: no {', '.join(missing)}")
    return ResultRow(**values)
