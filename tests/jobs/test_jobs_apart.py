"""Jobs that read alike (same workload, framework, mode, precision) say what sets them apart, in
`zbench jobs`, its JSON and a suite's dry run (the TUI's jobs table: tests/tui/test_jobs_setup.py)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.rows import job_row, run_config
from zbench.cli import app
from zbench.jobs.apart import apart
from zbench.jobs.api import list_jobs
from zbench.store import Store


def _store(db: Path) -> None:
    now = time.time()
    configs = [
        run_config(batch_size=2, device="cpu"),
        run_config(batch_size=4, device="cpu"),
        run_config(batch_size=4, device="cpu"),  # a repeat of the one before: alike
        run_config(workload="vgg16", batch_size=4, device="cpu"),  # alone in its name
        run_config(batch_size=2, device="cpu", compile=True, preset="max"),
    ]
    Store(db).add_jobs(
        [
            job_row(
                workload=c["workload"],
                precision="fp32",
                config=c,
                state="done",
                created=now,
                ended=now,
            )
            for c in configs
        ]
    )


def test_apart_names_the_options_look_alikes_differ_in(tmp_path: Path) -> None:
    _store(tmp_path / "z.db")
    jobs = list_jobs(tmp_path / "z.db")
    assert apart(jobs) == {  # in the results table's order: Batch/GPU, then Compile, Preset
        1: "batch per GPU 2, compile default, preset default",
        2: "batch per GPU 4, compile default, preset default",
        3: "batch per GPU 4, compile default, preset default",
        5: "batch per GPU 2, compile on, preset max",
    }
    # For a cell that is cut (the TUI's): its nearest look-alike (1) differs in compile and
    # preset only, so they lead.
    assert apart(jobs, lead=True)[5] == "compile on, preset max, batch per GPU 2"


def test_zbench_jobs_shows_it_and_its_json_has_the_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ZBENCH_HOME", str(tmp_path))
    monkeypatch.delenv("ZBENCH_DB", raising=False)
    _store(tmp_path / "zbench.db")
    out = CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"}).invoke(app, ["jobs", "--all"])
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    # They read "resnet50 torch train fp32" all four: the same line but for the figures.
    assert (
        "resnet50 torch train (fp32, batch per GPU 2, compile default, preset default)" in lines[1]
    )
    assert "resnet50 torch train (fp32, batch per GPU 2, compile on, preset max)" in lines[5]
    assert lines[4].rstrip().endswith("vgg16 torch train (fp32)")
    listed = json.loads(CliRunner().invoke(app, ["jobs", "--all", "--json"]).output)
    assert [j["config"]["batch_size"] for j in listed] == [2, 4, 4, 4, 2]


def test_a_suite_dry_run_tells_its_look_alike_jobs_apart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ZBENCH_HOME", str(tmp_path))
    suite = tmp_path / "two.toml"
    suite.write_text(
        '[[job]]\nworkload = "resnet50"\nbatch_size = 2\ndevice = "cpu"\n'
        '[[job]]\nworkload = "resnet50"\nbatch_size = 4\ndevice = "cpu"\n'
        '[[job]]\nworkload = "vgg16"\ndevice = "cpu"\n'
    )
    out = CliRunner().invoke(app, ["suite", str(suite), "--dry-run"])
    assert out.exit_code == 0, out.output
    assert out.output.splitlines()[:3] == [  # the first two were the same line
        "would run: resnet50 torch train default on cpu (batch per GPU 2)",
        "would run: resnet50 torch train default on cpu (batch per GPU 4)",
        "would run: vgg16 torch train default on cpu",
    ]


def test_terse_setups_put_each_field_in_one_place_for_the_whole_group() -> None:
    """Without names, a value's place must mean one field on every row: (batch 2, 2 GPUs) and
    (batch 4, 2 GPUs) must not read as (4, 2) and (2, 4) led by each row's nearest difference."""
    from zbench.jobs.apart import differing

    def config(batch: int, gpus: int) -> dict[str, object]:
        return {"workload": "resnet50", "batch_size": batch, "gpus": gpus}

    items = [("r", config(b, g)) for b, g in ((2, 2), (2, 4), (4, 2), (8, 2))]
    terse = differing(items, terse="|")
    assert len(set(terse)) == 4, terse
    assert terse[0].split(" | ") == ["2", "2"]
    # One place, one field, in the results table's order: GPUs, then Batch/GPU.
    assert [t.split(" | ")[0] for t in terse] == ["2", "4", "2", "2"]
    assert [t.split(" | ")[1] for t in terse] == ["2", "2", "4", "8"]


def test_a_jobs_whole_setup_reads_in_the_results_order() -> None:
    """The job view's setup followed the stored configuration's order (steps before compile),
    where `zbench jobs` and the results table name the same fields in the results' order."""
    from tests.tui.fakes import FakeJob
    from zbench.jobs.apart import whole_setup
    from zbench.results.format import setup_order

    config = run_config(steps=50, compile=True, image_size=160, batch_size=128, channels_last=True)
    words = whole_setup(FakeJob(1, "resnet50", config=config))
    assert words == "batch per GPU 128, channels-last on, compile on, image size 160, steps 50"
    keys = ["steps", "compile", "image_size", "batch_size", "channels_last"]
    assert setup_order(keys) == ["batch_size", "channels_last", "compile", "image_size", "steps"]
