"""`zbench plot` through Typer's CliRunner: the charts it writes, what each shows, and the runs
no chart draws, named."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from zbench.cli import app

CLI = CliRunner(env={"COLUMNS": "220", "TERM": "dumb", "NO_COLOR": "1"})


def test_plot_writes_pngs_and_says_what_each_shows(filled: Path, tmp_path: Path) -> None:
    result = CLI.invoke(app, ["plot", "-o", str(tmp_path / "charts")])
    assert result.exit_code == 0
    lines = result.output.strip().splitlines()
    assert len(lines) == 9 and all(".png: " in line for line in lines)
    assert (tmp_path / "charts" / "scaling.png").stat().st_size > 10_000


def test_plot_without_results_is_exit_1(home: Path, tmp_path: Path) -> None:
    result = CLI.invoke(app, ["plot", "-o", str(tmp_path / "c")])
    assert result.exit_code == 1 and "no results to plot" in result.output


def test_plot_of_runs_no_chart_draws_says_which_runs_charts_draw(
    filled: Path, tmp_path: Path
) -> None:
    # The BF16 run alone: no FP32 run of its setup to stand beside. It said only "none of the
    # results fits a chart".
    result = CLI.invoke(app, ["plot", "--precision", "bf16", "-o", str(tmp_path / "c")])
    assert result.exit_code == 1
    assert result.output == (
        "zbench: plot: none of the 1 selected run fits a chart: the charts draw FP32 runs on one GPU "
        "(or the CPU), ResNet-50 training on one GPU beside the same on more, and each other "
        "precision beside an FP32 run of the same setup\n"
    )


def test_plot_names_the_runs_no_chart_draws_beside_those_it_draws(
    filled: Path, tmp_path: Path
) -> None:
    # Runs 7 (BF16, with no FP32 run of its setup selected) and 4 (two GPUs, with no one-GPU run)
    # were left out of every chart without a word; run 8 (VGG16, FP32) is drawn.
    out = tmp_path / "c"
    result = CLI.invoke(app, ["plot", "--run", "7", "--run", "8", "--run", "4", "-o", str(out)])
    assert result.exit_code == 0
    lines = result.output.strip().splitlines()
    assert all(".png: " in line for line in lines[:-1]) and "bars from runs 8" in result.output
    assert lines[-1] == (
        "no chart draws runs 4, 7: the charts draw FP32 runs on one GPU (or the CPU), ResNet-50 "
        "training on one GPU beside the same on more, and each other precision beside an FP32 run "
        "of the same setup"
    )
    # With the FP32 run of its setup, the BF16 run is drawn (the speedup chart), and so is run 4
    # beside the one-GPU run of its setup (the scaling chart).
    runs = ["--run", "1", "--run", "7", "--run", "8", "--run", "4"]
    both = CLI.invoke(app, ["plot", *runs, "-o", str(out)])
    assert both.exit_code == 0 and "no chart draws" not in both.output


def test_plot_of_multi_gpu_runs_alone_names_the_gpu_count_charts_draw(
    filled: Path, tmp_path: Path
) -> None:
    # Two FP32 runs on 2 GPUs: "the charts draw FP32 runs" was all it said, of FP32 runs.
    result = CLI.invoke(app, ["plot", "--gpus", "2", "-o", str(tmp_path / "c")])
    assert result.exit_code == 1
    assert result.output.startswith("zbench: plot: none of the 2 selected runs fits a chart")
    assert "FP32 runs on one GPU" in result.output
