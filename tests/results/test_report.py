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

from zbench.cli import app
from zbench.results.report import ReportError, write_report
from zbench.results.report_html import ReportImageError, render_html
from zbench.results.samples_export import KEYS, render_samples
from zbench.results.selection import RunFilter, SelectionError, select
from zbench.results.store import Store

FIXTURES = Path(__file__).parents[1] / "fixtures"
GOLDEN = Path(__file__).with_name("golden") / "report.md"
CLI = CliRunner(env={"COLUMNS": "200", "TERM": "dumb", "NO_COLOR": "1"})


def _builder() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_report_db", FIXTURES / "make_report_db.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _add_run(db: Path, **over: object) -> int:
    store = Store(db)
    run = {"job_id": None, "created": 1_796_100_000.0, "workload": "resnet50",
           "framework": "torch", "mode": "train", "precision": "fp32", "batch_size": 128,
           "gpus": 1, "gpu_name": "NVIDIA H200", "samples_per_s": 900.0, "config": {},
           "env": {"torch": "2.11.0+cu130", "driver": "580.159.04", "host": "h200-box",
                   "cuda": "13.0"}, "result": {}}  # fmt: skip
    run.update(over)
    return store.add_run(run)


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
    for needle in ("## The machine", "| Driver | 580.159.04 |", "| GPU0 | X | NV18 |",
                   "| matmul bf16 | 0 | 708.0 TFLOPS | 989.4 TFLOPS | 72% |",
                   "### Experiment 1: ResNet-50", "| PyTorch | train | 2 | FP32 | 128 | 1,743.3 |",
                   "1.97x, 99% efficiency", "## Over time", "figures/timeseries/run-3.png"):  # fmt: skip
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
    assert [r.run_id for r in select(h200_db, RunFilter(job_ids=(1, 3))).rows] == [1, 3]
    review = select(h200_db, RunFilter(suite="review"))
    assert len(review.rows) == 9 and not review.probes  # the preset-max run is not in the suite
    with pytest.raises(SelectionError, match="no job 99"):
        select(h200_db, RunFilter(job_ids=(99,)))
    with pytest.raises(SelectionError, match="suite 'nope'"):
        select(h200_db, RunFilter(suite="nope"))
    with pytest.raises(SelectionError, match="date like"):
        select(h200_db, RunFilter(since="yesterday"))


def test_tag_filter(h200_db: Path) -> None:
    tagged = _add_run(h200_db, config={"tag": "after-bios-update"})
    rows = select(h200_db, RunFilter(tag="after-bios-update")).rows
    assert [r.run_id for r in rows] == [tagged]


def test_unlike_runs_are_kept_apart(h200_db: Path, tmp_path: Path) -> None:
    # Another machine's software stack: its own charts, never a bar beside the H200 box's.
    _add_run(h200_db, env={"torch": "2.9.0", "host": "other-box", "driver": "570.1"})
    # The same slot with another batch: a newer run of another setup takes the slot; the older
    # runs stay in the tables and say why they are not in the charts.
    _add_run(h200_db, batch_size=256, samples_per_s=950.0, created=1_796_200_000.0)
    text = write_report(tmp_path, db=h200_db).markdown.read_text()
    assert "2 different machines or software stacks" in text
    assert "figures/charts-1/" in text and "figures/charts-2/" in text
    assert "Run 1: a newer run of this slot has another setup" in text
    # Every run is still in the tables, as in `zbench export`.
    resnet = text.split("### Experiment 1: ResNet-50")[1].split("### Experiment 2")[0]
    assert len(re.findall(r"^\| PyTorch \| train \| 1 \| FP32 \|", resnet, re.M)) == 3


def test_nothing_to_report(home: Path, tmp_path: Path) -> None:
    with pytest.raises(ReportError, match="nothing to report"):
        write_report(tmp_path, db=home / "empty.db")


def test_demo_section_is_pluggable(h200_db: Path, tmp_path: Path) -> None:
    """No demo result kind exists yet: a made-up snake run exercises the generic renderer."""
    _add_run(
        h200_db, workload="snake", mode="train", samples_per_s=None,
        result={"demo": "snake", "summary": {"best score": 8, "steps": 1_000_000},
                "series": {"score per episode": {"x": "episode", "unit": "score",
                                                 "points": [[1, 0], [2, 3], [3, 8]]}}},
    )  # fmt: skip
    text = write_report(tmp_path, db=h200_db).markdown.read_text()
    assert "## The demos" in text and "| best score | 8 |" in text
    assert (tmp_path / "figures/demos").is_dir() and "figures/demos/demo-" in text
    assert "snake" not in text.split("## The demos")[0]  # not a benchmark table row


def _samples(db: Path, fmt: str) -> str:
    return render_samples(select(db, RunFilter(job_ids=(1, 3))).all, fmt, db)


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
                assert (row["phase"], row["cpu"], row["host_cpu"]) == (
                    s["phase"], s["cpu"], s["host_cpu"])  # fmt: skip
    rows = list(csv.DictReader(io.StringIO(_samples(h200_db, "csv"))))
    assert list(rows[0]) == list(KEYS) and len(rows) == len(lines)
    assert [float(r["util"]) for r in rows] == [r["util"] for r in lines]


def test_cli_report_and_samples(h200_db: Path, tmp_path: Path) -> None:
    out = tmp_path / "review"
    result = CLI.invoke(
        app, ["report", "--db", str(h200_db), "-o", str(out), "--jobs", "1-3", "-q"]
    )
    assert result.exit_code == 0, result.output
    assert (out / "report.md").exists() and (out / "report.html").exists()
    assert "Selection: jobs 1, 2, 3." in (out / "report.md").read_text()
    dump = tmp_path / "s.csv"
    args = ["export", "--samples", "-f", "csv", "-o", str(dump), "--db", str(h200_db)]
    result = CLI.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert dump.read_text().startswith("run_id,job_id,")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["report", "--jobs", "1,x"], "--jobs wants ids"),
        (["report", "--since", "soon"], "date like"),
        (["report", "--suite", "nope"], "suite 'nope'"),
        (["export", "--samples", "-f", "xml"], "choose csv or jsonl"),
        (["export", "--suite", "review"], "need --samples"),
    ],
)
def test_cli_bad_input_exits_2(h200_db: Path, args: list[str], message: str) -> None:
    result = CLI.invoke(app, [*args, "--db", str(h200_db)])
    assert result.exit_code == 2
    assert message in result.output


def test_cli_report_on_an_empty_db_exits_1(home: Path, tmp_path: Path) -> None:
    result = CLI.invoke(app, ["report", "--db", str(home / "e.db"), "-o", str(tmp_path / "o")])
    assert result.exit_code == 1 and "nothing to report" in result.output
