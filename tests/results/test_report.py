"""`zbench report`: the golden report from the recorded H200 database, selection and identity rules,
the pluggable demos section, `export --samples` round trips, and the CLI's errors."""

from __future__ import annotations

import csv
import importlib.util
import io
import json
import os
import re
from pathlib import Path
from types import ModuleType

import pytest
from typer.testing import CliRunner

from tests.rows import job_row, run_row
from zbench.cli import app
from zbench.results.api import Filters
from zbench.results.export import md_measured, md_results, render_md
from zbench.results.report import ReportError, write_report
from zbench.results.report_html import ReportImageError, render_html
from zbench.results.samples_export import KEYS, render_samples
from zbench.results.selection import select
from zbench.store import Store

FIXTURES = Path(__file__).parents[1] / "fixtures"
GOLDEN = Path(__file__).with_name("golden") / "report.md"
CLI = CliRunner(env={"COLUMNS": "200", "TERM": "dumb", "NO_COLOR": "1"})


def _builder() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_report_db", FIXTURES / "make_report_db.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _add_run(db: Path, tag: str | None = None, **over: object) -> int:
    store = Store(db)
    [job_id] = store.add_jobs([job_row(state="done", created=1_796_100_000.0, tag=tag)])
    env = {"torch": "2.11.0+cu130", "driver": "580.159.04", "host": "h200-box", "cuda": "13.0"}
    run = run_row(
        job_id=job_id, created=1_796_100_000.0, batch_size=128, samples_per_s=900.0, env=env
    )
    return store.add_run(run | over)


def test_the_dump_is_what_the_builder_writes() -> None:
    builder = _builder()
    assert json.loads(builder.DUMP.read_text()) == json.loads(json.dumps(builder.build()))


def test_golden_report(h200_db: Path, tmp_path: Path) -> None:
    report = write_report(tmp_path / "out", db=h200_db)
    text = report.markdown.read_text()
    if os.environ.get("ZBENCH_UPDATE_GOLDEN"):
        GOLDEN.write_text(text)
    assert text == GOLDEN.read_text(), "report.md changed; ZBENCH_UPDATE_GOLDEN=1 rewrites it"
    # Every image the Markdown names was written, and is a PNG.
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    assert len(images) == len(report.figures) >= 8
    for rel in images:
        assert (tmp_path / "out" / rel).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_report_sections_hold_the_stored_figures(h200_db: Path, tmp_path: Path) -> None:
    text = write_report(tmp_path, db=h200_db).markdown.read_text()
    for needle in (
        "## The machine",
        "| Host | h200-box |",
        "| GPU0 | X | NV18 |",
        "| matmul bf16 | 0 | 708.0 TFLOPS | 989.4 TFLOPS | 72% |",
        "### Experiment 1: ResNet-50",
        "| 3 | ResNet-50 | PyTorch | train | 2 | NVIDIA H200 | FP32 | 128 | 1,743.3 | n/a | n/a | n/a |",
        "1.97x, 99% efficiency",
        "## Over time",
        "figures/timeseries/run-3.png",
    ):
        assert needle in text
    assert "## The demos" not in text  # no demo runs in the dump
    # The BF16 preset-max run (batch 256) is never divided by the FP32 batch-128 run.
    assert "precision_speedup.png" not in text


def test_html_is_self_contained(h200_db: Path, tmp_path: Path) -> None:
    report = write_report(tmp_path, db=h200_db)
    html = report.html.read_text()
    assert html.count('src="data:image/png;base64,') == len(report.figures)
    assert not re.search(r"""(src|href)=["'](?!data:|#)""", html)  # nothing to fetch
    assert "<table>" in html and "<script" not in html


def test_html_refuses_an_image_outside_the_report(tmp_path: Path) -> None:
    with pytest.raises(ReportImageError, match="does not hold"):
        render_html("![x](../secret.png)\n", tmp_path, "t")


def test_filters_select_jobs_and_suite(h200_db: Path) -> None:
    assert [r.run_id for r in select(h200_db, Filters(job_ids=[1, 3])).rows] == [1, 3]
    review = select(h200_db, Filters(suite="review"))
    assert len(review.rows) == 9 and not review.probes  # the preset-max run is not in the suite
    # --suite-run: any job of the one `zbench suite review` call means all nine.
    assert {r.run_id for r in select(h200_db, Filters(suite_run=4)).rows} == set(range(1, 10))
    with pytest.raises(ValueError, match="no job 99"):  # a job that never existed: a typo
        select(h200_db, Filters(job_ids=[99]))
    with pytest.raises(ValueError, match="no job 99"):
        select(h200_db, Filters(suite_run=99))
    with pytest.raises(ValueError, match="suite 'nope'"):
        select(h200_db, Filters(suite="nope"))
    with pytest.raises(ValueError, match="date like"):
        select(h200_db, Filters(since="yesterday"))


def test_report_of_chosen_runs(h200_db: Path, tmp_path: Path) -> None:
    """What the TUI's results screen asks for: exactly the shown rows, by run id."""
    from zbench.tui.services import LocalServices

    text = LocalServices(h200_db).report([Filters().query(h200_db)[n] for n in (0, 2)], tmp_path)
    md = text.read_text()
    assert "Selection: runs 1, 3." in md and "1.97x, 99% efficiency" in md
    assert "| 2 | ResNet-50" not in md


def test_tag_filter(h200_db: Path) -> None:
    tagged = _add_run(h200_db, tag="after-bios-update")
    _add_run(h200_db, tag="other")
    rows = select(h200_db, Filters(tag="after-bios-update")).rows
    assert [r.run_id for r in rows] == [tagged]


def test_tables_warnings_and_machine_are_the_exports(h200_db: Path, tmp_path: Path) -> None:
    """The report prints the Markdown export's table rows, warnings, provenance and machine lines."""
    hot = _add_run(
        h200_db,
        samples_per_s=850.0,
        result={"window_rates": [800.0, 850.0, 900.0]},
        env={"torch": "2.11.0+cu130", "driver": "580.159.04", "cpu_model": "AMD EPYC 9654"},
    )
    text = write_report(tmp_path, db=h200_db).markdown.read_text()
    [row] = Filters(run_ids=[hot]).query(h200_db)
    export = render_md([row]).splitlines()
    warned = f"- ⚠ run {hot}: its windows' rates spread 11.8% (over 2%)"
    assert warned in export and warned in text
    # The report's table is the export's of the experiment's rows (their columns depend on how
    # the rows differ: here torch versions).
    group = [r for r in select(h200_db, Filters()).rows if r.workload == "resnet50"]
    [table_row] = [line for line in md_results(group) if line.startswith(f"| {hot} | ResNet-50")]
    assert "| spread |" in table_row and table_row in text
    [measured] = md_measured([row])[2:]
    assert "3 windows" not in measured and measured in text
    [machine] = [line for line in export if "cpu: AMD EPYC 9654" in line]
    assert machine in text


def test_unlike_runs_are_kept_apart(h200_db: Path, tmp_path: Path) -> None:
    # Another software stack: another setup (identity), never a bar beside the H200 box's.
    other = _add_run(
        h200_db,
        env={"torch": "2.9.0", "host": "other-box", "driver": "570.1"},
        created=1_796_300_000.0,
    )
    # The same slot with another batch: the newest setup takes the slot; the older ones stay in
    # the tables and say why they are not in the charts.
    _add_run(h200_db, batch_size=256, samples_per_s=950.0, created=1_796_200_000.0)
    text = write_report(tmp_path, db=h200_db).markdown.read_text()
    assert "other setups of the same model not drawn: runs 1, " in text
    assert "Run 1: a newer run of another setup" in text
    assert f"Run {other}: a newer run" not in text  # the newest: drawn
    # Every run is still in the tables, as in `zbench export`, each with its own setup.
    resnet = text.split("### Experiment 1: ResNet-50")[1].split("### Experiment 2")[0]
    rows = re.findall(
        r"^\| \d+ \| ResNet-50 \| PyTorch \| train \| 1 \| NVIDIA H200 \| FP32 \|.*$", resnet, re.M
    )
    assert len(rows) == 3
    assert len({row.split(" | ")[-3] for row in rows}) == 3  # three setups


def test_nothing_to_report(home: Path, tmp_path: Path) -> None:
    with pytest.raises(ReportError, match="no results to report: run a suite first"):
        write_report(tmp_path, db=home / "empty.db")


def test_demo_section_is_pluggable(h200_db: Path, tmp_path: Path) -> None:
    """No demo result kind exists yet: a made-up snake run exercises the generic renderer."""
    _add_run(
        h200_db,
        workload="snake",
        mode="train",
        samples_per_s=None,
        kind="demo",
        result={
            "demo": "snake",
            "summary": {"best score": 8, "steps": 1_000_000},
            "series": {
                "score per episode": {
                    "x": "episode",
                    "unit": "score",
                    "points": [[1, 0], [2, 3], [3, 8]],
                }
            },
        },
    )
    text = write_report(tmp_path, db=h200_db).markdown.read_text()
    assert "## The demos" in text and "| best score | 8 |" in text
    assert (tmp_path / "figures/demos").is_dir() and "figures/demos/demo-" in text
    assert "snake" not in text.split("## The demos")[0]  # not a benchmark table row


def _samples(db: Path, fmt: str) -> str:
    return render_samples(select(db, Filters(job_ids=[1, 3])).all, fmt, db)


def test_samples_export_round_trips(h200_db: Path) -> None:
    store = Store(h200_db)
    stored = {j: store.samples(j) for j in (1, 3)}
    lines = [json.loads(line) for line in _samples(h200_db, "jsonl").splitlines()]
    assert len(lines) == len(stored[1]) * 1 + len(stored[3]) * 2  # one row per sample and GPU
    for job, samples in stored.items():
        back = [r for r in lines if r["job_id"] == job]
        for s in samples:
            for g in s["gpus"]:
                row = next(r for r in back if r["t"] == s["t"] and r["gpu"] == g["i"])
                assert {k: row[k] for k in g if k != "i"} == {
                    k: v for k, v in g.items() if k != "i"
                }
                assert (row["phase"], row["cpu"], row["host_cpu"], row["ncpu"]) == (
                    s["phase"],
                    s["cpu"],
                    s["host_cpu"],
                    s["ncpu"],
                )
    rows = list(csv.DictReader(io.StringIO(_samples(h200_db, "csv"))))
    assert list(rows[0]) == list(KEYS) and len(rows) == len(lines)
    assert [float(r["util"]) for r in rows] == [r["util"] for r in lines]


def test_cli_report_and_samples(h200_db: Path, tmp_path: Path) -> None:
    out = tmp_path / "review"
    jobs = ["--job", "1", "--job", "2", "--job", "3"]
    result = CLI.invoke(app, ["report", "--db", str(h200_db), "-o", str(out), *jobs, "-q"])
    assert result.exit_code == 0, result.output
    assert (out / "report.md").exists() and (out / "report.html").exists()
    assert "Selection: jobs 1, 2, 3." in (out / "report.md").read_text()
    none = ["--job", "1", "--since", "2100-01-01"]  # filters that match no run
    result = CLI.invoke(app, ["report", "--db", str(h200_db), "-o", str(out), *none])
    assert result.exit_code == 1 and "nothing to report" in result.output
    result = CLI.invoke(app, ["report", "--db", str(h200_db), "-o", str(out), "--job", "99"])
    assert result.exit_code == 2 and "no job 99" in result.output
    dump = tmp_path / "s.csv"
    args = ["export", "--samples", "-f", "csv", "-o", str(dump), "--db", str(h200_db)]
    result = CLI.invoke(app, [*args, "--suite-run", "2", "--workload", "resnet50"])
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(dump.read_text())))
    assert {r["run_id"] for r in rows} == {"1", "2", "3"}  # the suite run's ResNet-50 runs
    assert rows[0]["thr"] == "sw_power_cap"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["report", "--job", "x"], "--job: must be a whole number, got 'x'"),
        (["report", "--since", "soon"], "date like"),
        (["report", "--suite", "nope"], "suite 'nope'"),
        (["report", "--suite-run", "99"], "no job 99"),
        (["export", "--samples", "-f", "xml"], "must be one of csv, jsonl, got 'xml'"),
        (["export", "--samples", "--since", "soon"], "date like"),
    ],
)
def test_cli_bad_input_exits_2(h200_db: Path, args: list[str], message: str) -> None:
    result = CLI.invoke(app, [*args, "--db", str(h200_db)])
    assert result.exit_code == 2
    assert message in result.output


def test_cli_report_on_an_empty_db_exits_1(home: Path, tmp_path: Path) -> None:
    Store(home / "e.db")
    result = CLI.invoke(app, ["report", "--db", str(home / "e.db"), "-o", str(tmp_path / "o")])
    assert result.exit_code == 1 and "no results to report: run a suite first" in result.output


def test_only_a_preset_other_than_the_review_is_noted() -> None:
    """Runs of the review suite (preset review) are the review's setup; a max run is noted."""
    import dataclasses

    from zbench.results.api import ResultRow
    from zbench.results.report_md import notes_for

    base = ResultRow("resnet50", "torch", "train", 1, "H200", "fp32", 128, 1000.0)
    review = dataclasses.replace(base, config={"preset": "review"})
    tuned = dataclasses.replace(base, config={"preset": "max", "compile": True})
    assert not [n for n in notes_for(review, True) if "preset" in n]
    assert [n for n in notes_for(tuned, True) if "preset" in n] == [
        "preset max (compile): not the review's default setup"
    ]
