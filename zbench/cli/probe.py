"""``zbench probe``: a progress bar while it runs, then each figure beside its theoretical peak."""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

POLL_S = 0.25


def _n(v: Any, digits: int = 1) -> str:
    return "n/a" if v is None else f"{v:,.{digits}f}"


def print_rows(rows: list[dict[str, Any]], console: Console | None = None) -> None:
    """Print the probe's rows: each measured figure beside its theoretical peak, and the ratio."""
    t = Table(box=None, header_style="bold")
    for col, justify in (
        ("GPU", "left"),
        ("test", "left"),
        ("measured", "right"),
        ("peak", "right"),
        ("ratio", "right"),
        ("NVLink TX seen", "right"),
    ):
        t.add_column(col, justify=justify, no_wrap=True)  # type: ignore[arg-type]
    for r in rows:
        nvl = r.get("nvlink_tx_gb_s")
        t.add_row(
            str(r["gpu"]),
            r["name"],
            f"{_n(r['value'])} {r['unit']}",
            f"{_n(r['peak'])} {r['unit']}" if r["peak"] else "n/a",
            "n/a" if r["ratio"] is None else f"{100 * r['ratio']:.0f}%",
            "" if r["test"] != "p2p" else f"{_n(nvl)} GB/s",
        )
    (console or Console()).print(t)


def run_probe(
    gpus: str | None = None,
    quick: bool = False,
    json_out: bool = False,
    p2p_seconds: float | None = None,
) -> int:
    """Submit a probe job, follow it with a progress bar and print its figures. Ctrl-C leaves the
    job running, as for any job. Exit 0 done, 1 the probe failed, 2 bad input."""
    from zbench.cli.outcome import fail
    from zbench.gpuids import GpuRequestError
    from zbench.jobs.probe_submit import ProbeError, probe_figures, submit_probe

    try:
        job_id = submit_probe(gpus, quick, p2p_seconds)
        if not _follow(job_id, quiet=json_out):
            if json_out:  # as `zbench run --json`: a script learns which job runs on
                print(json.dumps({"job_id": job_id}))
            print(
                f"zbench: probe detached; job {job_id} keeps running (`zbench jobs`, "
                f"`zbench cancel {job_id}`)",
                file=sys.stderr,
            )
            return 1
        figures = probe_figures(job_id)
    except (ProbeError, GpuRequestError) as exc:
        return fail(str(exc), exc.exit_code)
    if json_out:
        print(json.dumps(figures, indent=2))
    else:
        print_rows(figures["rows"])
    return 0


def _follow(job_id: int, *, quiet: bool) -> bool:
    """A progress bar until the job has finished (True); False after Ctrl-C (the job belongs to
    the supervisor and keeps running)."""
    from zbench.jobs import api

    try:
        with Progress(disable=quiet, transient=True) as progress:
            task = progress.add_task(f"probe (job {job_id})", total=None)
            while True:
                info = api.get_job(job_id)
                progress.update(
                    task,
                    completed=info.step or 0,
                    total=info.total,
                    description=f"probe (job {job_id}): {info.phase or info.state}",
                )
                if info.finished:
                    return True
                time.sleep(POLL_S)
    except KeyboardInterrupt:
        return False
