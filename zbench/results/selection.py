"""The runs a report or a samples export reads (``api.Filters``), split by kind: benchmark rows (the
review's workloads), ``probe`` runs (micro-benchmark figures) and demo runs (a result with a
``demo`` key)."""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field

from zbench.results.api import PROBE, Filters, ResultRow, review_order

Db = str | os.PathLike[str] | None


@dataclass
class Selection:
    """The selected runs, split by kind, each kind in the review's order."""

    rows: list[ResultRow] = field(default_factory=list)
    probes: list[ResultRow] = field(default_factory=list)
    demos: list[ResultRow] = field(default_factory=list)

    @property
    def all(self) -> list[ResultRow]:
        return [*self.rows, *self.probes, *self.demos]


def select(db: Db, filters: Filters) -> Selection:
    """The runs ``filters`` selects (ValueError for a filter that cannot apply), split by kind."""
    out = Selection()
    runs = filters.query(db)
    if filters.framework is None:  # demo jobs (framework "demo") are left out of the plain query
        runs += dataclasses.replace(filters, framework="demo").query(db)
    if filters.workload is None:  # and so are probe runs
        runs += dataclasses.replace(filters, workload=PROBE).query(db)
    for r in runs:
        if r.workload == PROBE:
            out.probes.append(r)
        elif isinstance(r.result, dict) and r.result.get("demo"):
            out.demos.append(r)
        else:
            out.rows.append(r)
    out.rows = review_order(out.rows)
    return out
