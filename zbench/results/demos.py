"""Demo results (runs of framework ``demo``): their own table, as Markdown, CSV or JSON."""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from zbench import paths
from zbench.results.store import Store

COLUMNS: tuple[tuple[str, str], ...] = (
    ("Demo", "demo"),
    ("Algo", "algo"),
    ("Board", "board"),
    ("Envs", "envs"),
    ("GPU", "gpu_name"),
    ("Min", "minutes"),
    ("Env steps", "env_steps"),
    ("Steps/s", "steps_per_s"),
    ("Beat 8 s", "time_to_beat_review_s"),
    ("Mean", "final_mean_score"),
    ("Best", "best_score"),
    ("Games", "games"),
)
TEXT_COLUMNS = {"Demo", "Algo", "GPU"}


@dataclass(frozen=True)
class DemoResult:
    run_id: int
    job_id: int | None
    created: float
    demo: str
    algo: str
    board: int | None
    envs: int | None
    gpu_name: str | None
    minutes: float | None
    env_steps: int | None
    steps_per_s: float | None
    time_to_beat_review_s: float | None
    final_mean_score: float | None
    best_score: int | None
    games: int | None
    curve: list[dict[str, Any]]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _row(run: dict[str, Any]) -> DemoResult:
    res, cfg = run["result"] or {}, run["config"] or {}
    wall = res.get("wall_s")
    return DemoResult(
        run_id=run["id"],
        job_id=run["job_id"],
        created=run["created"],
        demo=run["workload"],
        algo=run["mode"],
        board=res.get("board", cfg.get("board")),
        envs=res.get("envs"),
        gpu_name=run["gpu_name"],
        minutes=round(wall / 60, 2) if isinstance(wall, int | float) else cfg.get("minutes"),
        env_steps=res.get("env_steps"),
        steps_per_s=res.get("samples_per_s"),
        time_to_beat_review_s=res.get("time_to_beat_review_s"),
        final_mean_score=res.get("final_mean_score"),
        best_score=res.get("best_score"),
        games=res.get("games"),
        curve=list(res.get("curve") or []),
    )


def demo_results(
    db: str | os.PathLike[str] | None = None, demo: str | None = None
) -> list[DemoResult]:
    """Stored demo runs, oldest first (``demo`` filters by name, e.g. ``snake``)."""
    where, params = "framework = ?", ["demo"]
    if demo:
        where, params = where + " AND workload = ?", [*params, demo]
    return [_row(r) for r in Store(paths.db_path(db)).runs(where, params)]


def cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.2f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def render(rows: Sequence[DemoResult], fmt: str) -> str:
    """``md``, ``csv`` or ``json`` (JSON keeps the learning curves)."""
    if fmt == "json":
        return json.dumps({"demo_results": [r.as_dict() for r in rows]}, indent=2)
    if fmt == "csv":
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow([key for _, key in COLUMNS])
        for r in rows:
            writer.writerow(["" if getattr(r, k) is None else getattr(r, k) for _, k in COLUMNS])
        return buf.getvalue()
    if fmt == "md":
        lines = ["| " + " | ".join(t for t, _ in COLUMNS) + " |"]
        lines.append(
            "|" + "|".join("---" if t in TEXT_COLUMNS else "---:" for t, _ in COLUMNS) + "|"
        )
        lines += ["| " + " | ".join(cell(getattr(r, k)) for _, k in COLUMNS) + " |" for r in rows]
        return "\n".join(lines) + "\n"
    raise ValueError(f"unknown format {fmt!r}: use md, csv or json")
