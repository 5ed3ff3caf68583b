"""`zbench jobs`: a demo's --tag reaches its job and shows as run tags do; the speed column says
what each speed counts; a job's qualifiers read in the results table's order."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.rows import SNAKE_ON_BETA, fleet_row, job_row, run_config
from zbench.cli import app
from zbench.jobs import liveness
from zbench.store import Store

CLI = CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"})


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private data directory, and no supervisor: the jobs stay as stored."""
    monkeypatch.setenv("ZBENCH_HOME", str(tmp_path))
    monkeypatch.delenv("ZBENCH_DB", raising=False)
    monkeypatch.setattr(liveness, "ensure_supervisor", lambda db: None)
    return tmp_path


def _jobs(home: Path, *rows: dict[str, Any]) -> list[str]:
    now = time.time()
    Store(home / "zbench.db").add_jobs(
        [{"state": "done", "created": now, "ended": now, **r} for r in rows]
    )
    out = CLI.invoke(app, ["jobs", "--all"])
    assert out.exit_code == 0, out.output
    return out.output.splitlines()


def _demo(name: str, mode: str, rate: float, **fields: Any) -> dict[str, Any]:
    config = {"demo": name, "kind": "demo", "workload": name, "framework": "demo", "mode": mode}
    row = {"framework": "demo", "mode": mode, "kind": "demo", "samples_per_s": rate}
    return job_row(workload=name, config=config, **row, **fields)


def test_zbench_demo_takes_a_tag_and_its_job_shows_it_as_a_run_does(home: Path) -> None:
    out = CLI.invoke(
        app, ["demo", "snake", "--device", "cpu", "--minutes", "1", "--tag", "nightly", "--detach"]
    )
    assert out.exit_code == 0, out.output  # was 2: "No such option: --tag"
    [job] = json.loads(CLI.invoke(app, ["jobs", "--json"]).output)
    assert (job["workload"], job["tag"]) == ("snake", "nightly")
    header, row = CLI.invoke(app, ["jobs"]).output.splitlines()[:2]
    assert "Tag" in header.split() and "nightly" in row.split()
    # `demo results --tag` is still the filter of `zbench results`.
    found = CLI.invoke(app, ["demo", "results", "--tag", "nightly"])
    assert found.exit_code == 0 and "No runs match (tag nightly)" in found.output, found.output
    blank = CLI.invoke(app, ["demo", "snake", "--device", "cpu", "--tag", " ", "--detach"])
    assert blank.exit_code == 2 and "a tag needs a name" in blank.output


def test_a_tag_column_shows_only_when_a_job_has_a_tag(home: Path) -> None:
    lines = _jobs(home, job_row(config=run_config()))
    assert "Tag" not in lines[0].split()
    lines = _jobs(home, job_row(config=run_config(), tag="bios-2"))
    assert lines[2][lines[0].index("Tag") :].startswith("bios-2")  # under its title
    at = lines[0].index("Tag")
    assert lines[1][at : at + 6].strip() == ""  # the first job has none


def test_speeds_of_unlike_units_each_say_their_unit(home: Path) -> None:
    """A demo's board-steps/s and frames/s were listed under "Samples/s" with the benchmarks'."""
    lines = _jobs(
        home,
        job_row(config=run_config(), samples_per_s=100.0),
        _demo("snake", "ppo", 5000.0),
        _demo("motion", "animate", 12.5),
    )
    assert "Rate" in lines[0].split() and "Samples/s" not in lines[0]
    assert "100.0 samples/s" in lines[1]
    assert "5,000.0 board-steps/s" in lines[2]
    assert "12.5 frames/s" in lines[3]


def test_speeds_of_one_unit_are_titled_by_it(home: Path) -> None:
    lines = _jobs(home, _demo("motion", "animate", 12.5), _demo("motion", "train", 30.0))
    assert "Frames/s" in lines[0].split() and "frames/s" not in "\n".join(lines[1:])
    assert "Samples/s" not in lines[0]


def test_a_jobs_qualifiers_read_in_the_results_tables_order(home: Path) -> None:
    """The results table reads GPUs, GPU, Precision, Batch/GPU, then the setup columns it adds
    (Compile, CPU processes, ...); a job listed "bf16 (batch per GPU 8, gpus 2, CPU processes 2,
    compile on)"."""
    fields = {"precision": "bf16", "device": "cpu"}
    lines = _jobs(
        home,
        job_row(precision="bf16", config=run_config(**fields, gpus=2, compile=True)),
        job_row(precision="bf16", config=run_config(**fields, batch_size=16)),
        job_row(config=run_config(workload="vgg16"), workload="vgg16", precision="fp32"),
    )
    assert (
        "resnet50 torch train (gpus 2, bf16, batch per GPU 8, compile on, CPU processes 2)"
        in lines[1]
    )
    assert (
        "resnet50 torch train (gpus 1, bf16, batch per GPU 16, compile default, CPU processes 1)"
        in lines[2]
    )
    assert "vgg16 torch train (fp32)" in lines[3]


def test_every_hosts_jobs_fit_80_columns_and_say_their_units(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`zbench jobs --hosts` printed its own table: "Samples/s" over a demo's board-steps/s, and
    every column at full width however narrow the terminal (the reason ran past 80 columns)."""
    from zbench.cli import fleet
    from zbench.fleet.gather import Gathered

    rows = [
        fleet_row(
            "alpha",
            1,
            state="failed",
            started=time.time(),
            reason="the runner ran out of GPU memory at batch 512 " * 3,
        ),
        fleet_row("beta", 4, **SNAKE_ON_BETA, state="running", samples_per_s=5000.0),
    ]
    monkeypatch.setattr(fleet, "gather", lambda hosts, args: Gathered(rows=rows))
    out = CliRunner(env={"COLUMNS": "80"}).invoke(app, ["jobs", "--hosts", "alpha,beta"])
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    assert max(map(len, lines)) <= 80, out.stdout
    assert "Board-steps/s" in lines[0] and "5,000.0" in out.stdout  # one unit among the speeds
    assert "Reason" in lines[0] and "…" in out.stdout  # the reason cut to fit, said so
