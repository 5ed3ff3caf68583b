"""``zbench report`` and ``zbench export --samples``: thin wrappers that print.

Each returns an exit status: 0 ok, 1 nothing to report, 2 bad input.
"""

from __future__ import annotations

import sys
from pathlib import Path

from zbench.results.selection import Db, RunFilter, SelectionError, select


def _err(message: str) -> None:
    print(f"zbench: {message}", file=sys.stderr)


def parse_job_ids(text: str | None) -> tuple[int, ...]:
    """``"3,4,7-9"`` -> (3, 4, 7, 8, 9)."""
    if not text:
        return ()
    out: list[int] = []
    for part in text.split(","):
        lo, dash, hi = part.strip().partition("-")
        if not lo.isdigit() or (dash and not hi.isdigit()):
            raise SelectionError(f"--jobs wants ids like 3,4,7-9, got {text!r}")
        out += range(int(lo), int(hi) + 1) if dash else [int(lo)]
    return tuple(out)


def report_command(out_dir: Path, flt: RunFilter, db: Db, quiet: bool = False) -> int:
    from zbench.results.report import ReportError, write_report
    from zbench.results.report_html import ReportImageError

    def say(msg: str) -> None:
        if not quiet:
            print(f"report: {msg}", file=sys.stderr)

    if out_dir.exists() and not out_dir.is_dir():
        _err(f"{out_dir} is a file, not a folder")
        return 2
    try:
        report = write_report(out_dir, flt, db, say)
    except SelectionError as exc:
        _err(str(exc))
        return 2
    except ReportError as exc:
        _err(str(exc))
        return 1
    except (ReportImageError, OSError) as exc:
        _err(f"cannot write the report to {out_dir}: {exc}")
        return 2
    print(f"{report.markdown}\n{report.html}")
    print(f"{report.runs} run(s), {len(report.figures)} figure(s)", file=sys.stderr)
    return 0


def export_samples_command(fmt: str, output: Path | None, flt: RunFilter, db: Db) -> int:
    from zbench.results.samples_export import SAMPLE_FORMATS, render_samples

    fmt = "csv" if fmt == "md" else fmt  # md is export's default; samples are not a table
    fmt = "jsonl" if fmt == "json" else fmt
    if fmt not in SAMPLE_FORMATS:
        _err(f"samples export: unknown format {fmt!r} (choose csv or jsonl)")
        return 2
    try:
        sel = select(db, flt)
    except SelectionError as exc:
        _err(str(exc))
        return 2
    text = render_samples(sel.all, fmt, db)
    if output is None:
        sys.stdout.write(text)
        return 0
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        _err(f"cannot write {output}: {exc.strerror or exc}")
        return 2
    print(f"Wrote {max(text.count(chr(10)) - (fmt == 'csv'), 0)} sample row(s) to {output}",
          file=sys.stderr)  # fmt: skip
    return 0
