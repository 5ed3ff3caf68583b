"""Demo rows in the results: the demo table (Markdown per demo, CSV, JSON) and the report's demos
section from a made demo database: Snake's learning curve and figures, motion's figures."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from tests.rows import job_row, run_row
from zbench.contract.measure import build_demo_result
from zbench.results.demos import demo_results, render
from zbench.results.report import write_report
from zbench.store import Store

T0 = 1_796_100_000.0
SNAKE = {
    "samples_per_s": 2.1e6,
    "env_steps": 6_300_000,
    "wall_s": 300.0,
    "best_score": 31,
    "final_mean_score": 14.2,
    "games": 5200,
    "board": 12,
    "envs": 8192,
    "time_to_beat_review_s": 41.5,
    "env_only_steps_per_s": 9.9e6,
    "curve": [{"t_s": 10.0 * i, "mean_score": i * 0.5, "best_score": i} for i in range(1, 20)],
}
MOTION = {
    "fps": 410.2,
    "stream_fps": 95.0,
    "size": 256,
    "device": "cuda",
    "train_steps": 5000,
    "quality": {
        "source": {"l1": 0.081, "akd_px": 6.1},
        "affine": {"l1": 0.064, "akd_px": 3.2},
        "model": {"l1": 0.031, "akd_px": 1.4},
    },
}


def _add(store: Store, n: int, demo: str, mode: str, result: dict) -> None:
    config = {"demo": demo, "kind": "demo", "mode": mode, "device": "cuda"}
    [job] = store.add_jobs(
        [
            job_row(
                workload=demo,
                framework="demo",
                mode=mode,
                config=config,
                kind="demo",
                state="done",
                created=T0 + n,
            )
        ]
    )
    store.add_run(
        run_row(
            job_id=job,
            created=T0 + n,
            workload=demo,
            framework="demo",
            mode=mode,
            precision=None,
            batch_size=None,
            samples_per_s=result.get("samples_per_s"),
            config=config,
            result=result,
            kind="demo",
        )
    )


def demo_db(path: Path) -> Path:
    store = Store(path)
    snake = build_demo_result(
        "snake",
        "Snake by reinforcement learning",
        SNAKE,
        summary=[("Best score", 31), ("Final mean score", 14.2)],
        series=[
            ("mean score", "t_s", "score", [(p["t_s"], p["mean_score"]) for p in SNAKE["curve"]])
        ],
    )
    motion = build_demo_result(
        "motion",
        "Talking-head motion transfer",
        MOTION,
        summary=[("Frames/s (device, batch 1)", 410.2), ("L1, model", 0.031)],
        series=[("training loss", "step", "loss", [(i, 10.0 / (i + 1)) for i in range(50)])],
    )
    _add(store, 0, "snake", "ppo", snake)
    _add(store, 1, "motion", "train", motion)
    return path


def test_demo_table_has_each_demos_columns(tmp_path: Path) -> None:
    rows = demo_results(demo_db(tmp_path / "d.db"))
    assert [r.demo for r in rows] == ["snake", "motion"]
    md = render(rows, "md")
    snake_table, motion_table = md.split("\n\n")
    assert "| Beat 8 s |" in snake_table and "FPS" not in snake_table
    assert "| FPS | Loop FPS | L1 | L1 affine | L1 source |" in motion_table
    assert "| motion | train | NVIDIA H200 |" in motion_table and "| 410.20 |" in motion_table
    table = list(csv.DictReader(io.StringIO(render(rows, "csv"))))
    assert table[0]["Best"] == "31" and table[0]["FPS"] == ""
    assert table[1]["L1"] == "0.031" and table[1]["L1 affine"] == "0.064"
    data = json.loads(render(rows, "json"))["demo_results"]
    assert data[0]["curve"] and data[1]["figures"]["Loop FPS"] == 95.0


def test_report_renders_demo_rows(tmp_path: Path) -> None:
    out = tmp_path / "report"
    text = write_report(out, db=demo_db(tmp_path / "d.db")).markdown.read_text()
    demos = text.split("## The demos", 1)[1]
    assert "| Beat 8 s |" in demos and "| FPS |" in demos  # the demo table first
    assert "### Snake by reinforcement learning (run 1)" in demos and "| Best score | 31 |" in demos
    assert "### Talking-head motion transfer (run 2)" in demos
    assert "| model | 0.031 | 1.4 |" in demos and "| affine | 0.064 | 3.2 |" in demos
    figures = sorted(p.name for p in (out / "figures" / "demos").iterdir())
    assert figures == ["demo-1-0.png", "demo-2-0.png"]  # snake's learning curve, motion's loss
    assert "![mean score](figures/demos/demo-1-0.png)" in demos
    assert (out / "report.html").is_file()


TRACKING = {
    "frames": 300,
    "tracker": "deepsort",
    "results": "/data/generated-0.txt",
    "fps": {"detector": 111.0, "embedder": 194.0, "tracker": 522.0, "end_to_end": 62.0},
    "metrics": {"HOTA": 0.585, "MOTA": 0.78, "IDF1": 0.671, "IDSW": 40},
}


def test_demo_results_are_tables_of_figures_never_python_objects(tmp_path: Path) -> None:
    """Tracking's per-stage frames/s (a dict) reads as its end-to-end figure; the terminal view is
    a table per demo fitted to 80 columns."""
    from typer.testing import CliRunner

    from zbench.cli import app

    db = demo_db(tmp_path / "d.db")
    tracking = build_demo_result("tracking", "Multi-object tracking", TRACKING)
    _add(Store(db), 2, "tracking", "deepsort", tracking)
    md = render(demo_results(db), "md")
    assert "{" not in md and "| deepsort | NVIDIA H200 |" in md
    assert "| 300 | 62.00 | 522.00 | 0.585 | 0.78 | 0.671 |" in md
    out = CliRunner().invoke(app, ["demo", "results", "--db", str(db)], env={"COLUMNS": "80"})
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert "Multi-object tracking" in lines and "{" not in out.output
    assert "|" not in out.output and max(len(line) for line in lines) <= 80
    assert any(line.split()[:3] == ["3", "tracking", "deepsort"] for line in lines)


def test_a_column_of_n_a_says_why_under_the_table(tmp_path: Path) -> None:
    """A tracking run on a machine without TrackEval printed HOTA, MOTA and IDF1 as n/a and no
    reason; the reason the result holds is now a line under the table (grouped by runs), in the
    terminal, in Markdown and in the JSON; a scored run adds none."""
    from typer.testing import CliRunner

    from zbench.cli import app

    db = demo_db(tmp_path / "d.db")
    why = "not scored: TrackEval is missing: pip install --no-deps trackeval"
    unscored = {k: v for k, v in TRACKING.items() if k != "metrics"} | {"metrics_note": why}
    for n, result in enumerate((TRACKING, unscored, unscored), start=2):
        _add(Store(db), n, "tracking", "deepsort", build_demo_result("tracking", "T", result))
    rows = demo_results(db)
    line = f"HOTA, MOTA, IDF1 of runs 4, 5: {why}"
    md = render(rows, "md")
    assert md.endswith(f"| n/a | n/a | n/a |\n\n{line}\n"), md
    assert [r.notes for r in rows[2:]] == [{}, {"HOTA, MOTA, IDF1": why}, {"HOTA, MOTA, IDF1": why}]
    assert json.loads(render(rows, "json"))["demo_results"][3]["notes"] == rows[3].notes
    out = CliRunner().invoke(app, ["demo", "results", "--db", str(db)], env={"COLUMNS": "200"})
    assert out.exit_code == 0 and out.output.splitlines()[-1] == line, out.output
    one = CliRunner().invoke(
        app, ["demo", "results", "--run", "4", "--db", str(db)], env={"COLUMNS": "200"}
    )
    assert one.output.splitlines()[-1] == f"HOTA, MOTA, IDF1 of run 4: {why}", one.output
    scored = CliRunner().invoke(app, ["demo", "results", "--run", "3", "--db", str(db)])
    assert "HOTA, MOTA, IDF1 of" not in scored.output


def test_an_empty_demo_export_is_one_line_exit_1_and_writes_nothing(tmp_path: Path) -> None:
    """`demo results -f csv` with no demo run printed a header alone and exit 0, as if it were an
    export of runs; `zbench export` says why there is nothing, exit 1. The terminal's table of no
    runs stays a line and exit 0, as `zbench results` says it."""
    from typer.testing import CliRunner

    from zbench.cli import app

    cli = CliRunner(env={"COLUMNS": "200"})
    empty = tmp_path / "empty.db"
    Store(empty)
    db = str(demo_db(tmp_path / "d.db"))
    for fmt in ("csv", "md", "json"):
        got = cli.invoke(app, ["demo", "results", "-f", fmt, "--db", str(empty)])
        assert (got.exit_code, got.stdout) == (1, ""), got.output
        assert got.output == (
            "zbench: demo results: no demo results to export: run a demo first (`zbench demo "
            "snake`)\n"
        )
        got = cli.invoke(app, ["demo", "results", "-f", fmt, "--workload", "tracking", "--db", db])
        assert (got.exit_code, got.stdout) == (1, ""), got.output
        assert got.output == (
            "zbench: demo results: no runs match (workload tracking): nothing to export\n"
        )
    table = cli.invoke(app, ["demo", "results", "--db", str(empty)])
    assert (
        table.exit_code == 0 and table.output == "No demo results yet. Run `zbench demo snake`.\n"
    )
    bad = cli.invoke(app, ["demo", "results", "-f", "xls", "--db", str(empty)])  # input first
    assert bad.exit_code == 2 and bad.output.startswith(
        "zbench: demo results: --format: must be one of md, csv, json, got 'xls'"
    )
    found = cli.invoke(app, ["demo", "results", "-f", "json", "--db", db])
    assert found.exit_code == 0 and found.stdout.endswith("}\n")  # a line, as export's JSON


def test_a_demo_runs_options_are_refused_by_demo_results(tmp_path: Path) -> None:
    """`demo results --detach` (or --timeout, --play, --human) printed the results as if the
    option meant nothing: one line, exit 2."""
    from typer.testing import CliRunner

    from zbench.cli import app

    db = str(demo_db(tmp_path / "d.db"))
    for args in (["--detach"], ["--timeout", "5"], ["--play", "x.pt"], ["--human"]):
        got = CliRunner().invoke(app, ["demo", "results", *args, "--db", db])
        assert got.exit_code == 2
        assert got.output == (
            f"zbench: demo results: {args[0]} is for a demo run, not `zbench demo results`\n"
        )


def test_demo_runs_that_differ_in_an_option_never_print_alike(tmp_path: Path) -> None:
    """Two snake runs, compile off and on, printed as two identical rows in every format (and
    the JSON dropped the options); each output now has a Compile column, the Run column that
    `--run` names, and the JSON the options. The mode's own options, the seed and the columns
    the table has already get none."""
    from typer.testing import CliRunner

    from zbench.cli import app

    db = demo_db(tmp_path / "d.db")
    store = Store(db)
    snake = build_demo_result("snake", "Snake by reinforcement learning", SNAKE)
    base = {"demo": "snake", "algo": "ppo", "board": 12, "seed": 0, "compile": False}
    for n, options in enumerate(({**base}, {**base, "compile": True, "seed": 7}), start=5):
        [job] = store.add_jobs(
            [job_row(workload="snake", framework="demo", mode="ppo", kind="demo", state="done")]
        )
        store.add_run(
            run_row(
                job_id=job,
                created=T0 + n,
                workload="snake",
                framework="demo",
                mode="ppo",
                precision=None,
                batch_size=None,
                config={**options, "kind": "demo", "mode": "ppo", "device": "cuda"},
                result=snake,
                kind="demo",
            )
        )
    rows = [r for r in demo_results(db) if r.run_id in (3, 4)]
    md = render(rows, "md")
    assert md.startswith("| Run | Demo | Mode | GPU | Min | Compile | Board |"), md
    assert "| 3 | snake | ppo |" in md and "| off |" in md and "| on |" in md
    assert "Seed" not in md and "Algo" not in md
    table = list(csv.DictReader(io.StringIO(render(rows, "csv"))))
    assert [(r["Run"], r["Compile"]) for r in table] == [("3", "off"), ("4", "on")]
    data = json.loads(render(rows, "json"))["demo_results"]
    assert [d["options"]["compile"] for d in data] == [False, True]
    out = CliRunner().invoke(
        app, ["demo", "results", "--run", "3", "--run", "4", "--db", str(db)], env={"COLUMNS": "80"}
    )
    lines = out.output.splitlines()
    snake_rows = [line.split() for line in lines if line.startswith("snake ")]
    assert [words[4] for words in snake_rows] == ["off", "on"], out.output  # after "NVIDIA H200"


def test_an_empty_table_says_where_the_stored_runs_are(tmp_path: Path) -> None:
    """After demos only, `zbench results` said "No results yet" as if nothing were stored, and
    `demo results` said the same of a store of benchmark runs."""
    from typer.testing import CliRunner

    from zbench.cli import app

    cli = CliRunner(env={"COLUMNS": "200"})
    demos = str(demo_db(tmp_path / "d.db"))
    got = cli.invoke(app, ["results", "--db", demos])
    assert got.exit_code == 0
    assert got.output == ("No benchmark results yet. 2 demo runs are in `zbench demo results`.\n")
    benchmarks = tmp_path / "b.db"
    Store(benchmarks).add_run(run_row())
    got = cli.invoke(app, ["demo", "results", "--db", str(benchmarks)])
    assert got.exit_code == 0
    assert got.output == (
        "No demo results yet. Run `zbench demo snake`. 1 benchmark run is in `zbench results`.\n"
    )
    filtered = cli.invoke(app, ["results", "--db", demos, "--mode", "infer"])
    assert "demo runs are in" not in filtered.output  # a filter says which filter matched nothing
    # export and plot said "run a suite first" of a store holding demo runs.
    for verb, argv in (("export", ["export"]), ("plot", ["plot", "-o", str(tmp_path / "c")])):
        got = cli.invoke(app, [*argv, "--db", demos])
        assert got.exit_code == 1
        assert got.output == (
            f"zbench: {verb}: no benchmark results to {verb}; 2 demo runs are in "
            "`zbench demo results`.\n"
        )


def test_a_demo_figure_not_measured_reads_n_a_as_in_the_benchmark_tables() -> None:
    """Demo tables wrote a missing figure as "-" where every benchmark table writes "n/a"."""
    from zbench.results.demos import cell
    from zbench.results.format import NA_TEXT, num

    assert cell(None) == cell({}) == cell([]) == NA_TEXT == num(None, ".1f")
    assert cell({"detector": None, "tracker": 2.5}) == f"detector {NA_TEXT}, tracker 2.50"


def test_the_min_column_is_the_training_budget_not_a_tracking_runs_wall_clock() -> None:
    """A tracking run asked for 0.4 minutes of training read "0.08" in the Min column: its
    ``wall_s`` is the tracking's. Min is the training's minutes: Snake's wall clock (the whole
    run trains), the minutes asked for the others."""
    from types import SimpleNamespace

    from zbench.results.demos import from_result_rows

    def row(run_id: int, demo: str, result: dict, config: dict) -> SimpleNamespace:
        return SimpleNamespace(
            run_id=run_id,
            job_id=run_id,
            created=T0,
            workload=demo,
            mode="m",
            gpu_name="NVIDIA H100 80GB HBM3",
            result=result,
            config=config,
        )

    rows = from_result_rows(
        [
            row(1, "tracking", {**TRACKING, "wall_s": 5.0}, {"minutes": 0.4}),
            row(2, "snake", SNAKE, {"minutes": 6.0}),
            row(3, "motion", MOTION, {"minutes": 4.0}),
        ]
    )
    assert [r.minutes for r in rows] == [0.4, 5.0, 4.0]


def test_demo_results_json_is_the_json_export_as_for_zbench_results(tmp_path: Path) -> None:
    """`zbench results --json` exists; `zbench demo results --json` was "No such option". It is
    `-f json`, and refuses another -f in one line, and a demo run refuses it as it does -f."""
    from typer.testing import CliRunner

    from zbench.cli import app

    cli = CliRunner(env={"COLUMNS": "200"})
    db = str(demo_db(tmp_path / "d.db"))
    by_json = cli.invoke(app, ["demo", "results", "--json", "--db", db])
    by_format = cli.invoke(app, ["demo", "results", "-f", "json", "--db", db])
    assert by_json.exit_code == 0 and by_json.stdout == by_format.stdout
    assert json.loads(by_json.stdout)["demo_results"]
    both = cli.invoke(app, ["demo", "results", "--json", "-f", "csv", "--db", db])
    assert (both.exit_code, both.output) == (
        2,
        "zbench: demo results: --json and --format csv ask for two formats: give one\n",
    )
    for flag in ("--json", "--wide"):
        run = cli.invoke(app, ["demo", "snake", flag, "--device", "cpu"])
        assert (run.exit_code, run.output) == (
            2,
            f"zbench: demo snake: {flag} is for `zbench demo results`, not a demo run\n",
        )
