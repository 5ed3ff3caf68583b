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
