"""`zbench suite quick` end to end on the CPU with the real runners, then its Markdown export."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from zbench.cli import app

pytestmark = [pytest.mark.slow, pytest.mark.torch, pytest.mark.timeout(900)]


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="PyTorch is not installed")
def test_quick_suite_on_cpu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobenv: Path) -> None:
    monkeypatch.delenv("ZBENCH_RUNNER_MODULE")  # the real runners
    monkeypatch.setenv("ZBENCH_SAMPLE_INTERVAL_S", "0.5")
    cli = CliRunner(env={"COLUMNS": "160", "NO_COLOR": "1"})
    result = cli.invoke(app, ["suite", "quick"])
    jobs = json.loads(cli.invoke(app, ["jobs", "--all", "--json"]).output)
    logs = {j["id"]: (j["state"], j["reason"]) for j in jobs}
    assert result.exit_code == 0, f"{result.output}\n{logs}"
    assert jobs and all(j["state"] == "done" for j in jobs), logs
    export = cli.invoke(app, ["export", "--format", "json"])
    assert export.exit_code == 0
    results = json.loads(export.output)["results"]
    assert len(results) == len(jobs)
    assert any(
        (r["workload"], r["framework"], r["mode"]) == ("resnet50", "torch", "train")
        for r in results
    )
    for r in results:
        assert r["samples_per_s"] > 0


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="PyTorch is not installed")
def test_a_suite_with_a_demo_prints_both_tables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobenv: Path
) -> None:
    """A suite file with a benchmark and a demo: both run, each in its own table afterwards."""
    monkeypatch.delenv("ZBENCH_RUNNER_MODULE")  # the real runners
    suite = tmp_path / "mixed.toml"
    suite.write_text(
        'name = "mixed"\n[defaults]\ndevice = "cpu"\ntimeout_s = 600\n'
        '[[job]]\nworkload = "resnet50"\nimage_size = 32\nbatch_size = 2\nsteps = 2\n'
        "warmup = 1\nrepeat = 1\nworkers = 0\n"
        '[[job]]\nworkload = "tracking"\nsmoke = true\n'
    )
    cli = CliRunner(env={"COLUMNS": "160", "NO_COLOR": "1"})
    result = cli.invoke(app, ["suite", str(suite)])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "tracking demo deepsort [done]" in out and "frames/s" in out
    assert "ResNet-50" in out and "Multi-object tracking" in out
    assert "Suite mixed: 2 done, 0 failed, 0 skipped." in out
    demos = json.loads(cli.invoke(app, ["demo", "results", "--format", "json"]).output)
    assert [d["demo"] for d in demos["demo_results"]] == ["tracking"], demos


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="PyTorch is not installed")
def test_a_cancelled_run_keeps_its_whole_windows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobenv: Path
) -> None:
    """`zbench cancel` in a later window: the windows measured before are a run, flagged."""
    import time

    from zbench.jobs import api

    monkeypatch.delenv("ZBENCH_RUNNER_MODULE")  # the real runner
    cli = CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"})
    argv = ["run", "resnet50", "--device", "cpu", "--batch-size", "2", "--image-size", "32"]
    argv += ["--steps", "5", "--warmup", "1", "--repeat", "1000", "--detach", "--json"]
    started = cli.invoke(app, argv)
    assert started.exit_code == 0, started.output
    job_id = json.loads(started.output)["job_id"]
    deadline = time.monotonic() + 300
    while (api.get_job(job_id, jobenv).step or 0) < 12:  # past two whole windows
        assert time.monotonic() < deadline, api.get_job(job_id, jobenv)
        time.sleep(0.2)
    assert cli.invoke(app, ["cancel", str(job_id)]).exit_code == 0
    while not (info := api.get_job(job_id, jobenv)).finished:
        assert time.monotonic() < deadline
        time.sleep(0.2)
    assert info.state == "cancelled" and info.run_id is not None, info
    assert "measured windows kept" in (info.reason or "")
    [row] = json.loads(cli.invoke(app, ["export", "--format", "json"]).output)["results"]
    assert row["samples_per_s"] > 0
    assert "stopped after" in cli.invoke(app, ["results"]).output
