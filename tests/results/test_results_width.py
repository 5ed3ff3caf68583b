"""``zbench results`` in 80 columns: whole columns left out, no cell cut to "Re…"."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from zbench.cli import app


def test_results_at_80_columns(filled: Path) -> None:
    res = CliRunner(env={"COLUMNS": "80", "NO_COLOR": "1"}).invoke(app, ["results"])
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80, res.stdout
    table = "\n".join(lines[:-2])
    assert "ResNet-50" in table and "PyTorch" in table and "smp/s" in table
    assert "Re…" not in res.stdout and "Py…" not in res.stdout
    assert "--wide shows all" in res.stdout
    assert "% of one core" not in res.stdout  # no legend for a column left out at 80


def test_results_wide_and_piped_show_every_column(filled: Path) -> None:
    for env, args in (({"COLUMNS": "80"}, ["results", "--wide"]), ({"COLUMNS": ""}, ["results"])):
        res = CliRunner(env={**env, "NO_COLOR": "1"}).invoke(app, args)
        assert "Mem-ctrl util %" in res.stdout and "CPU mem GiB" in res.stdout
        assert "in % of one core (200 = two busy)" in res.stdout  # the column says its unit


def test_a_narrow_table_keeps_the_columns_that_tell_unlike_rows_apart(
    home: Path, tmp_path: Path
) -> None:
    """At 60 columns two runs that differed only in batch size, or only in their GPU (a mixed
    workstation), printed as the same row with two speeds: Batch and GPU were dropped."""
    from tests.rows import job_row, run_config, run_row
    from zbench.store import Store

    db = tmp_path / "mixed.db"
    store = Store(db)
    for batch, gpu in (
        (128, "NVIDIA RTX 4090"),
        (256, "NVIDIA RTX 4090"),
        (128, "NVIDIA RTX 3090"),
    ):
        config = run_config(precision="fp32", batch_size=batch, gpus=1)
        [job] = store.add_jobs([job_row(config=config, state="done")])
        store.add_run(
            run_row(**config, job_id=job, gpu_name=gpu, config=config, samples_per_s=1000.0)
        )
    res = CliRunner(env={"COLUMNS": "60", "NO_COLOR": "1"}).invoke(
        app, ["results", "--db", str(db)]
    )
    assert res.exit_code == 0, res.output
    rows = res.stdout.splitlines()[2:5]
    assert len(set(rows)) == 3, res.stdout  # three runs, three different lines
    assert "B/GPU" in res.stdout.splitlines()[1] and "RTX 3090" in res.stdout
    assert "Precision" in res.stdout  # all FP32: that column may go, and the note says so


def test_the_run_column_stays_while_the_lines_under_the_table_name_runs(h200_db: Path) -> None:
    """The Published line says "run 1: ... not comparable"; at 140 columns Run had already gone,
    so no row could be found by its number."""
    res = CliRunner(env={"COLUMNS": "140", "NO_COLOR": "1"}).invoke(
        app, ["results", "--db", str(h200_db)]
    )
    assert res.exit_code == 0, res.output
    assert "Published: run 1: " in res.stdout
    assert res.stdout.splitlines()[1].split()[0] == "Run"
