"""The runs a report or a samples export reads (``api.Filters``), split by the section each kind's
row of ``contract.kinds`` names: benchmark rows (the review's workloads), ``probe`` runs
(micro-benchmark figures) and demo runs."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from zbench.contract import kinds
from zbench.results.api import Filters, ResultRow, query_results, review_order

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
    sections = {"rows": out.rows, "probes": out.probes, "demos": out.demos}
    found = query_results(db, **vars(filters), kinds=tuple(kinds.KINDS))
    for r in filters.checked(found, db, section=None):  # every section: no run is elsewhere
        sections[kinds.get(r.kind).section].append(r)
    out.rows = review_order(out.rows)
    return out
