"""``zbench report``: a thin wrapper that prints.

It returns an exit status, as ``cli/outcome.py`` rules: 0 ok, 1 nothing to report, 2 bad input.
"""

from __future__ import annotations

import sys
from pathlib import Path

from zbench.cli.options import folder_problem
from zbench.cli.outcome import fail, nothing_selected
from zbench.errors import os_error_exit
from zbench.results.api import Filters
from zbench.results.selection import Db
from zbench.textfit import counted


def report_command(out_dir: Path, filters: Filters, db: Db, quiet: bool = False) -> int:
    """Write the report into ``out_dir``; exit 2 for a bad folder or filter, 1 when it fails."""
    from zbench.results.report import ReportError, write_report
    from zbench.results.report_html import ReportImageError

    def say(msg: str) -> None:
        if not quiet:
            print(f"report: {msg}", file=sys.stderr)

    problem = folder_problem(out_dir, "report.md, report.html and figures/", (".md", ".html"))
    if problem:
        return fail(problem)
    try:
        report = write_report(out_dir, filters, db, say)
    except ReportError as exc:  # no run selected
        return nothing_selected(str(exc), listing=False)
    except ValueError as exc:  # a filter that cannot apply (--since, --suite-run, --suite)
        return fail(str(exc))
    except ReportImageError as exc:
        return fail(f"cannot write the report to {out_dir}: {exc}")
    except OSError as exc:  # "[Errno 17] File exists: 'out/figures'" was the line
        message, code = os_error_exit(exc)
        return fail(f"cannot write the report: {message}", code)
    print(f"{report.markdown}\n{report.html}")
    print(
        f"{counted(report.runs, 'run')}, {counted(len(report.figures), 'figure')}", file=sys.stderr
    )
    return 0
