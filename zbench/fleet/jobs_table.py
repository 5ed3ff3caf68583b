"""Every host's jobs as one table, for ``zbench jobs --hosts`` and the TUI's fleet screen: the rows
of each host's ``zbench jobs --json``, with the host, and their speed titled by its unit, as
``zbench jobs`` titles it (``jobs.api.speed_title``)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any

from zbench.jobs.api import rate_unit_of, shared_unit, speed_cell, speed_title

HEADERS = ("Host", "ID", "State", "Job", "Samples/s", "Started", "Reason")
SPEED = HEADERS.index("Samples/s")  # the column titled by its speeds' unit


def fleet_jobs_table(
    rows: Sequence[Mapping[str, Any]],
) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """The headers and each row's cells. A demo's board-steps/s or frames/s beside a benchmark's
    samples/s: the speed column is ``Rate`` and each cell says its unit."""
    units = [rate_unit_of(r.get("kind"), r.get("workload")) for r in rows]
    speeds = [r.get("samples_per_s") for r in rows]
    numbers = [s if isinstance(s, int | float) else None for s in speeds]
    unit = shared_unit(zip(units, numbers, strict=True))
    headers = (*HEADERS[:SPEED], speed_title(unit), *HEADERS[SPEED + 1 :])
    cells: list[tuple[str, ...]] = []
    for row, row_unit, speed in zip(rows, units, numbers, strict=True):
        started = row.get("started")
        when = dt.datetime.fromtimestamp(started).strftime("%m-%d %H:%M") if started else ""
        job = " ".join(str(row.get(k) or "") for k in ("workload", "framework", "mode"))
        precision = row.get("precision")
        cells.append(
            (
                str(row.get("host", "")),
                str(row.get("id", "")),
                str(row.get("state", "")),
                f"{job.strip()} {precision}" if precision else job.strip(),
                speed_cell(speed, row_unit, unit),
                when,
                " ".join(str(row.get("reason") or "").split()),
            )
        )
    return headers, cells
