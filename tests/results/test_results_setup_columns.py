"""Rows that differ in a setup field that is not a column (image size, steps, compile, ...) show it
as a column: in `zbench results`, `--wide`, Markdown and CSV; rows alike in it add no column."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.rows import job_row, run_config, run_row
from zbench.cli import app
from zbench.results.api import query_results
from zbench.results.format import differing, table_columns
from zbench.store import Store

CLI = CliRunner(env={"COLUMNS": "200", "TERM": "dumb", "NO_COLOR": "1"})
T0 = 1_780_000_000.0


def _add(store: Store, n: int, **config: Any) -> None:
    full = run_config(device="cpu", steps=3, image_size=32, compile=False) | config
    [job] = store.add_jobs([job_row(precision="fp32", config=full, state="done", created=T0 + n)])
    sps = 40.0 + n
    store.add_run(
        run_row(
            job_id=job,
            created=T0 + n,
            gpus=0,
            gpu_name=None,
            samples_per_s=sps,
            config=full,
            env={"torch": "2.11"},
            result={"samples_per_s": sps},
        )
    )


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ZBENCH_HOME", str(tmp_path))
    monkeypatch.delenv("ZBENCH_DB", raising=False)
    path = tmp_path / "r.db"
    store = Store(path)
    _add(store, 0, image_size=32)
    _add(store, 1, image_size=48)
    return path


def _row_of(text: str, run: str) -> str:
    return next(line for line in text.splitlines() if line.split()[:1] == [run])


def test_results_table_shows_the_image_size_of_each_row(db: Path) -> None:
    for wide in ([], ["--wide"]):
        out = CLI.invoke(app, ["results", "--db", str(db), *wide]).output
        assert "Image size" in out
        assert " 32 " in _row_of(out, "1") and " 48 " in _row_of(out, "2")


def test_markdown_and_csv_show_the_image_size_of_each_row(db: Path) -> None:
    md = CLI.invoke(app, ["export", "-f", "md", "--db", str(db)]).output
    header = md.splitlines()[0].split(" | ")
    col = header.index("Image size")
    body = [line.split(" | ") for line in md.splitlines()[2:4]]
    assert [r[col] for r in body] == ["32", "48"]
    text = CLI.invoke(app, ["export", "-f", "csv", "--db", str(db)]).output
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [r["image_size"] for r in rows] == ["32", "48"]


def test_alike_fields_add_no_column_and_switches_read_on_off(db: Path) -> None:
    rows = query_results(db)
    assert differing(rows) == ["image_size"]
    assert differing(rows[:1]) == []
    _add(Store(db), 2, image_size=48, compile=True)
    rows = query_results(db)
    assert differing(rows) == ["compile", "image_size"]
    columns = table_columns(rows)
    titles = [t for t, _, _ in columns]
    at = titles.index("Samples/s") + 1  # after the figure: it stays in view on a narrow screen
    assert titles[at : at + 2] == ["Compile", "Image size"]
    compile_col = columns[titles.index("Compile")]
    assert [compile_col[2](compile_col[1](r)) for r in rows] == ["off", "off", "on"]
